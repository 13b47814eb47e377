"""A crawl of several hosts (--subdomains, --host, --resolve): one sitemap set per host, each
host's robots.txt and Crawl-delay its own, what crosses hosts (canonicals, CDN images, an
hreflang cluster) judged across them, and a host out of scope never asked for anything.

The hosts are names on one server on 127.0.0.1, reached only through --resolve, so the crawl
never looks a name up; the server logs every request with its Host header and its own clock.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from lxml import etree

from tests.conftest import read_report, run_cli, sitemap_locs
from tests.hosts_site import Hit, HostsSite, Page, big, html, link, plain, resolve_options

XHTML = "{http://www.w3.org/1999/xhtml}link"
IMAGE = "{http://www.google.com/schemas/sitemap-image/1.1}loc"
LOC = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"
URL = "{http://www.sitemaps.org/schemas/sitemap/0.9}url"
WWW_DELAY, DE_DELAY = 0.4, 0.8  # the Crawl-delays of www and de


def alternates(pairs: list[tuple[str, str]]) -> str:
    return "".join(f'<link rel="alternate" hreflang="{tag}" href="{href}">' for tag, href in pairs)


EN, DE, FR = link("www.shop.test"), link("de.shop.test"), link("fr.shop.test")
TEXT = {"Content-Type": "text/plain"}
DENIED = {"WWW-Authenticate": 'Basic realm="admin"', "Content-Type": "text/html"}


def shop() -> dict[str, dict[str, Page]]:
    """www (Crawl-delay 0.4, a Disallow), an apex that redirects to it, a blog whose robots.txt
    is 404, de (Crawl-delay 0.8, its robots.txt names a sitemap on www), fr (its hreflang misses
    de: one broken return link), an admin host that answers 401, images on a CDN host, and a
    host of another site that www links to."""
    home = (
        '<a href="/a">a</a><a href="/b">b</a><a href="/private/x">p</a><a href="/dup">d</a>'
        f'<a href="{link("blog.shop.test")}">blog</a><a href="{link("www.other.test")}">other</a>'
        f'<a href="{link("admin.shop.test")}">admin</a><img src="{link("cdn.shop.test", "img/hero.jpg")}">'
    )
    sitemap_de = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{DE}</loc></url><url><loc>{link('de.shop.test', 'nur-sitemap')}</loc></url></urlset>"
    )
    return {
        "shop.test": {"/": (301, {"Location": EN}, "")},
        "www.shop.test": {
            "/robots.txt": (200, TEXT, f"User-agent: *\nCrawl-delay: {WWW_DELAY}\nDisallow: /private\n"),
            "/": html(home, alternates([("en", EN), ("de", DE), ("fr", FR)])),
            "/a": html(f'<a href="/">home</a> page a<img src="{link("cdn.shop.test", "img/a.jpg")}">'),
            "/b": html('<a href="/a">a</a> page b'),
            "/private/x": html("secret"),
            "/dup": html(
                "a copy of the first post", f'<link rel="canonical" href="{link("blog.shop.test", "post-1")}">'
            ),
            "/sitemap-de.xml": (200, {"Content-Type": "application/xml"}, sitemap_de),
        },
        "blog.shop.test": {
            "/": html('<a href="/post-1">1</a><a href="/post-2">2</a> the blog'),
            "/post-1": html('<a href="/post-3">3</a> first post'),
            "/post-2": html('<a href="/">home</a> second post'),
            "/post-3": html('<a href="/">home</a> third post'),
        },
        "de.shop.test": {
            "/robots.txt": (
                200,
                TEXT,
                f"User-agent: *\nCrawl-delay: {DE_DELAY}\nSitemap: {link('www.shop.test', 'sitemap-de.xml')}\n",
            ),
            "/": html(
                '<a href="/seite-1">1</a><a href="/seite-2">2</a>',
                alternates([("en", EN), ("de", DE), ("fr", FR)]),
                "de",
            ),
            "/seite-1": html("eins", lang="de"),
            "/seite-2": html("zwei", lang="de"),
            "/nur-sitemap": html("nur in der Sitemap", lang="de"),
        },
        "fr.shop.test": {"/": html("bonjour", alternates([("en", EN), ("fr", FR)]), "fr")},
        "admin.shop.test": dict.fromkeys(("/robots.txt", "/"), (401, DENIED, "no")),
        "www.other.test": {"/": html("another site")},
        "cdn.shop.test": {"/img/hero.jpg": (200, {"Content-Type": "image/jpeg"}, "jpeg")},
    }


LISTED = {
    "www.shop.test": ["/", "/a", "/b"],
    "blog.shop.test": ["/", "/post-1", "/post-2", "/post-3"],
    "de.shop.test": ["/", "/nur-sitemap", "/seite-1", "/seite-2"],
    "fr.shop.test": ["/"],
}


class Run:
    def __init__(self, site: HostsSite, out: Path, process: subprocess.CompletedProcess[str]):
        self.site, self.out, self.process = site, out, process
        self.report = read_report(out.parent / f"{out.name}.crawl-report.jsonl")

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.site.port}{path}"

    def entries(self, host: str) -> dict[str, etree._Element]:
        """loc -> <url> element of every file of *host*'s set."""
        found = {}
        for path in sorted((self.out / host).glob("sitemap-*.xml")):
            for url in etree.parse(str(path)).getroot().iter(URL):
                found[url.findtext(LOC)] = url
        return found


def crawl_hosts(site: HostsSite, out: Path, *options: str) -> Run:
    names = [*site.hosts]
    process = run_cli(
        "crawl", site.root("shop.test"), "--out", str(out), "-q", *resolve_options(names, site.port), *options
    )
    return Run(site, out, process)


@pytest.fixture(scope="module")
def shop_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    site = HostsSite(shop()).start()
    try:
        # Three requests in flight in all: a host held by its Crawl-delay must not take them all.
        yield crawl_hosts(
            site, tmp_path_factory.mktemp("hosts") / "out", "--subdomains", "--set", "CONCURRENT_REQUESTS=3"
        )
    finally:
        site.stop()


def test_each_host_gets_its_own_valid_set_with_exactly_its_pages(shop_run: Run) -> None:
    assert shop_run.process.returncode == 0, shop_run.process.stderr
    assert sorted(p.name for p in shop_run.out.iterdir()) == sorted(LISTED)
    for host, paths in LISTED.items():
        origin = shop_run.url(host, "")
        locs = sitemap_locs(shop_run.out / host, origin)  # validates every file, each loc on its origin
        assert sorted(locs) == [origin + path for path in paths], host
    printed = sorted(line for line in shop_run.process.stdout.splitlines() if line.startswith("Sitemap: "))
    assert printed == [f"Sitemap: {shop_run.url(host, '/sitemap.xml')}" for host in sorted(LISTED)]


def test_what_is_left_out_on_each_host_says_why(shop_run: Run) -> None:
    report = shop_run.report
    assert report[shop_run.url("shop.test")]["reason"] == "redirect"  # the apex, followed to www
    assert report[shop_run.url("admin.shop.test")]["status"] == 401
    assert report[shop_run.url("admin.shop.test")]["reason"] == "status"
    assert report[shop_run.url("www.shop.test", "/private/x")]["reason"] == "robots"
    assert report[shop_run.url("www.shop.test", "/dup")]["reason"] == "canonicalised"  # its target is on blog
    assert report[shop_run.url("www.other.test")]["reason"] == "out-of-scope"


def test_a_host_out_of_scope_and_a_disallowed_path_get_no_request(shop_run: Run) -> None:
    hosts = {hit.host for hit in shop_run.site.hits}
    assert {"www.shop.test", "blog.shop.test", "de.shop.test", "fr.shop.test", "admin.shop.test"} <= hosts
    assert shop_run.site.hits_of("www.other.test") == []  # pinned to the server too: it would have shown
    assert shop_run.site.hits_of("cdn.shop.test") == []  # images are listed, never fetched
    assert not [hit for hit in shop_run.site.hits_of("www.shop.test") if hit.path.startswith("/private")]


def _pages_after_robots(hits: list[Hit]) -> list[Hit]:
    """A host's requests from its robots.txt on (the Crawl-delay holds once robots.txt is read)."""
    first = next(i for i, hit in enumerate(hits) if hit.path == "/robots.txt")
    return hits[first:]


@pytest.mark.parametrize(("host", "delay"), [("www.shop.test", WWW_DELAY), ("de.shop.test", DE_DELAY)])
def test_each_host_keeps_its_own_crawl_delay(shop_run: Run, host: str, delay: float) -> None:
    """On the server's clock: no gap under half the delay (at most 5 % allowed, of so few gaps
    none), and the mean gap at least the delay."""
    hits = _pages_after_robots(shop_run.site.hits_of(host))
    gaps = [b.time - a.time for a, b in pairwise(hits)]
    assert len(gaps) >= 3, hits
    assert sum(gap < delay / 2 for gap in gaps) <= 0.05 * len(gaps), gaps
    assert statistics.mean(gaps) >= delay * 0.98, gaps  # 2 % for the server's own clock reading


def test_the_hosts_are_crawled_at_the_same_time(shop_run: Run) -> None:
    """de's pages are fetched while www's are: one host's Crawl-delay holds no other back."""
    www = _pages_after_robots(shop_run.site.hits_of("www.shop.test"))
    de = _pages_after_robots(shop_run.site.hits_of("de.shop.test"))
    blog = shop_run.site.hits_of("blog.shop.test")
    assert de[1].time < www[-1].time and www[1].time < de[-1].time
    assert blog[-1].time < www[-1].time  # a host without a delay is done while www still waits


def test_a_robots_txt_may_name_a_sitemap_on_another_host_of_the_crawl(shop_run: Run) -> None:
    assert shop_run.url("de.shop.test", "/nur-sitemap") in shop_run.entries("de.shop.test")
    assert [hit.path for hit in shop_run.site.hits_of("www.shop.test")].count("/sitemap-de.xml") == 1


def test_cdn_images_stay_with_their_page(shop_run: Run) -> None:
    home = shop_run.entries("www.shop.test")[shop_run.url("www.shop.test")]
    assert [image.text for image in home.iter(IMAGE)] == [shop_run.url("cdn.shop.test", "/img/hero.jpg")]


def test_an_hreflang_cluster_over_three_hosts_is_checked_whole(shop_run: Run) -> None:
    """fr does not name de: de's link to fr is one-way, so it is left out and warned; every
    other pair links both ways and each entry names itself."""

    def cluster(host: str) -> dict[str, str]:
        entry = shop_run.entries(host)[shop_run.url(host)]
        return {link.get("hreflang"): link.get("href") for link in entry.iter(XHTML)}

    en, de, fr = (shop_run.url(host) for host in ("www.shop.test", "de.shop.test", "fr.shop.test"))
    assert cluster("www.shop.test") == {"en": en, "de": de, "fr": fr}
    assert cluster("de.shop.test") == {"en": en, "de": de}
    assert cluster("fr.shop.test") == {"en": en, "fr": fr}
    lines = (shop_run.out.parent / f"{shop_run.out.name}.crawl-report.jsonl").read_text("utf-8")
    assert '"hreflang-not-reciprocal"' in lines and f"fr -> {fr} does not link back" in lines


@pytest.fixture
def plain_site() -> Iterator[HostsSite]:
    site = HostsSite(plain()).start()
    yield site
    site.stop()


def crawl_plain(site: HostsSite, out: Path, *options: str) -> Run:
    pinned = resolve_options([*site.hosts], site.port)
    return Run(site, out, run_cli("crawl", site.root("www.plain.test"), "--out", str(out), "-q", *pinned, *options))


def test_max_hosts_caps_the_hosts_taken_in(plain_site: HostsSite, tmp_path: Path) -> None:
    run = crawl_plain(plain_site, tmp_path / "out", "--subdomains", "--max-hosts", "2", "--concurrency", "1")
    assert run.process.returncode == 0, run.process.stderr
    crawled = {hit.host for hit in plain_site.hits}
    assert len(crawled) == 2 and "www.plain.test" in crawled, crawled
    left = [url for url, line in run.report.items() if line["reason"] == "limit"]
    assert len(left) == 2 and all("more than 2 hosts" in str(run.report[url]["detail"]) for url in left)
    assert "Cut by a limit: 2 URLs over 2 hosts; raise it with --max-hosts" in run.process.stderr


def test_max_pages_per_host_keeps_a_big_host_from_taking_the_whole_budget(tmp_path: Path) -> None:
    """The forum has nine pages, the blog two: with a share of four pages per host the forum is
    cut at four (the rest reported with the limit and never requested), the others whole."""
    site = HostsSite(big()).start()
    try:
        pinned = resolve_options([*site.hosts], site.port)
        out = tmp_path / "out"
        options = ("--subdomains", "--max-pages-per-host", "4", "--concurrency", "1")
        run = Run(site, out, run_cli("crawl", site.root("www.big.test"), "--out", str(out), *options, *pinned))
    finally:
        site.stop()
    assert run.process.returncode == 0, run.process.stderr
    assert len(sitemap_locs(out / "forum.big.test", run.url("forum.big.test", ""))) == 4
    assert len(sitemap_locs(out / "blog.big.test", run.url("blog.big.test", ""))) == 2
    assert len([hit for hit in site.hits_of("forum.big.test") if hit.path.startswith("/p")]) == 3
    cut = [url for url, line in run.report.items() if line["reason"] == "limit"]
    assert len(cut) == 6 and all("per host reached on http://forum.big.test" in run.report[u]["detail"] for u in cut)
    assert "Cut by a limit: 6 URLs over the page budget of 4 per host; raise it with --max-pages-per-host" in (
        run.process.stderr
    )


def test_host_names_the_hosts_and_starts_at_each(plain_site: HostsSite, tmp_path: Path) -> None:
    """--host: blog, linked from nowhere, is crawled from its root; ``*.`` takes any host under a
    name; a host of the domain that no --host names gets no request."""
    run = crawl_plain(
        plain_site, tmp_path / "out", "--host", "blog.plain.test", "--host", "*.a.plain.test", "--host", "a.plain.test"
    )
    assert run.process.returncode == 0, run.process.stderr
    assert sorted(p.name for p in run.out.iterdir()) == ["a.plain.test", "blog.plain.test", "www.plain.test"]
    assert sorted(sitemap_locs(run.out / "blog.plain.test", run.url("blog.plain.test", ""))) == [
        run.url("blog.plain.test"),
        run.url("blog.plain.test", "/post"),
    ]
    assert plain_site.hits_of("b.plain.test") == [] and plain_site.hits_of("c.plain.test") == []
    assert run.report[run.url("b.plain.test")]["reason"] == "out-of-scope"


def test_a_second_run_keeps_each_hosts_set(plain_site: HostsSite, tmp_path: Path) -> None:
    """The state store keeps each host's shards: nothing changed, no file is rewritten, and a
    page gone from one host leaves the other hosts' sets as they were."""
    out = tmp_path / "out"
    first = crawl_plain(plain_site, out, "--subdomains")
    assert first.process.returncode == 0, first.process.stderr
    files = {path: path.read_bytes() for path in out.glob("*/*.xml")}
    second = crawl_plain(plain_site, out, "--subdomains")
    assert second.process.returncode == 0, second.process.stderr
    assert "0 of 4 sitemap files rewritten" in second.process.stderr
    assert {path: path.read_bytes() for path in out.glob("*/*.xml")} == files
    del plain_site.hosts["www.plain.test"]["/about"]
    third = crawl_plain(plain_site, out, "--subdomains")
    assert third.process.returncode == 0, third.process.stderr
    assert sitemap_locs(out / "www.plain.test", third.url("www.plain.test", "")) == [third.url("www.plain.test")]
    for host in ("a.plain.test", "b.plain.test", "c.plain.test"):
        assert (out / host / "sitemap-1.xml").read_bytes() == files[out / host / "sitemap-1.xml"]


def test_update_adds_a_url_to_its_own_hosts_set_only(plain_site: HostsSite, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = crawl_plain(plain_site, out, "--subdomains")
    assert first.process.returncode == 0, first.process.stderr
    files = {path: path.read_bytes() for path in out.glob("*/*.xml")}
    plain_site.hosts["a.plain.test"]["/new"] = html("a new page")
    new = first.url("a.plain.test", "/new")
    pinned = resolve_options([*plain_site.hosts], plain_site.port)
    update = run_cli(
        "update", plain_site.root("www.plain.test"), "--out", str(out), "--subdomains", "--add", new, *pinned
    )
    assert update.returncode == 0, update.stderr
    assert sitemap_locs(out / "a.plain.test", first.url("a.plain.test", "")) == [first.url("a.plain.test"), new]
    changed = sorted(str(path.relative_to(out)) for path in files if path.read_bytes() != files[path])
    assert changed == ["a.plain.test/sitemap-1.xml", "a.plain.test/sitemap.xml"]


def test_a_host_whose_urls_all_left_has_its_set_withdrawn_and_an_outage_keeps_it(
    plain_site: HostsSite, tmp_path: Path
) -> None:
    """a's one page is gone: its set is removed, index first (no sitemap of a's may list it). b's
    robots.txt answers 503 and every page of the blog 500: an outage is no removal, their sets
    stay. c is no longer a --host of the crawl: its set is not this run's to judge, and stays too.
    Each is said on its host's line."""
    out = tmp_path / "out"
    hosts = ["--host", "a.plain.test", "--host", "b.plain.test", "--host", "blog.plain.test"]
    first = crawl_plain(plain_site, out, *hosts, "--host", "c.plain.test")
    assert first.process.returncode == 0, first.process.stderr
    kept = {
        host: {path.name: path.read_bytes() for path in (out / host).iterdir()}
        for host in ("b.plain.test", "c.plain.test", "blog.plain.test")
    }
    before = {host: dict(plain_site.hosts[host]) for host in ("b.plain.test", "blog.plain.test")}
    plain_site.hosts["a.plain.test"]["/"] = (404, {"Content-Type": "text/html"}, "<html>gone</html>")
    plain_site.hosts["b.plain.test"]["/robots.txt"] = (503, TEXT, "down for maintenance")
    for path in ("/", "/post"):
        plain_site.hosts["blog.plain.test"][path] = (500, {"Content-Type": "text/html"}, "<html>oops</html>")
    refused = crawl_plain(plain_site, out, *hosts)  # a's set would lose all: --max-shrink of the default profile
    assert refused.process.returncode == 5, refused.process.stderr
    assert "a.plain.test: the set would shrink by 100% (1 -> 0 URLs)" in refused.process.stderr  # b, blog: out of reach
    second = crawl_plain(plain_site, out, *hosts, "--accept-shrink")
    assert second.process.returncode == 0, second.process.stderr
    assert list((out / "a.plain.test").iterdir()) == []
    for host, files in kept.items():
        assert {path.name: path.read_bytes() for path in (out / host).iterdir()} == files, host
    said = second.process.stderr
    assert "0 listed, 1 left out: no set: its earlier set is withdrawn, as none of its URLs is listed now" in said
    assert "its earlier set is kept, as it was out of reach (b.plain.test" in said
    assert "its earlier set is kept, as it was out of reach (none of its pages answered)" in said
    assert "c.plain.test                   its earlier set is kept: not a host of this crawl" in said
    assert f"Sitemap: {second.url('a.plain.test', '/sitemap.xml')}" not in second.process.stdout
    assert run_cli("validate", str(out)).returncode == 0
    # The state store keeps the pages of a host out of reach listed: none is reported removed, and
    # none comes back "added" (nor with a new lastmod) when its host answers again.
    changes = (tmp_path / "out.changes.jsonl").read_text("utf-8")
    assert second.url("a.plain.test") in changes
    assert "b.plain.test" not in changes and "blog.plain.test" not in changes, changes
    plain_site.hosts.update(before)
    third = crawl_plain(plain_site, out, *hosts)
    assert third.process.returncode == 0, third.process.stderr
    for host in ("b.plain.test", "blog.plain.test"):
        assert {path.name: path.read_bytes() for path in (out / host).iterdir()} == kept[host], host
    changes = (tmp_path / "out.changes.jsonl").read_text("utf-8") if (tmp_path / "out.changes.jsonl").exists() else ""
    assert "b.plain.test" not in changes and "blog.plain.test" not in changes, changes


def test_max_shrink_guards_each_hosts_set_on_its_own(tmp_path: Path) -> None:
    """docs loses three of its four pages, 75%, while the crawl as a whole loses three of fifteen:
    with --max-shrink 50 nothing is published, and the refusal names the host."""
    www = {f"/w{n}": html(f"page {n}") for n in range(10)}
    home = "".join(f'<a href="/w{n}">{n}</a>' for n in range(10)) + f'<a href="{link("docs.shrink.test")}">docs</a>'
    docs = {f"/d{n}": html(f"doc {n}") for n in range(3)}
    site = HostsSite(
        {
            "www.shrink.test": {"/": html(home), **www},
            "docs.shrink.test": {"/": html("".join(f'<a href="/d{n}">{n}</a>' for n in range(3))), **docs},
        }
    ).start()
    try:
        out = tmp_path / "out"
        command = ("crawl", site.root("www.shrink.test"), "--out", str(out), "--subdomains", "--max-shrink", "50")
        first = run_cli(*command, *resolve_options([*site.hosts], site.port))
        assert first.returncode == 0, first.stderr
        files = {path: path.read_bytes() for path in out.glob("*/*.xml")}
        for n in range(3):
            del site.hosts["docs.shrink.test"][f"/d{n}"]
        second = run_cli(*command, *resolve_options([*site.hosts], site.port))
    finally:
        site.stop()
    assert second.returncode == 5, second.stderr
    assert "docs.shrink.test: the set would shrink by 75% (4 -> 1 URLs), more than --max-shrink 50%" in second.stderr
    assert {path: path.read_bytes() for path in out.glob("*/*.xml")} == files


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--resolve", "www.plain.test:80"], "is not HOST:PORT:ADDRESS"),
        (["--resolve", "www.plain.test:99999:127.0.0.1"], "is not a number from 1 to 65535"),
        (["--resolve", "www.plain.test:80:localhost"], "is not an IP address"),
        (["--host", "bad host"], "is not a host name"),
        (["--host", "blog.example.com:8080"], "without scheme or port"),
        (["--resolve", "*:80:127.0.0.1"], "is not one host name (curl's * and + forms are not taken)"),
        (["--resolve", "+www.plain.test:80:127.0.0.1"], "is not one host name"),
        (["--host", "*.com"], "covers every site under a public suffix"),
        (["--host", "*.test"], "covers every site under a public suffix"),
        (["--host", "*.github.io"], "covers every site under a public suffix"),
        (["audit", "--production-url", "https://www.example.com", "--subdomains"], "drop --subdomains and --host"),
    ],
)
def test_a_wrong_host_option_is_one_line_and_exit_2(tmp_path: Path, options: list[str], message: str) -> None:
    command, options = (options[0], options[1:]) if options[0] == "audit" else ("crawl", options)
    process = run_cli(command, "http://www.plain.test/", "--out", str(tmp_path / "out"), *options)
    assert process.returncode == 2
    assert message in process.stderr and "Traceback" not in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1, process.stderr


def test_validate_reads_each_hosts_set_on_its_own_origin(shop_run: Run, tmp_path: Path) -> None:
    process = run_cli("validate", str(shop_run.out))
    assert process.returncode == 0, process.stdout + process.stderr
    assert "8 files, 12 URLs" in process.stderr
    mixed = tmp_path / "mixed"
    shutil.copytree(shop_run.out, mixed)
    shard = mixed / "fr.shop.test" / "sitemap-1.xml"
    shard.write_text(shard.read_text("utf-8").replace(shop_run.url("fr.shop.test"), shop_run.url("de.shop.test", "/x")))
    process = run_cli("validate", str(mixed))
    assert process.returncode == 1
    wrong = f"error: host: {shop_run.url('de.shop.test', '/x')} is not on {shop_run.url('fr.shop.test', '')}"
    assert wrong in process.stdout, process.stdout


def test_check_and_validate_read_one_hosts_published_set_under_its_own_name(
    plain_site: HostsSite, tmp_path: Path
) -> None:
    """``check --resolve`` reaches a host by name on 127.0.0.1 and ``--expect OUT`` takes OUT/HOST:
    the set served as written passes; a file changed on the server is stale."""
    out = tmp_path / "out"
    run = crawl_plain(plain_site, out, "--subdomains")
    assert run.process.returncode == 0, run.process.stderr
    host = "www.plain.test"
    pages = plain_site.hosts[host]
    for path in (out / host).glob("*.xml"):
        pages["/" + path.name] = (200, {"Content-Type": "application/xml"}, path.read_text("utf-8"))
    pages["/robots.txt"] = (200, TEXT, f"User-agent: *\nAllow: /\nSitemap: {run.url(host, '/sitemap.xml')}\n")
    pinned = resolve_options([*plain_site.hosts], plain_site.port)
    plain_site.hits.clear()
    fresh = run_cli("check", run.url(host), "--expect", str(out), *pinned, timeout=60)
    assert (fresh.returncode, fresh.stdout) == (0, ""), fresh.stdout + fresh.stderr
    assert "valid (2 files, 2 URLs read" in fresh.stderr, fresh.stderr
    assert {hit.host for hit in plain_site.hits} == {host}
    validated = run_cli("validate", run.url(host, "/sitemap.xml"), *pinned, timeout=60)
    assert validated.returncode == 0 and "2 files, 2 URLs" in validated.stderr, validated.stdout + validated.stderr
    status, headers, body = pages["/sitemap-1.xml"]
    pages["/sitemap-1.xml"] = (status, headers, body.replace("</urlset>", "<!-- edited --></urlset>"))
    stale = run_cli("check", run.url(host), "--expect", str(out), *pinned, timeout=60)
    assert stale.returncode == 1 and "stale" in stale.stdout, stale.stdout + stale.stderr


def test_indexnow_is_told_host_by_host_with_each_hosts_key_file(plain_site: HostsSite, tmp_path: Path) -> None:
    """One submission per host, its own URLs only, its key file on its own host (fetched through
    --resolve like the crawl); a host without the key file is not told, and the summary says so."""
    key = "0123456789abcdef"
    for host in ("www.plain.test", "a.plain.test", "b.plain.test"):
        plain_site.hosts[host][f"/{key}.txt"] = (200, TEXT, key)
    plain_site.hosts["api.indexnow.test"] = {"/indexnow": (200, TEXT, "")}
    endpoint = f"http://api.indexnow.test:{plain_site.port}/indexnow"
    run = crawl_plain(
        plain_site, tmp_path / "out", "--subdomains", "--indexnow-endpoint", endpoint, "--indexnow-key", key
    )
    assert run.process.returncode == 0, run.process.stderr
    told = {}
    for host, path, body in plain_site.posts:
        assert (host, path) == ("api.indexnow.test", "/indexnow")
        post = json.loads(body)
        told[post["host"]] = post
    assert sorted(told) == ["a.plain.test", "b.plain.test", "www.plain.test"]
    for host, post in told.items():
        assert post["keyLocation"] == run.url(host, f"/{key}.txt") and post["key"] == key
        assert post["urlList"] == sorted(sitemap_locs(run.out / host, run.url(host, "")))
    assert [hit.path for hit in plain_site.hits_of("c.plain.test")].count(f"/{key}.txt") == 1
    missing = f"key file {run.url('c.plain.test', f'/{key}.txt')} answered HTTP 404"
    assert f"IndexNow: 4 of 5 URLs sent in 3 batch(es), the others not: {missing}" in run.process.stderr


def test_the_audit_reaches_a_staging_name_that_only_resolve_knows(plain_site: HostsSite, tmp_path: Path) -> None:
    """--resolve holds for the audit's own requests before the crawl (start page, robots.txt,
    the site's 404 page) as for the crawl: every one reached the server under the name."""
    plain_site.hosts["staging.plain.test"] = plain_site.hosts["www.plain.test"]
    pinned = resolve_options(["staging.plain.test"], plain_site.port)
    production = plain_site.root("www.plain.test")
    out = tmp_path / "audit"
    process = run_cli(
        "audit", plain_site.root("staging.plain.test"), "--production-url", production, "--out", str(out), *pinned
    )
    assert process.returncode == 0, process.stderr
    paths = [hit.path for hit in plain_site.hits_of("staging.plain.test")]
    assert paths.count("/") == 2 and "/about" in paths  # the preflight's start page, then the crawl's
    assert any(path.startswith("/sitemap-crawler-probe-") for path in paths)  # the preflight's 404 probe
    assert plain_site.hits_of("www.plain.test") == []


JS = {"Content-Type": "application/javascript"}


def _linking_script(href: str) -> Page:
    return (200, JS, f"document.body.insertAdjacentHTML('beforeend', '<a href=\"{href}\">more</a>');")


@pytest.mark.skipif(shutil.which("chromium-headless-shell") is None, reason="needs chromium-headless-shell")
def test_a_rendered_crawl_follows_scripts_across_the_hosts(tmp_path: Path) -> None:
    """--render over several hosts: the blog is linked only by www's script, and its page only by
    the blog's own script, fetched from the blog's host (an origin of the crawl, so allowed)."""
    script = '<script src="/app.js"></script>'
    site = HostsSite(
        {
            "www.app.test": {"/": html(script), "/app.js": _linking_script(link("blog.app.test"))},
            "blog.app.test": {"/": html(script), "/app.js": _linking_script("/hidden"), "/hidden": html("found")},
        }
    ).start()
    try:
        out = tmp_path / "out"
        pinned = resolve_options([*site.hosts], site.port)
        process = run_cli(
            "crawl", site.root("www.app.test"), "--out", str(out), "--subdomains", "--render", "always", "-q", *pinned
        )
    finally:
        site.stop()
    assert process.returncode == 0, process.stderr
    blog = f"http://blog.app.test:{site.port}"
    assert sorted(sitemap_locs(out / "blog.app.test", blog)) == [f"{blog}/", f"{blog}/hidden"]
    assert "/app.js" in [hit.path for hit in site.hits_of("blog.app.test")]
