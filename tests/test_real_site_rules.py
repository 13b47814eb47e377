"""What real applications do that planted pages did not (SPEC S11), each on a small local
site that behaves as the application does: WordPress's feeds, self-links and plain permalinks,
a generator's trailing-slash canonicals behind nginx, a sitemap.xml that no robots.txt names,
a logo on every page, a sidebar of recent comments on every page."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tests.app_site import HTML, AppSite, Route, page
from tests.conftest import crawl, run_cli

XML = {"Content-Type": "application/xml"}
TEXT = {"Content-Type": "text/plain"}
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "i": "http://www.google.com/schemas/sitemap-image/1.1"}


def urlset(origin: str, paths: list[str]) -> str:
    entries = "".join(f"<url><loc>{origin}{path.lstrip('/')}</loc></url>" for path in paths)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'


def links(*paths: str) -> str:
    return "".join(f'<a href="{path}">{path}</a> ' for path in paths)


def warnings(out: Path) -> list[dict[str, Any]]:
    report = out.parent / f"{out.name}.crawl-report.jsonl"
    lines = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    return [line for line in lines if line["outcome"] == "warning"]


@pytest.fixture
def site() -> Iterator[AppSite]:
    server = AppSite({})
    with server:
        yield server


FEEDS = (
    '<link rel="alternate" type="application/rss+xml" href="/feed/">'
    '<link rel="alternate" type="application/rss+xml" href="/comments/feed/">'
    '<link rel="alternate" type="application/json" href="/wp-json/wp/v2/pages/2">'
    '<link rel="alternate" type="application/json+oembed" href="/wp-json/oembed/1.0/embed?url=x">'
    '<link rel="alternate" type="text/xml+oembed" href="/wp-json/oembed/1.0/embed?url=x&amp;format=xml">'
)


def test_feeds_are_never_fetched_and_an_unnamed_sitemap_xml_seeds_the_crawl(site: AppSite, tmp_path: Path) -> None:
    """No robots.txt (a Docusaurus or MkDocs build): /sitemap.xml leads to the orphan page; the
    five typed alternates of a WordPress head are never requested; /sitemap_index.xml's 404 is silent."""
    origin = site.url
    site.routes.update(
        {
            "/": (200, HTML, page("Home", "<main><p>Welcome to the site.</p>" + links("/a") + "</main>", FEEDS)),
            "/a": (200, HTML, page("A", "<main><p>Page A.</p></main>", FEEDS)),
            "/orphan": (200, HTML, page("Orphan", "<main><p>Only the sitemap knows me.</p></main>")),
            "/sitemap.xml": (200, XML, urlset(origin, ["/", "/orphan"])),
        }
    )
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert sorted(result.listed) == [origin, origin + "a", origin + "orphan"]
    assert not [path for path in site.log if "feed" in path or "wp-json" in path]
    assert "/sitemap_index.xml" in site.log  # asked for, 404: nothing said
    assert not [line for line in warnings(tmp_path / "out") if "sitemap_index" in line["url"]]
    assert f"Seeded from 1 sitemap: {origin}sitemap.xml" in result.process.stderr


def test_sitemaps_robots_txt_names_are_read_instead_and_said(site: AppSite, tmp_path: Path) -> None:
    """A WordPress robots.txt names its own wp-sitemap.xml: that one seeds, the conventional
    locations are not asked, and the summary says two sets would be advertised."""
    origin = site.url
    site.routes.update(
        {
            "/robots.txt": (200, TEXT, f"User-agent: *\nDisallow: /wp-admin/\nSitemap: {origin}wp-sitemap.xml\n"),
            "/": (200, HTML, page("Home", "<main><p>Welcome.</p></main>")),
            "/hello-world/": (200, HTML, page("Hello", "<main><p>The first post.</p></main>")),
            "/wp-sitemap.xml": (200, XML, urlset(origin, ["/hello-world/"])),
        }
    )
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert origin + "hello-world/" in result.listed
    assert "/sitemap.xml" not in site.log and "/sitemap_index.xml" not in site.log
    stderr = result.process.stderr
    assert f"robots.txt already names 1 other sitemap: {origin}wp-sitemap.xml" in stderr
    assert "search engines read both sets" in stderr


def test_a_canonical_that_redirects_back_makes_the_page_its_own_canonical(site: AppSite, tmp_path: Path) -> None:
    """Docusaurus behind nginx: /docs/intro -> 301 -> /docs/intro/, whose canonical is /docs/intro."""
    origin = site.url
    canonical = '<link rel="canonical" href="{}">'.format
    site.routes.update(
        {
            "/": (200, HTML, page("Home", "<main><p>Docs home.</p>" + links("/docs/intro", "/print") + "</main>")),
            "/docs/intro": (301, {"Location": "/docs/intro/", **HTML}, ""),
            "/docs/intro/": (200, HTML, page("Intro", "<main><p>Intro.</p></main>", canonical(origin + "docs/intro"))),
            # A real canonical to another page stays one.
            "/print": (200, HTML, page("Print", "<main><p>Intro, printable.</p></main>", canonical("/docs/intro/"))),
        }
    )
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert sorted(result.listed) == [origin, origin + "docs/intro/"]
    assert result.reason(origin + "docs/intro") == "redirect"
    assert result.reason(origin + "print") == "canonicalised"
    [warning] = [line for line in warnings(tmp_path / "out") if line["reason"] == "canonical-redirects-back"]
    assert warning["url"] == origin + "docs/intro/"
    assert "adds a trailing slash" in warning["detail"] and "trailing-slash option" in warning["detail"]
    assert "canonical-redirects-back" in result.process.stderr  # counted in the summary


POSTS = 30


def _plain_permalinks(origin: str) -> dict[str, Route]:
    """A blog at "/" only: posts ?p=, categories ?cat=, an endless calendar ?m=."""

    def calendar(target: str) -> tuple[int, dict[str, str], str]:
        month = int(target.rpartition("=")[2])
        return 200, HTML, page(f"Archive {month}", f"<main><p>Month {month}</p>{links(f'/?m={month + 1}')}</main>")

    def post(target: str) -> tuple[int, dict[str, str], str]:
        kind, _, number = target.partition("?")[2].partition("=")
        return 200, HTML, page(f"{kind} {number}", f"<main><p>The text of {kind} {number}.</p></main>")

    home = links(*[f"/?p={n}" for n in range(1, POSTS + 1)], *[f"/?cat={n}" for n in range(1, 4)], "/?m=1")
    return {
        "/robots.txt": (200, TEXT, f"User-agent: *\nSitemap: {origin}wp-sitemap.xml\n"),
        "/": (200, HTML, page("Blog", f"<main><p>Latest posts.</p>{home}</main>")),
        "/?*": lambda target: calendar(target) if "?m=" in target else post(target),
        "/wp-sitemap.xml": (200, XML, urlset(origin, [f"/?p={n}" for n in range(1, POSTS + 1)])),
    }


def test_a_site_whose_pages_live_in_the_query_keeps_them_while_a_trap_ends(site: AppSite, tmp_path: Path) -> None:
    origin = site.url
    site.routes.update(_plain_permalinks(origin))
    result = crawl(origin, tmp_path / "out", "--max-query-variants", "5")
    assert result.code == 0, result.process.stderr
    assert {origin + f"?p={n}" for n in range(1, POSTS + 1)} <= set(result.listed)  # the sitemap vouches for them
    assert {origin + f"?cat={n}" for n in range(1, 4)} <= set(result.listed)  # a kind of its own
    assert len([path for path in site.log if "?m=" in path]) == 5  # the calendar ends at the cap
    assert "Cut by a limit: 1 URL over 5 query strings per path and set of parameter names" in result.process.stderr
    assert "raise it with --max-query-variants" in result.process.stderr
    assert "page budget" not in result.process.stderr
    unlined = crawl(origin, tmp_path / "unlined", "--max-query-variants", "5", "--max-not-requested", "0")
    assert "over 5 query strings per path" in unlined.process.stderr  # counted by its own limit
    assert "page budget" not in unlined.process.stderr  # not a second time as the budget's


def _wordpress_like(origin: str) -> dict[str, Route]:
    """A home page answered at an old path too, and a post with a comment page showing the same
    comments: each copy links to itself (pagination, login redirect, reply links)."""
    excerpts = "<p>" + "An excerpt of the latest post, long enough to be content of its own. " * 3 + "</p>"

    def home(at: str) -> str:
        login = f"/wp-login.php?redirect_to={origin}{at.lstrip('/')}"
        own = f'<a href="{at}?paged=2">Older posts</a> <a href="{login}">Log in</a>'
        return page("My blog", f"<main>{excerpts}{links('/post/')}{own}</main>")

    def post(at: str) -> str:
        replies = f'<a href="{at}#respond">Reply</a> <a href="{at}?replytocom=7#respond">Reply to Ann</a>'
        body = "<p>" + "The whole text of the post, as every copy shows it. " * 3 + "</p><p>Ann: nice.</p>"
        menu = links("/post/comment-page-1/", "/old-path/")
        return page("A post", f"<main>{body}{replies}</main><nav>{menu}</nav>")

    return {
        "/": (200, HTML, home("/")),
        "/old-path/": (200, HTML, home("/old-path/")),
        "/post/": (200, HTML, post("/post/")),
        "/post/comment-page-1/": (200, HTML, post("/post/comment-page-1/")),
        "/wp-login.php?*": (200, HTML, page("Log in", "", '<meta name="robots" content="noindex">')),
    }


def test_copies_that_link_to_themselves_are_duplicates(site: AppSite, tmp_path: Path) -> None:
    origin = site.url
    site.routes.update(_wordpress_like(origin))
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert sorted(result.listed) == [origin, origin + "post/"]
    assert result.reason(origin + "old-path/") == "duplicate"
    assert result.report[origin + "old-path/"]["detail"] == f"same content as {origin}"
    assert result.reason(origin + "post/comment-page-1/") == "duplicate"


def test_an_image_on_most_pages_is_the_sites_and_not_listed(site: AppSite, tmp_path: Path) -> None:
    origin = site.url
    chrome = '<header><img src="/logo.png" alt="Logo"></header>'
    social = '<meta property="og:image" content="/card.png">'
    pages = {f"/p{n}": f"<main><p>Page {n}</p><img src='/photo-{n}.jpg'></main>" for n in range(24)}
    site.routes.update({path: (200, HTML, page(path, chrome + body, social)) for path, body in pages.items()})
    site.routes["/"] = (200, HTML, page("Home", chrome + "<main><p>Home</p>" + links(*pages) + "</main>", social))

    def images(out: Path) -> list[str]:
        shard = etree.parse(str(out / "sitemap-1.xml"))
        return [str(loc) for loc in shard.xpath("//i:image/i:loc/text()", namespaces=NS)]

    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    listed = images(tmp_path / "out")
    assert sorted(listed) == sorted(f"{origin}photo-{n}.jpg" for n in range(24))
    assert "Left out 1 site-wide image (logos, social cards)" in result.process.stderr
    assert "With 24 images" in result.process.stderr
    # An update that fetches nothing counts the set it publishes, carried URLs included.
    update = run_cli("update", origin, "--out", str(tmp_path / "out"), "-q", "--remove", f"{origin}p0")
    assert update.returncode == 0, update.stderr
    assert len(images(tmp_path / "out")) == 23
    assert "With 23 images" in update.stderr and "Left out 1 site-wide image" in update.stderr
    assert "24 URLs kept from the last run without a fetch" in update.stderr
    crawl(origin, tmp_path / "every", "--image-max-pages", "0")
    assert len(images(tmp_path / "every")) == 24 + 25


def _blog_with_sidebar(recent: str, post_text: str) -> dict[str, Route]:
    """Every page has a "Recent Comments" widget; only /post-1's own text may change."""
    sidebar = f'<aside class="widget-area"><h2>Recent Comments</h2><p>{recent}</p></aside>'
    pages = {f"/post-{n}": f"<p>Post {n}: {post_text if n == 1 else 'unchanged'}</p>" for n in range(1, 6)}
    routes: dict[str, Route] = {
        path: (200, HTML, page(path, f"<main>{body}</main>{sidebar}")) for path, body in pages.items()
    }
    routes["/"] = (200, HTML, page("Home", f"<main><p>Home</p>{links(*pages)}</main>{sidebar}"))
    return routes


def _changed(out: Path) -> list[str]:
    lines = [json.loads(line) for line in (out.parent / f"{out.name}.changes.jsonl").read_text().splitlines()]
    return sorted(line["url"] for line in lines if line["change"] == "changed")


def test_lastmod_moves_with_the_pages_own_content_not_the_sidebar(site: AppSite, tmp_path: Path) -> None:
    origin, out, state = site.url, tmp_path / "out", str(tmp_path / "state.sqlite")
    site.routes.update(_blog_with_sidebar("Ann on Post 2", "first words"))
    assert crawl(origin, out, "--state", state).code == 0
    site.routes.update(_blog_with_sidebar("Bob on Post 3", "first words"))  # a new comment: every sidebar
    second = crawl(origin, out, "--state", state)
    assert second.code == 0, second.process.stderr
    assert _changed(out) == []
    site.routes.update(_blog_with_sidebar("Bob on Post 3", "edited words"))
    third = crawl(origin, out, "--state", state)
    assert third.code == 0, third.process.stderr
    assert _changed(out) == [origin + "post-1"]


def test_a_store_of_older_digests_is_rebaselined_without_moving_lastmod(site: AppSite, tmp_path: Path) -> None:
    """Digests made another way (an upgrade) are no change: one run re-learns them, lastmod stays."""
    origin, out, state = site.url, tmp_path / "out", tmp_path / "state.sqlite"
    site.routes.update(_blog_with_sidebar("Ann", "first words"))
    assert crawl(origin, out, "--state", str(state)).code == 0
    with sqlite3.connect(state) as db:
        db.execute("UPDATE page SET fingerprint = 'made-another-way'")
    site.routes.update(_blog_with_sidebar("Ann", "edited words"))
    assert crawl(origin, out, "--state", str(state)).code == 0
    assert _changed(out) == []
    site.routes.update(_blog_with_sidebar("Ann", "edited again"))
    assert crawl(origin, out, "--state", str(state)).code == 0
    assert _changed(out) == [origin + "post-1"]


def test_a_robots_txt_that_is_an_html_page_is_said_and_read_as_none(site: AppSite, tmp_path: Path) -> None:
    origin = site.url
    site.routes.update(
        {
            "/robots.txt": (301, {"Location": "/", **HTML}, ""),
            "/": (200, HTML, page("Home", "<main><p>Disallow: /</p>" + links("/a") + "</main>")),
            "/a": (200, HTML, page("A", "<main><p>A</p></main>")),
        }
    )
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert sorted(result.listed) == [origin, origin + "a"]
    [warning] = [line for line in warnings(tmp_path / "out") if line["reason"] == "robots-not-text"]
    assert warning["url"] == origin + "robots.txt" and f"({origin})" in warning["detail"]  # where it led


def test_a_real_robots_txt_served_as_html_is_still_obeyed(site: AppSite, tmp_path: Path) -> None:
    origin = site.url
    site.routes.update(
        {
            "/robots.txt": (200, HTML, "User-agent: *\nDisallow: /private\n"),
            "/": (200, HTML, page("Home", "<main><p>Home</p>" + links("/private") + "</main>")),
            "/private": (200, HTML, page("Private", "<main><p>Secret</p></main>")),
        }
    )
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert "/private" not in site.log
    assert not [line for line in warnings(tmp_path / "out") if line["reason"] == "robots-not-text"]


def test_validate_warns_of_urls_outside_the_sitemaps_folder(site: AppSite) -> None:
    origin = site.url
    site.routes["/sitemap/pages.xml"] = (200, XML, urlset(origin, ["/sitemap/a", "/wiki/Main_Page"]))
    process = run_cli("validate", origin + "sitemap/pages.xml", "--origin", origin.rstrip("/"))
    assert "outside-folder" in process.stdout + process.stderr
    assert f"{origin}wiki/Main_Page is outside {origin}sitemap/" in process.stdout + process.stderr


def test_of_two_copies_the_simpler_url_is_kept_whichever_answers_first(site: AppSite, tmp_path: Path) -> None:
    """A "Recent Comments" widget links /post/comment-page-1/ on every page, before the post itself;
    the post answers last. It is still the post that is listed."""
    origin = site.url
    routes = _wordpress_like(origin)
    comment_page_served = threading.Event()
    post, comment_page = routes["/post/"], routes["/post/comment-page-1/"]
    assert isinstance(post, tuple) and isinstance(comment_page, tuple)

    answered: list[str] = []

    def slow_post(target: str) -> tuple[int, dict[str, str], str]:
        copy_first = comment_page_served.wait(20)  # the server answers the copy first: an event, bounded
        answered.append("post" if copy_first else "post, before the copy")
        return post

    def first_comment_page(target: str) -> tuple[int, dict[str, str], str]:
        answered.append("copy")
        comment_page_served.set()
        return comment_page

    widget = "<aside>" + links("/post/comment-page-1/", "/post/") + "</aside>"
    home = page("Home", "<main><p>" + "Welcome home, a page of its own. " * 4 + "</p></main>" + widget)
    site.routes.update({"/": (200, HTML, home), "/post/": slow_post, "/post/comment-page-1/": first_comment_page})
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert answered == ["copy", "post"]  # the case this test is about: the copy answered first
    assert origin + "post/" in result.listed
    assert result.reason(origin + "post/comment-page-1/") == "duplicate"


def test_the_audit_names_a_canonical_that_redirects_back(site: AppSite, tmp_path: Path) -> None:
    origin = site.url
    canonical = f'<link rel="canonical" href="{origin}docs/intro">'
    site.routes.update(
        {
            "/": (200, HTML, page("Home", "<main><p>Docs home.</p>" + links("/docs/intro") + "</main>")),
            "/docs/intro": (301, {"Location": "/docs/intro/", **HTML}, ""),
            "/docs/intro/": (200, HTML, page("Intro", "<main><p>Intro.</p></main>", canonical)),
        }
    )
    out = tmp_path / "audit"
    process = run_cli("audit", origin, "--out", str(out), "--delay", "0", "--production-url", "https://www.example.com")
    assert process.returncode == 0, process.stderr
    findings = json.loads((out / "report.json").read_text("utf-8"))["findings"]
    [found] = [finding for finding in findings if finding["kind"] == "canonical-redirects-back"]
    assert found["url"].endswith("/docs/intro/") and found["severity"] == "warning"
    assert "trailing slash" in found["detail"]


def _docs_with_menu(pages: list[str]) -> dict[str, Route]:
    """Material for MkDocs: the whole site's menu inside <main>, and a page's previous/next links."""
    menu = "<nav class='md-nav--primary'>" + links(*pages) + "</nav>"
    routes: dict[str, Route] = {}
    for number, path in enumerate(pages):
        following = pages[number + 1] if number + 1 < len(pages) else pages[0]
        footer = f"<nav class='md-footer'><a href='{following}'>Next: {following}</a></nav>"
        routes[path] = (200, HTML, page(path, f"<main>{menu}<article><p>Text of {path}</p></article>{footer}</main>"))
    return routes


def test_a_new_page_in_a_menu_inside_main_moves_no_other_lastmod(site: AppSite, tmp_path: Path) -> None:
    origin, out, state = site.url, tmp_path / "out", str(tmp_path / "state.sqlite")
    pages = ["/", "/a/", "/b/", "/c/", "/d/", "/e/"]
    site.routes.update(_docs_with_menu(pages))
    assert crawl(origin, out, "--state", state).code == 0
    site.routes.update(_docs_with_menu([*pages, "/faq/"]))  # the menu of every page gains a link
    second = crawl(origin, out, "--state", state)
    assert second.code == 0, second.process.stderr
    assert _changed(out) == [origin + "e/"]  # its "Next" link now names /faq/: the page's own navigation


def test_an_html_page_at_sitemap_xml_is_no_seed(site: AppSite, tmp_path: Path) -> None:
    """A catch-all route answers /sitemap.xml with the application's page: nothing to read, nothing said."""
    origin = site.url
    home = (200, HTML, page("Home", "<main><p>One page application shell.</p></main>"))
    site.routes.update({"/": home, "/sitemap.xml": home, "/sitemap_index.xml": home})
    result = crawl(origin, tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert "/sitemap.xml" in site.log
    assert "Seeded from" not in result.process.stderr
