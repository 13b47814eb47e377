"""A real MkDocs Material site behind nginx, crawled at the defaults and compared with its own sitemap.

MkDocs' directory URLs end with a slash in links, canonicals and sitemap alike, so here nothing
redirects: the crawl must list exactly the application's sitemap, orphans included, and warn of
no canonical loop.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from tests.conftest import CrawlResult, crawl
from tests.realapps.mkdocs import ORPHANS, mkdocs_build
from tests.realapps.static import (
    ServedSite,
    app_sitemap,
    differences,
    image_entries,
    listed_duplicates,
    report_count_mismatches,
    report_lines,
    served,
    warning_lines,
)

# The first session downloads one sdist and builds about 50 pages (seconds); later ones read the cache.
pytestmark = pytest.mark.timeout(600)

#: URLs we may list that MkDocs' sitemap leaves out, each a kind a reader would recognise.
EXTRA_KINDS = {
    # MkDocs writes 404.html as a normal page (no noindex) and nginx serves it by name with 200.
    "the not-found page, asked for by name": lambda url: url.endswith("/404.html"),
}


@pytest.fixture(scope="module")
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    build = mkdocs_build(request.config)
    with served(build, tmp_path_factory.mktemp("mkdocs")) as each:
        yield each


@pytest.fixture(scope="module")
def crawled(site: ServedSite, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    result = crawl(f"{site.origin}/", tmp_path_factory.mktemp("mkdocs-crawl") / "public")
    assert result.code == 0, result.process.stderr
    return result


def test_every_difference_from_its_own_sitemap_is_explained(site: ServedSite, crawled: CrawlResult) -> None:
    """Each page of MkDocs' sitemap is listed; nothing else is, but for named kinds."""
    app = app_sitemap(site.root)
    explained, unexplained = differences(app, crawled.listed, crawled.report, EXTRA_KINDS)
    assert not unexplained, (
        f"{len(unexplained)} unexplained differences (its sitemap {len(app)} URLs, we list "
        f"{len(crawled.listed)}):\n" + "\n".join(unexplained) + "\nexplained:\n" + "\n".join(explained)
    )


def test_orphans_are_found_through_its_sitemap(site: ServedSite, crawled: CrawlResult) -> None:
    """Pages in no nav and no link: only /sitemap.xml (robots.txt names none here) leads to them."""
    missing = [path for path in ORPHANS if site.origin + path not in set(crawled.listed)]
    asked = [path for path in site.crawler_paths() if path.startswith("/orphans/")]
    assert not missing, f"{len(missing)} of {len(ORPHANS)} orphan pages not listed: {missing}; requested: {asked}"


def test_no_page_is_listed_twice(crawled: CrawlResult) -> None:
    """No two listed URLs show the same title and main text."""
    groups = listed_duplicates(crawled.listed)
    assert not groups, f"{len(groups)} pages listed under several URLs:\n" + "\n".join(map(str, groups))


def test_no_page_is_lost_to_a_limit(crawled: CrawlResult) -> None:
    limited = [line for line in report_lines(crawled.out) if line["reason"] == "limit"]
    assert not limited, f"{len(limited)} URLs lost to a limit:\n" + "\n".join(map(str, limited))


def test_no_canonical_loop_is_reported(crawled: CrawlResult) -> None:
    """MkDocs' canonicals carry the slash nginx serves: a canonical-redirects-back warning here is false."""
    false = warning_lines(crawled.out, "canonical-redirects-back")
    assert not false, f"{len(false)} false canonical-redirects-back warnings:\n" + "\n".join(map(str, false))


def test_no_page_is_asked_for_without_its_slash(site: ServedSite, crawled: CrawlResult) -> None:
    """Every link is relative with the slash: a slash-less request would be the crawler inventing URLs."""
    redirected = [each.uri for each in site.server.requests() if each.status == 301]
    assert not redirected, f"{len(redirected)} requests answered 301: {sorted(set(redirected))[:20]}"


def test_no_image_is_listed_on_most_pages(site: ServedSite, crawled: CrawlResult) -> None:
    """Site-wide images (logo, icons) are left out of the image entries by default."""
    entries = image_entries(crawled.out)
    listed = len(crawled.listed)
    assert listed >= 20, f"only {listed} pages listed: the site-wide image rule starts at 20"
    per_image = Counter(image for images in entries.values() for image in set(images))
    site_wide = {image: count for image, count in per_image.items() if count > listed / 2}
    assert not site_wide, f"on more than half of the {listed} listed pages: {site_wide}"


def test_the_build_is_the_expected_one(site: ServedSite) -> None:
    """Guards the fixture: real pages, the orphans, and a sitemap that names the served origin."""
    app = app_sitemap(site.root)
    assert len(app) >= 40, f"only {len(app)} pages in its sitemap"
    assert {site.origin + path for path in ORPHANS} <= set(app)
    assert all(loc.startswith(f"{site.origin}/") and loc.endswith("/") for loc in app), app


def test_report_counts_what_the_sitemap_holds(crawled: CrawlResult) -> None:
    """A listed line's ``images`` and ``alternates`` bound what its sitemap entry holds (the report format)."""
    wrong = report_count_mismatches(crawled.out)
    assert not wrong, f"{len(wrong)} of {len(crawled.listed)} listed lines disagree with the sitemap:\n" + "\n".join(
        wrong
    )
