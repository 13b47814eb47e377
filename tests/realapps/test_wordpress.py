"""A real WordPress 6.1 (Debian's package, MariaDB, php-fpm, nginx) crawled at the defaults, with pretty
and plain permalinks, compared with WordPress's own wp-sitemap.xml, and edited between two scheduled
runs to check that lastmod follows the page's own content, not the sidebar's (SPEC S3, S6, S11).

Every difference from WordPress's sitemap must be of a kind named here, or the test fails and prints it.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import pytest
from lxml import etree, html

from tests.conftest import CrawlResult, crawl
from tests.realapps.wordpress import WordPress, cache_dir, wordpress_site

# The first session installs the packages when it can (minutes); later ones start in about a second.
pytestmark = pytest.mark.timeout(900)

PRETTY = "/%postname%/"
PLAIN = ""
SITEMAP_NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
#: Why a URL of WordPress's sitemap may be missing from ours: each is a rule of SPEC S3 (a duplicate
#: only when the copy kept is listed).
MISSING_REASONS = {"redirect", "canonicalised", "duplicate"}


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


#: URLs we list that WordPress's sitemap leaves out, by kind: WordPress lists one URL per post, page,
#: term and author, never their other pages (the docs' recipe should say so).
EXTRA_KINDS: dict[str, dict[str, Callable[[str], bool]]] = {
    PRETTY: {
        "date archive": lambda url: (
            re.fullmatch(r"/\d{4}/(\d{2}/)?(\d{2}/)?(page/\d+/)?", urlsplit(url).path) is not None
        ),
        "paginated archive": lambda url: re.search(r"/page/\d+/$", urlsplit(url).path) is not None,
        "comment page": lambda url: re.search(r"/comment-page-\d+/$", urlsplit(url).path) is not None,
        "post part": lambda url: re.fullmatch(r"/[^/]+/\d+/", urlsplit(url).path) is not None,
    },
    PLAIN: {
        "date archive": lambda url: "m" in _query(url),
        "paginated archive": lambda url: "paged" in _query(url),
        "comment page": lambda url: "cpage" in _query(url),
        "post part": lambda url: "page" in _query(url) and ("p" in _query(url) or "page_id" in _query(url)),
        "attachment page": lambda url: "attachment_id" in _query(url),
    },
}


def normal(url: str) -> str:
    """The URL with its query parameters sorted and no fragment: how two spellings are compared."""
    parts = urlsplit(url)
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))


@dataclass
class Page:
    """What a search engine reads of one URL: status, type, robots, canonical, title and main text."""

    url: str
    status: int
    location: str | None
    content_type: str
    noindex: bool
    canonical: str | None
    title: str
    main: str


def read_page(site: WordPress, url: str) -> Page:
    status, headers, body = site.get(url)
    content_type = headers.get("content-type", "")
    noindex = "noindex" in headers.get("x-robots-tag", "")
    canonical, title, main = None, "", ""
    if "html" in content_type and body.strip():
        doc = html.fromstring(body)
        for meta in doc.xpath('//meta[@name="robots" or @name="googlebot"]/@content'):
            noindex = noindex or bool(re.search(r"\b(noindex|none)\b", meta))
        found = doc.xpath('//link[@rel="canonical"]/@href')
        canonical = urljoin(url, found[0]) if found else None
        title = " ".join(doc.findtext(".//title", "").split())
        for junk in doc.xpath("//script | //style | //noscript"):
            junk.drop_tree()
        areas = doc.xpath("//main") or doc.xpath('//*[@id="main"]') or doc.xpath("//article")
        main = " ".join(" ".join(area.text_content().split()) for area in areas)
    return Page(url, status, headers.get("location"), content_type, noindex, canonical, title, main)


def read_pages(site: WordPress, urls: list[str]) -> dict[str, Page]:
    with ThreadPoolExecutor(8) as pool:
        return dict(zip(urls, pool.map(lambda url: read_page(site, url), urls), strict=True))


def wp_sitemap(site: WordPress, structure: str) -> list[str]:
    """Every loc of WordPress's own sitemap and the sub-sitemaps it names. With plain permalinks it is
    ``/?sitemap=index`` (what its robots.txt names): ``/wp-sitemap.xml`` is then a redirect to
    ``/wp-sitemap.xml/``, the home page."""
    index = "wp-sitemap.xml" if structure else "?sitemap=index"
    status, _, body = site.get(site.origin + index)
    assert status == 200, f"{index} answered {status}"
    locs: list[str] = []
    for sub in etree.fromstring(body).xpath("//s:sitemap/s:loc/text()", namespaces=SITEMAP_NS):
        status, _, part = site.get(str(sub))
        assert status == 200, f"{sub} answered {status}"
        locs += [str(loc) for loc in etree.fromstring(part).xpath("//s:url/s:loc/text()", namespaces=SITEMAP_NS)]
    return locs


def lastmods(out: Path) -> dict[str, str]:
    """loc -> lastmod of every entry of the published shards (the set is validated by crawl())."""
    found: dict[str, str] = {}
    for shard in out.glob("sitemap-*.xml"):
        for entry in etree.parse(str(shard)).xpath("//s:url", namespaces=SITEMAP_NS):
            loc = entry.findtext("s:loc", namespaces=SITEMAP_NS)
            found[str(loc)] = str(entry.findtext("s:lastmod", "", namespaces=SITEMAP_NS))
    return found


def difference(old: str, new: str) -> str:
    """Where two texts part: what a reader needs to judge a missed change."""
    start = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return f"...{old[max(0, start - 60) : len(old) - end]!r} -> {new[max(0, start - 60) : len(new) - end]!r}"


@dataclass
class Crawled:
    """One crawl of the module's WordPress with one permalink structure, and what the site says."""

    structure: str
    result: CrawlResult
    pages: dict[str, Page]
    wp_locs: list[str]
    catalog: dict[str, Any]


@pytest.fixture(scope="module")
def wordpress(request: pytest.FixtureRequest) -> Iterator[WordPress]:
    with wordpress_site(cache_dir(request.config)) as site:
        yield site


@pytest.fixture(scope="module", params=[PRETTY, PLAIN], ids=["pretty", "plain"])
def crawled(request: pytest.FixtureRequest, wordpress: WordPress, tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    """One crawl at the defaults per permalink structure, and what the site itself says."""
    structure: str = request.param
    wordpress.set_permalinks(structure)
    began = time.monotonic()
    result = crawl(wordpress.origin, tmp_path_factory.mktemp("wordpress-crawl") / "public")
    seconds = time.monotonic() - began
    assert result.code == 0, result.process.stderr
    print(
        f"\n[{structure or 'plain'}] crawl {seconds:.1f} s, {len(result.report)} report lines, "
        f"{len(result.listed)} listed\n{result.process.stderr}"
    )
    return Crawled(
        structure,
        result,
        read_pages(wordpress, result.listed),
        wp_sitemap(wordpress, structure),
        wordpress.catalog(),
    )


def test_nothing_listed_breaks_a_rule(crawled: Crawled) -> None:
    """No draft, private post, redirect, error, noindex page, feed or other-canonical page is listed."""
    catalog = crawled.catalog
    hidden = {normal(catalog["draft"]), normal(catalog["private"])}
    wrong: list[str] = []
    for url, page in crawled.pages.items():
        if normal(url) in hidden or any(slug in url for slug in ("hidden-draft", "a-private-post", "preview=")):
            wrong.append(f"{url}: a draft or private post")
        if page.status != 200:
            wrong.append(f"{url}: status {page.status} {page.location or ''}")
        if "text/html" not in page.content_type:
            wrong.append(f"{url}: {page.content_type}")
        if page.noindex:
            wrong.append(f"{url}: noindex")
        if page.canonical and normal(page.canonical) != normal(url):
            wrong.append(f"{url}: canonical {page.canonical}")
        if re.search(r"/feed/|[?&]feed=|/wp-json/|rest_route=|/wp-login\.php|/wp-admin/|xmlrpc\.php", url):
            wrong.append(f"{url}: never a page")
    assert not wrong, "listed against the rules:\n" + "\n".join(wrong)


def test_wordpress_sitemap_is_listed_or_explained(crawled: Crawled) -> None:
    """Each URL of wp-sitemap.xml is listed or left out for a named reason; each URL we list that it
    leaves out is of a named kind."""
    listed = {normal(url) for url in crawled.result.listed}
    report = {normal(url): line for url, line in crawled.result.report.items()}
    wp = {normal(url) for url in crawled.wp_locs}
    unexplained: list[str] = []
    for url in sorted(wp - listed):
        line = report.get(url)
        reason = line["reason"] if line else "never met"
        kept = str(line.get("detail") or "").removeprefix("same content as ") if line else ""
        if reason not in MISSING_REASONS or (reason == "duplicate" and normal(kept) not in listed):
            unexplained.append(f"in wp-sitemap.xml, not listed: {url} ({reason}: {line and line.get('detail')})")
    pages = {normal(url): page for url, page in crawled.pages.items()}
    attachment = normal(crawled.catalog["attachment"])
    kinds: dict[str, list[str]] = defaultdict(list)
    for url in sorted(listed - wp):
        kind = "attachment page" if url == attachment else None
        kind = kind or next((name for name, test in EXTRA_KINDS[crawled.structure].items() if test(url)), None)
        if kind:
            kinds[kind].append(url)
        else:
            unexplained.append(f"listed, not in wp-sitemap.xml: {url} ({pages[url].title if url in pages else ''})")
    print(
        f"\n{len(listed)} listed, {len(wp)} in wp-sitemap.xml, {len(wp & listed)} in both; listed extra by kind: "
        + ", ".join(f"{kind} {len(urls)}" for kind, urls in sorted(kinds.items()))
    )
    assert not unexplained, f"{len(unexplained)} unexplained differences:\n" + "\n".join(unexplained)


def test_no_listed_duplicates(crawled: Crawled) -> None:
    """No two listed URLs show the same title and main content (one page, one URL)."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for url, page in crawled.pages.items():
        groups[(page.title, page.main)].append(url)
    copies = [urls for urls in groups.values() if len(urls) > 1]
    shown = "\n".join(
        f"{len(urls)} x {crawled.pages[urls[0]].title!r}: {' '.join(sorted(urls)[:6])}" for urls in copies
    )
    assert not copies, f"{sum(len(u) - 1 for u in copies)} listed duplicates in {len(copies)} groups:\n{shown}"


def test_no_wordpress_page_lost_to_a_limit(crawled: Crawled) -> None:
    """No page of WordPress's own sitemap is cut by a crawl limit (the query budget of plain permalinks)."""
    report = {normal(url): line for url, line in crawled.result.report.items()}
    lost = [
        f"{url}: {report[normal(url)].get('detail')}"
        for url in crawled.wp_locs
        if report.get(normal(url), {}).get("reason") == "limit"
    ]
    limits = [url for url, line in crawled.result.report.items() if line["reason"] == "limit"]
    print(f"\n{len(limits)} report lines with reason limit")
    assert not lost, "lost to a limit:\n" + "\n".join(lost)


def test_every_published_post_and_page_is_listed(crawled: Crawled) -> None:
    """Every published post and page is listed, by its permalink or the URL its canonical names, or
    by a copy of it that came first: with plain permalinks the "Recent Comments" widget links
    ``?p=ID&cpage=1`` from every page while ``?p=ID`` of an old post is found on a deep archive page,
    so the copy is listed and the post reported ``duplicate`` of it (the first listed is kept)."""
    listed = {normal(url) for url in crawled.result.listed}
    absent: list[str] = []
    for url in crawled.catalog["published"].values():
        if normal(url) in listed:
            continue
        line = crawled.result.report.get(url)
        kept = str(line.get("detail") or "").removeprefix("same content as ") if line else ""
        if line and line["reason"] == "duplicate" and normal(kept) in listed and kept.startswith(url + "&"):
            continue
        canonical = next((p.canonical for p in crawled.pages.values() if normal(p.url) == normal(url)), None)
        if canonical is None or normal(canonical) not in listed:
            absent.append(f"{url}: {line and line['reason']} {line and line.get('detail')}")
    assert not absent, f"{len(absent)} published posts or pages not listed:\n" + "\n".join(absent)


@pytest.fixture
def fresh_wordpress(request: pytest.FixtureRequest) -> Iterator[WordPress]:
    """A WordPress of its own (its own copy of the database): this test edits content."""
    with wordpress_site(cache_dir(request.config)) as site:
        yield site


def test_lastmod_moves_with_main_content_only(fresh_wordpress: WordPress, tmp_path: Path) -> None:
    """After a new post, an edited post and a new comment, lastmod moves on every page whose main
    content changed and on at most 5% of the others (the sidebar's recent posts and comments are on
    every page: a change there alone is not the page's)."""
    site = fresh_wordpress
    out, state = tmp_path / "public", tmp_path / "state.sqlite"
    published = site.catalog()["published"]
    targets = [published[str(site.seed["posts"][2])], published[str(site.seed["posts"][19])]]
    first = crawl(site.origin, out, "--state", str(state))
    assert first.code == 0, first.process.stderr
    before, lastmod_before = read_pages(site, sorted({*first.listed, *targets})), lastmods(out)

    edits = site.edit()
    assert [edits["edited"], edits["commented"]] == targets
    second = crawl(site.origin, out, "--state", str(state))
    assert second.code == 0, second.process.stderr
    after, lastmod_after = read_pages(site, sorted({*second.listed, *targets})), lastmods(out)

    for url in targets:
        assert before[url].main != after[url].main, f"the edit did not reach {url}"
    assert edits["new"] in second.listed, "the new post is not listed"
    dropped = sorted(set(first.listed) - set(second.listed))
    common = sorted(set(first.listed) & set(second.listed))
    changed = {url for url in common if (before[url].title, before[url].main) != (after[url].title, after[url].main)}
    bumped = {url for url in common if lastmod_before.get(url) != lastmod_after.get(url)}
    false_bumps, missed = sorted(bumped - changed), sorted(changed - bumped)
    print(
        f"\n{len(common)} pages in both runs, main content changed on {len(changed)}, lastmod moved on "
        f"{len(bumped)}: {len(false_bumps)} false bumps, {len(missed)} changes missed; "
        f"{len(dropped)} listed in the first run only: {' '.join(dropped)}"
    )
    problems = [
        f"main content changed, lastmod did not: {url}: {difference(before[url].main, after[url].main)}"
        for url in missed
    ]
    problems += [
        f"listed by the first run, not by the second (nothing was removed): {url}: "
        f"{second.report.get(url, {}).get('reason')} {second.report.get(url, {}).get('detail')}"
        for url in dropped
    ]
    if len(false_bumps) > 0.05 * len(common):
        problems.append(
            f"{len(false_bumps)} of {len(common)} pages got a new lastmod without a change of their main content "
            f"(at most 5% may): {' '.join(false_bumps[:40])}"
        )
    assert not problems, "\n".join(problems)


RECIPES = Path(__file__).parents[2] / "docs" / "guides" / "real-apps.md"


def recipe_excludes(section: str) -> list[str]:
    """The ``--exclude`` patterns of the first console block of *section* in the docs' recipes."""
    text = RECIPES.read_text("utf-8").split(f"## {section}\n", 1)[1]
    block = text.split("```console\n", 1)[1].split("```", 1)[0]
    return re.findall(r"--exclude '([^']+)'", block)


def test_the_docs_recipe_lists_what_wordpress_lists(fresh_wordpress: WordPress, tmp_path: Path) -> None:
    """docs/guides/real-apps.md: crawled with the WordPress recipe's --exclude lines, the set listed is
    WordPress's own sitemap, but for the URLs left out for a rule (a redirect, a duplicate kept) and
    the attachment page (the recipe says it has no pattern of its own)."""
    site = fresh_wordpress
    site.set_permalinks(PRETTY)
    excludes = recipe_excludes("WordPress")
    assert len(excludes) >= 4, excludes
    options = [part for pattern in excludes for part in ("--exclude", pattern)]
    result = crawl(site.origin, tmp_path / "public", *options)
    assert result.code == 0, result.process.stderr
    listed = {normal(url) for url in result.listed}
    report = {normal(url): line for url, line in result.report.items()}
    wp = {normal(url) for url in wp_sitemap(site, PRETTY)}
    assert listed - {normal(site.catalog()["attachment"])} <= wp, sorted(listed - wp)
    missing = {url: report[url]["reason"] if url in report else "never met" for url in wp - listed}
    assert set(missing.values()) <= MISSING_REASONS, missing
