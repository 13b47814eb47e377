"""A real Docusaurus 3 build behind nginx, crawled at the defaults and compared with its own sitemap.

Docusaurus with its default ``trailingSlash`` links and canonicalises ``/docs/intro`` but writes
``docs/intro/index.html``; nginx (like GitHub Pages) answers ``301 -> /docs/intro/``, whose
canonical is ``/docs/intro`` again. A search engine indexes ``/docs/intro/``: so must we (SPEC S11).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CrawlResult, crawl
from tests.realapps.docusaurus import ORPHANS, docusaurus_build
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

# The first session builds the site with npm (about 1-2 minutes); later ones read the cache.
pytestmark = pytest.mark.timeout(1200)

#: URLs we may list that Docusaurus's sitemap leaves out, each a kind a reader would recognise.
EXTRA_KINDS = {
    # Docusaurus writes 404.html as a normal page (no noindex) and nginx serves it by name with 200.
    "the not-found page, asked for by name": lambda url: url.endswith("/404.html"),
    # Only with a search plugin (the classic template has none); a results page of no content.
    "the search page": lambda url: url.rstrip("/").endswith("/search"),
}
#: The images on every page: the navbar logo (twice: light and dark) and the og:image social card.
SITE_WIDE_IMAGES = ("/img/logo.svg", "/img/docusaurus-social-card.jpg")


@pytest.fixture(scope="module")
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedSite]:
    build = docusaurus_build(request.config)
    with served(build, tmp_path_factory.mktemp("docusaurus")) as each:
        yield each


@pytest.fixture(scope="module")
def crawled(site: ServedSite, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    result = crawl(f"{site.origin}/", tmp_path_factory.mktemp("docusaurus-crawl") / "public")
    assert result.code == 0, result.process.stderr
    return result


def _path(url: str, site: ServedSite) -> str:
    return url.removeprefix(site.origin)


def test_every_difference_from_its_own_sitemap_is_explained(site: ServedSite, crawled: CrawlResult) -> None:
    """Each page of Docusaurus's sitemap is listed, or is a redirect whose target is; nothing else is added."""
    app = app_sitemap(site.root)
    explained, unexplained = differences(app, crawled.listed, crawled.report, EXTRA_KINDS)
    assert not unexplained, (
        f"{len(unexplained)} unexplained differences (its sitemap {len(app)} URLs, we list "
        f"{len(crawled.listed)}):\n" + "\n".join(unexplained) + "\nexplained:\n" + "\n".join(explained)
    )


def test_a_crawl_from_index_html_lists_the_same_site(
    site: ServedSite, crawled: CrawlResult, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``/index.html`` is the home page under a second name (its canonical is ``/``): never listed."""
    start = f"{site.origin}/index.html"
    again = crawl(start, tmp_path_factory.mktemp("docusaurus-index") / "public")
    assert again.code == 0, again.process.stderr
    assert start not in again.listed
    assert again.reason(start) in {"canonicalised", "duplicate"}, again.report[start]
    assert sorted(again.listed) == sorted(crawled.listed), set(again.listed) ^ set(crawled.listed)


def test_pages_whose_canonical_redirects_back_are_listed_with_a_warning(site: ServedSite, crawled: CrawlResult) -> None:
    """``/docs/intro`` (the canonical) is reported ``redirect``, ``/docs/intro/`` listed and warned about."""
    listed = set(crawled.listed)
    pages = [loc for loc in app_sitemap(site.root) if not loc.endswith("/")]
    assert len(pages) > 20, f"the build changed: only {len(pages)} slash-less URLs in its sitemap"
    lost = [loc for loc in pages if f"{loc}/" not in listed]
    not_redirect = {loc: crawled.report.get(loc, {}).get("reason") for loc in pages}
    not_redirect = {loc: reason for loc, reason in not_redirect.items() if reason != "redirect"}
    warned = {str(line["url"]).rstrip("/") for line in warning_lines(crawled.out, "canonical-redirects-back")}
    unwarned = [loc for loc in pages if loc not in warned]
    reasons = Counter(str(crawled.report.get(f"{loc}/", {}).get("reason")) for loc in lost)
    assert not lost, (
        f"lists {len(pages) - len(lost)} of {len(pages)} pages whose canonical redirects back; "
        f"the others' reasons: {dict(reasons)}:\n" + "\n".join(lost)
    )
    assert not not_redirect, f"canonical URLs not reported redirect: {not_redirect}"
    assert not unwarned, (
        f"{len(unwarned)} of {len(pages)} such pages have no canonical-redirects-back warning:\n" + "\n".join(unwarned)
    )


def test_orphans_are_found_through_its_sitemap(site: ServedSite, crawled: CrawlResult) -> None:
    """Docs in no sidebar and no link: only /sitemap.xml (robots.txt names none here) leads to them."""
    listed = set(crawled.listed)
    missing = [path for path in ORPHANS if f"{site.origin}{path}/" not in listed and site.origin + path not in listed]
    asked = [path for path in site.crawler_paths() if path.startswith("/docs/orphan-")]
    assert not missing, f"{len(missing)} of {len(ORPHANS)} orphan docs not listed: {missing}; requested: {asked}"


def test_no_page_is_listed_twice(site: ServedSite, crawled: CrawlResult) -> None:
    """No two listed URLs show the same title and main text (e.g. with and without the slash)."""
    groups = listed_duplicates(crawled.listed)
    assert not groups, f"{len(groups)} pages listed under several URLs:\n" + "\n".join(map(str, groups))


def test_no_page_is_lost_to_a_limit(crawled: CrawlResult) -> None:
    limited = [line for line in report_lines(crawled.out) if line["reason"] == "limit"]
    assert not limited, f"{len(limited)} URLs lost to a limit:\n" + "\n".join(map(str, limited))


def test_feeds_are_not_fetched(site: ServedSite, crawled: CrawlResult) -> None:
    """Every page has ``<link rel=alternate>`` to the RSS and Atom feeds: never listable, never fetched."""
    feeds = [path for path in site.crawler_paths() if path.endswith(("/rss.xml", "/atom.xml"))]
    assert not feeds, f"the crawler fetched {len(feeds)} feeds: {sorted(set(feeds))}"


def test_site_wide_images_are_left_out(site: ServedSite, crawled: CrawlResult) -> None:
    """The navbar logo and the og:image social card are on every page: not image entries of each."""
    entries = image_entries(crawled.out)
    listed = len(crawled.listed)
    assert listed >= 20, f"only {listed} pages listed: the site-wide image rule starts at 20"
    total = sum(len(images) for images in entries.values())
    per_image = Counter(image for images in entries.values() for image in set(images))
    site_wide = {_path(image, site): count for image, count in per_image.items() if count > listed / 2}
    named = {path: per_image.get(site.origin + path, 0) for path in SITE_WIDE_IMAGES}
    assert not site_wide and not any(named.values()), (
        f"of {total} image entries over {listed} listed pages, on more than half of the pages: {site_wide}; "
        f"the logo and social card on {named} pages"
    )


def test_the_build_is_the_expected_one(site: ServedSite) -> None:
    """Guards the fixture: pagination, orphans and the slash-less canonicals the other tests rely on."""
    app = {_path(loc, site) for loc in app_sitemap(site.root)}
    assert {"/blog/page/2", *ORPHANS} <= app, sorted(app)
    intro = (site.root / "docs" / "intro" / "index.html").read_text("utf-8")
    assert f"rel=canonical href={site.origin}/docs/intro " in intro or f'href="{site.origin}/docs/intro"' in intro
    assert Path(site.root / "docs" / "orphan-1" / "index.html").is_file()


def test_report_counts_what_the_sitemap_holds(crawled: CrawlResult) -> None:
    """A listed line's ``images`` and ``alternates`` bound what its sitemap entry holds (the report format)."""
    wrong = report_count_mismatches(crawled.out)
    assert not wrong, f"{len(wrong)} of {len(crawled.listed)} listed lines disagree with the sitemap:\n" + "\n".join(
        wrong
    )
