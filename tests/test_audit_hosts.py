"""An audit of a staging site of several hosts: each staging host mapped to its production host
(``--production-url STAGING=URL``), one production set per host, the report per host.

The staging hosts are names on one server on 127.0.0.1 behind one password, reached only
through --resolve; the site's links and sitemaps name production, as a copy of it would.
"""

from __future__ import annotations

import base64
import csv
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lxml.etree
import lxml.html
import pytest
from scrapy.settings import BaseSettings

from crawler.hostmap import HostMap
from settings.environment import env_name
from settings.staging import host_map
from tests.conftest import run_cli, sitemap_locs
from tests.hosts_site import HostsSite, Page, html, link, resolve_options

WWW, BLOG, SHOP = "www.stage.test", "blog.stage.test", "shop.stage.test"
PROD_WWW, PROD_BLOG = "https://www.example.com", "https://blog.example.com"
AUTH = "Basic " + base64.b64encode(b"preview:s3cret-pw").decode()


def urlset(*locs: str) -> Page:
    body = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    xml = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
    return 200, {"Content-Type": "application/xml"}, xml


def staging() -> dict[str, dict[str, Page]]:
    """www links to its about page, to the blog by its production name, and to an unmapped shop;
    the blog's copy page names www's about page canonical. www's robots.txt names its sitemap by
    its production name; the blog's names one stored on www (the blog's, listing a page that is
    gone) and one on the unmapped shop."""
    text = {"Content-Type": "text/plain"}
    blog_robots = f"Sitemap: {PROD_WWW}/blog-sitemap.xml\nSitemap: {link(SHOP, 'shop.xml')}\n"
    return {
        WWW: {
            "/robots.txt": (200, text, f"User-agent: *\nAllow: /\nSitemap: {PROD_WWW}/sitemap.xml\n"),
            "/": html(f'<a href="/about">about</a><a href="{PROD_BLOG}/">blog</a><a href="{link(SHOP)}">shop</a>'),
            "/about": html("about us"),
            "/sitemap.xml": urlset(f"{PROD_WWW}/", f"{PROD_WWW}/about"),
            "/blog-sitemap.xml": urlset(f"{PROD_BLOG}/", f"{PROD_BLOG}/post", f"{PROD_BLOG}/gone"),
        },
        BLOG: {
            "/robots.txt": (200, text, f"User-agent: *\nAllow: /\n{blog_robots}"),
            "/": html('<a href="/post">post</a><a href="/copy">copy</a>'),
            "/post": html("a post"),
            "/copy": html("about us", head=f'<link rel="canonical" href="{PROD_WWW}/about">'),
        },
        SHOP: {"/": html("the shop")},
    }


def cookie_file(path: Path) -> Path:
    """A browser's cookies.txt: a host-only cookie for www and one for the blog."""
    lines = ["# Netscape HTTP Cookie File"]
    lines += [f"{host}\tFALSE\t/\tFALSE\t0\t{name}\t{value}" for host, name, value in COOKIES]
    path.write_text("\n".join(lines) + "\n")
    return path


COOKIES = [(WWW, "wsid", "www-c00kie"), (BLOG, "bsid", "blog-c00kie")]


@dataclass
class Audit:
    site: HostsSite
    out: Path
    process: subprocess.CompletedProcess[str]

    def report(self) -> dict[str, object]:
        data: dict[str, object] = json.loads((self.out / "report.json").read_text())
        return data

    def rows(self) -> dict[str, dict[str, str]]:
        with (self.out / "urls.csv").open(newline="") as file:
            return {row["url"]: row for row in csv.DictReader(file)}


def audit(site: HostsSite, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    cookies = cookie_file(out.parent / f"{out.name}.cookies.txt")
    return run_cli(
        "audit", site.root(WWW), "--out", str(out), "--user", "preview", "--password-env", "STAGING_PW",
        "--cookie-file", str(cookies), *resolve_options([*site.hosts], site.port), *options,
        env={"STAGING_PW": "s3cret-pw"},
    )  # fmt: skip


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audit]:
    site = HostsSite(staging())
    site.authorization = AUTH
    site.start()
    try:
        out = tmp_path_factory.mktemp("audit") / "out"
        pairs = ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}")
        yield Audit(site, out, audit(site, out, *pairs, "--index-host", "www.example.com"))
    finally:
        site.stop()


def test_each_production_host_gets_its_own_valid_set(staged: Audit) -> None:
    assert staged.process.returncode == 0, staged.process.stderr
    validated = run_cli("validate", str(staged.out))  # each host's set, and the index of every host's
    assert validated.returncode == 0, validated.stdout + validated.stderr
    shard = lxml.etree.parse(str(staged.out / "www.example.com" / "sitemap-1.xml"))
    assert sorted(shard.xpath("//*[local-name()='loc']/text()")) == [f"{PROD_WWW}/", f"{PROD_WWW}/about"]
    assert sorted(sitemap_locs(staged.out / "blog.example.com", PROD_BLOG)) == [f"{PROD_BLOG}/", f"{PROD_BLOG}/post"]
    written = [path.read_text() for path in staged.out.glob("*/*.xml")]
    assert written and not any("stage.test" in text for text in written)  # no staging name is ever listed
    previews = [line for line in staged.process.stderr.splitlines() if line.startswith("Production sitemap preview")]
    assert [line.rsplit("/", 2)[1] for line in previews] == ["www.example.com", "blog.example.com"]
    index = (staged.out / "www.example.com" / "sitemap-hosts.xml").read_text()  # --index-host, by its production name
    assert f"<loc>{PROD_BLOG}/sitemap.xml</loc>" not in index and f"<loc>{PROD_BLOG}/sitemap-1.xml</loc>" in index


def test_the_report_explains_each_hosts_urls_by_their_production_names(staged: Audit) -> None:
    rows = staged.rows()
    copy = rows[staged.site.root(BLOG) + "copy"]
    assert (copy["production_url"], copy["outcome"], copy["reason"]) == (
        f"{PROD_BLOG}/copy",
        "excluded",
        "canonicalised",
    )
    assert copy["canonical"] == staged.site.root(WWW) + "about"
    assert rows[staged.site.root(BLOG) + "post"]["production_url"] == f"{PROD_BLOG}/post"
    assert rows[staged.site.root(BLOG)]["depth"] == "0"  # a mapped host's root is a start of the crawl
    assert rows[staged.site.root(SHOP)]["reason"] == "out-of-scope"
    summary = staged.report()["summary"]
    assert isinstance(summary, dict)
    assert summary["hosts"] == {
        f"{PROD_WWW}/": {"listed": 2, "excluded": 0},
        f"{PROD_BLOG}/": {"listed": 2, "excluded": 2},  # the copy, and the sitemap's page that is gone
    }
    assert summary["other_hosts"] == 1 and summary["urls"] == 2 + 2 + 2 + 1  # the shop, linked, not crawled
    assert f"on {PROD_BLOG}: 2 listed, 2 excluded" in staged.process.stderr
    assert "on other hosts (not mapped, not crawled): 1 excluded" in staged.process.stderr


def test_each_hosts_own_sitemap_is_compared_on_its_own_host(staged: Audit) -> None:
    """The sitemap the blog's robots.txt names is the blog's wherever it is stored (its locs are
    not another host's), its page that is gone on staging is a finding on the blog, and the line
    naming an unmapped host is a finding on the blog's robots.txt, never fetched."""
    findings = staged.report()["findings"]
    assert isinstance(findings, list)
    by_kind: dict[str, list[str]] = {}
    for finding in findings:
        by_kind.setdefault(finding["kind"], []).append(finding["url"])
    assert by_kind.get("listed-not-indexable") == [staged.site.root(BLOG) + "gone"], by_kind
    assert by_kind.get("sitemap-errors") == [staged.site.root(BLOG) + "robots.txt"], by_kind
    sources = staged.report()["sitemaps"]
    assert isinstance(sources, dict)
    names = (staged.site.root(WWW) + "blog-sitemap.xml", staged.site.root(WWW) + "sitemap.xml")
    assert sorted(sources["sources"]) == sorted(names)


def test_credentials_go_to_the_mapped_staging_hosts_only(staged: Audit) -> None:
    hits = staged.site.hits
    assert {hit.host for hit in hits} == {WWW, BLOG}  # the unmapped shop gets no request
    assert {hit.host for hit in hits if hit.path.startswith("/sitemap-crawler-probe-")} == {WWW, BLOG}
    assert all(hit.authorization == AUTH for hit in hits)
    # A cookie file's host-only cookie goes to its own host alone.
    assert {hit.cookie for hit in hits if hit.host == WWW} == {"wsid=www-c00kie"}
    assert {hit.cookie for hit in hits if hit.host == BLOG} == {"bsid=blog-c00kie"}
    written = (
        staged.process.stderr + (staged.out / "report.json").read_text() + (staged.out / "report.html").read_text()
    )
    assert not any(secret in written for secret in ("s3cret-pw", "www-c00kie", "blog-c00kie"))


BAD = [
    (("--production-url", PROD_WWW, "--subdomains"), "drop --subdomains and --host"),
    (("--production-url", f"{BLOG}={PROD_BLOG}"), "the start URL's host"),
    (("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_WWW}"), "is given twice"),
    (("--production-url", PROD_WWW, "--production-url", f"http://{BLOG}:1={PROD_BLOG}"), "scheme and port"),
    (("--production-url", PROD_WWW, "--production-url", f"u:pw@{BLOG}={PROD_BLOG}"), "may not hold a user name"),
    (("--production-url", PROD_WWW, "--production-url", f"https://u:pw==@{BLOG}={PROD_BLOG}"), "may not hold a user"),
    (("--production-url", PROD_WWW, "--production-url", f"*.stage.test={PROD_BLOG}"), "not a staging host name"),
    (("--production-url", PROD_WWW, "--production-url", f"{BLOG}=http://blog.example.com:8080"), "scheme and port"),
    (
        ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}", "--index-host", BLOG),
        "not a production",
    ),
]


@pytest.mark.parametrize(("options", "words"), BAD, ids=[words for _, words in BAD])
def test_a_wrong_host_map_is_one_line_before_any_request(tmp_path: Path, options: tuple[str, ...], words: str) -> None:
    site = HostsSite(staging())
    site.start()
    try:
        result = audit(site, tmp_path / "out", *options)
    finally:
        site.stop()
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.stderr
    assert "pw" not in lines[0]
    assert site.hits == []


def test_a_second_audit_compares_each_host_with_the_first(staged: Audit, tmp_path: Path) -> None:
    out = tmp_path / "again"
    pairs = ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}")
    again = audit(staged.site, out, *pairs, "--compare", str(staged.out))
    assert again.returncode == 0, again.stderr
    compare = json.loads((out / "report.json").read_text())["compare"]
    assert (compare["new"], compare["fixed"]) == (0, 0) and compare["still_there"] >= 1, compare
    assert (compare["not_audited"], compare["hosts_not_audited"], compare["hosts_added"]) == (0, [], [])


def test_a_host_left_out_of_the_second_audit_is_not_fixed_and_a_host_added_is_new(
    staged: Audit, tmp_path: Path
) -> None:
    """The earlier audit mapped www and the blog: an audit of www alone did not look at the
    blog, so the blog's findings are not fixed; compared the other way, they are all new."""
    findings = staged.report()["findings"]
    assert isinstance(findings, list)
    on_blog = [finding for finding in findings if finding["url"].startswith(staged.site.root(BLOG))]
    assert on_blog
    alone = audit(staged.site, tmp_path / "alone", "--production-url", PROD_WWW, "--compare", str(staged.out))
    assert alone.returncode == 0, alone.stderr
    compare = json.loads((tmp_path / "alone" / "report.json").read_text())["compare"]
    assert (compare["fixed"], compare["not_audited"]) == (0, len(on_blog)), compare
    assert compare["hosts_not_audited"] == [f"{PROD_BLOG}/"] and compare["hosts_added"] == []
    assert f"0 fixed; {len(on_blog)} on {PROD_BLOG}, not audited this time" in alone.stderr
    pairs = ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}")
    both = audit(staged.site, tmp_path / "both", *pairs, "--compare", str(tmp_path / "alone" / "report.json"))
    assert both.returncode == 0, both.stderr
    compare = json.loads((tmp_path / "both" / "report.json").read_text())["compare"]
    assert compare["hosts_added"] == [f"{PROD_BLOG}/"] and compare["new"] >= len(on_blog), compare
    assert f"new to this audit: {PROD_BLOG} (every finding there is new)" in both.stderr


# --- the map itself (pure) -------------------------------------------------------------------------


def test_each_url_moves_between_its_own_hosts_names() -> None:
    hosts = HostMap(
        (("http://stage.test:8080/", "https://www.example.com/"), ("http://blog.stage.test:8080/", PROD_BLOG + "/"))
    )
    assert hosts.to_production("http://blog.stage.test:8080/post?a=1") == PROD_BLOG + "/post?a=1"
    assert hosts.to_staging(PROD_BLOG + "/post") == "http://blog.stage.test:8080/post"
    assert hosts.to_production("http://stage.test:8080/") == "https://www.example.com/"
    assert hosts.to_production("http://blog.stage.test.evil:8080/x") == "http://blog.stage.test.evil:8080/x"
    assert hosts.to_staging("https://shop.example.com/") == "https://shop.example.com/"
    assert hosts.on_production(PROD_BLOG + "/x") and not hosts.on_production("https://shop.example.com/")
    assert hosts.on_staging("http://blog.stage.test:8080/") and not hosts.on_staging(PROD_BLOG + "/")
    assert (hosts.staging, hosts.production) == ("http://stage.test:8080/", "https://www.example.com/")


@pytest.mark.parametrize(
    ("value", "pairs"),
    [
        ("https://www.example.com", [("http://stage.test:8080/", "https://www.example.com/")]),
        (
            ["blog.stage.test=https://blog.example.com", "https://www.example.com"],
            [
                ("http://stage.test:8080/", "https://www.example.com/"),
                ("http://blog.stage.test:8080/", PROD_BLOG + "/"),
            ],
        ),
        (
            ["stage.test=https://www.example.com", "http://Blog.Stage.test:8080=https://blog.example.com/"],
            [
                ("http://stage.test:8080/", "https://www.example.com/"),
                ("http://blog.stage.test:8080/", PROD_BLOG + "/"),
            ],
        ),
    ],
)
def test_the_production_setting_maps_the_start_host_first(value: object, pairs: list[tuple[str, str]]) -> None:
    settings = BaseSettings({"SITEMAP_PRODUCTION_URL": value})
    hosts = host_map(settings, "http://stage.test:8080/start")
    assert hosts is not None and list(hosts.pairs) == pairs


def test_the_html_report_names_each_host_and_its_counts(staged: Audit) -> None:
    page = lxml.html.fromstring((staged.out / "report.html").read_bytes())
    rows = [
        [cell.text_content() for cell in row.xpath("td")] for row in page.xpath('//table[@id="summary-hosts"]//tr[td]')
    ]
    assert rows == [
        [f"{PROD_WWW}/", "2", "0"],
        [f"{PROD_BLOG}/", "2", "2"],
        ["other hosts (not mapped, not crawled)", "0", "1"],
    ]
    meta = page.xpath('//p[@class="meta"]')[0].text_content()
    assert f"{staged.site.root(BLOG)} as {PROD_BLOG}/" in meta


def test_a_blocker_on_one_host_is_that_hosts_and_read_away_with_as_if_no_blocker(tmp_path: Path) -> None:
    """Every blog page says X-Robots-Tag: noindex: a staging blocker of the blog, found before
    the crawl, its findings grouped under it; www's pages are not its."""
    pages = staging()
    for path, (status, headers, body) in list(pages[BLOG].items()):
        if path != "/robots.txt":
            pages[BLOG][path] = (status, {**headers, "X-Robots-Tag": "noindex"}, body)
    site = HostsSite(pages).start()
    pairs = ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}")
    try:
        blocked = audit(site, tmp_path / "blocked", *pairs)
        read_away = audit(site, tmp_path / "away", *pairs, "--as-if-no-blocker")
    finally:
        site.stop()
    assert blocked.returncode == 0, blocked.stderr
    report = json.loads((tmp_path / "blocked" / "report.json").read_text())
    heads = [finding for finding in report["findings"] if finding["kind"] == "staging-blocker"]
    assert [head["url"] for head in heads] == [site.root(BLOG)], heads
    assert "X-Robots-Tag: noindex on 3 of 3 pages on " + site.root(BLOG) in heads[0]["detail"]
    assert f"STAGING BLOCKER: X-Robots-Tag: noindex on 3 of 3 pages on {site.root(BLOG)}" in blocked.stderr
    assert not (tmp_path / "blocked" / "blog.example.com").exists()  # nothing of the blog is listed
    assert (tmp_path / "blocked" / "www.example.com" / "sitemap.xml").exists()
    assert read_away.returncode == 0, read_away.stderr
    assert (tmp_path / "away" / "blog.example.com" / "sitemap.xml").exists()


def test_each_mapped_host_is_probed_for_its_own_404_page_and_sitemap_xml(tmp_path: Path) -> None:
    """Hosts run different software: the blog's /old answers 200 with the blog's own 404 text
    (www's 404 page is another), and the blog's robots.txt names no sitemap while its
    /sitemap.xml lists a page that is gone: both are the blog's findings."""
    blog_404 = "<html><head><title>The Blog</title></head><body>We looked everywhere for this.</body></html>"
    pages = {
        WWW: {
            "/": html(f'<a href="/about">about</a><a href="{PROD_BLOG}/">blog</a>'),
            "/about": html("about us"),
            "/sitemap.xml": urlset(f"{PROD_WWW}/", f"{PROD_WWW}/about"),
            "*": (404, {"Content-Type": "text/html"}, "<html><title>Example</title><p>www has no such page</p></html>"),
        },
        BLOG: {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\nAllow: /\n"),
            "/": html('<a href="/post">post</a><a href="/old">old</a>'),
            "/post": html("a post"),
            "/old": (200, {"Content-Type": "text/html"}, blog_404),
            "/sitemap.xml": urlset(f"{PROD_BLOG}/", f"{PROD_BLOG}/post", f"{PROD_BLOG}/gone"),
            "*": (404, {"Content-Type": "text/html"}, blog_404),
        },
    }
    pairs = ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}")
    site = HostsSite(pages).start()
    try:
        result = audit(site, tmp_path / "out", *pairs)
        # Then both robots.txt name one index of every host's sitemaps, on www (as --index-host
        # writes it): the blog's file it lists is read as the blog's, its /sitemap.xml no more.
        text, index = {"Content-Type": "text/plain"}, f"Sitemap: {PROD_WWW}/sitemap-hosts.xml\n"
        for host in (WWW, BLOG):
            pages[host]["/robots.txt"] = (200, text, "User-agent: *\nAllow: /\n" + index)
        files = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in (
            f"{PROD_WWW}/sitemap.xml", f"{PROD_BLOG}/sitemap-blog.xml"))  # fmt: skip
        pages[WWW]["/sitemap-hosts.xml"] = (200, {"Content-Type": "application/xml"}, (
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{files}</sitemapindex>'))  # fmt: skip
        pages[BLOG]["/sitemap-blog.xml"] = urlset(f"{PROD_BLOG}/", f"{PROD_BLOG}/post")
        shared = audit(site, tmp_path / "shared", *pairs)
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    by_kind: dict[str, list[str]] = {}
    for finding in report["findings"]:
        by_kind.setdefault(finding["kind"], []).append(finding["url"])
    assert by_kind.get("soft-404") == [site.root(BLOG) + "old"], by_kind
    assert site.root(BLOG) + "old" not in by_kind.get("indexable-not-listed", []), by_kind  # never advised to list
    assert sorted(report["sitemaps"]["sources"]) == [site.root(BLOG) + "sitemap.xml", site.root(WWW) + "sitemap.xml"]
    assert by_kind.get("listed-not-indexable") == [site.root(BLOG) + "gone"], by_kind
    assert shared.returncode == 0, shared.stderr
    report = json.loads((tmp_path / "shared" / "report.json").read_text())
    assert report["sitemaps"]["sources"] == [site.root(WWW) + "sitemap-hosts.xml"]
    assert report["sitemaps"]["files"] == 3 and report["sitemaps"]["urls"] == 4
    kinds = {(finding["kind"], finding["url"]) for finding in report["findings"]}
    assert not {kind for kind, _ in kinds} & {"sitemap-errors", "listed-not-indexable"}, kinds
    assert ("indexable-not-listed", site.root(BLOG) + "post") not in kinds, kinds


def test_a_mapped_host_that_refuses_the_audit_stops_it_before_the_crawl(tmp_path: Path) -> None:
    site = HostsSite(staging())
    site.authorization, site.protected = "Basic bm8tb25lOm5vbmU=", {BLOG}  # credentials the audit does not hold
    site.start()
    try:
        pairs = ("--production-url", PROD_WWW, "--production-url", f"{BLOG}={PROD_BLOG}")
        result = audit(site, tmp_path / "out", *pairs)
    finally:
        site.stop()
    assert result.returncode == 1, result.stderr
    assert f"the mapped staging host {site.root(BLOG)} answered HTTP 401: the credentials given were refused" in (
        result.stderr
    )
    assert not any(hit.path in ("/about", "/post", "/copy") for hit in site.hits)  # no crawl: the preflight only


def test_a_crawl_with_the_map_names_each_hosts_set_by_its_production_name(tmp_path: Path) -> None:
    site = HostsSite(staging()).start()
    try:
        process = run_cli(
            "crawl", site.root(WWW), "--out", str(tmp_path / "out"), "--no-state",
            *resolve_options([*site.hosts], site.port),
            env={env_name("production_url"): f"{PROD_WWW},{BLOG}={PROD_BLOG}"},
        )  # fmt: skip
    finally:
        site.stop()
    assert process.returncode == 0, process.stderr
    assert "Hosts: 2 hosts, 2 with a sitemap set of its own:" in process.stderr
    for host in ("www.example.com", "blog.example.com"):
        line = next(line for line in process.stderr.splitlines() if line.strip().startswith(host))
        assert str(tmp_path / "out" / host / "sitemap.xml") in line, process.stderr
    assert "not one of the hosts --production-url maps" in process.stderr  # the shop
