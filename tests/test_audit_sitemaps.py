"""The staging site's own sitemaps in an audit: read right (staging-host entries are
the site's, lastmod findings name the page or the date and share), read from the
staging origin only (nothing robots.txt names elsewhere is fetched or opened), and
every fetch outside Scrapy ends within its deadline."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit.findings import Kind
from crawler.audit.sources import off_origin, site_sitemaps
from crawler.hostmap import HostMap
from crawler.robots_rules import MAX_ROBOTS_BYTES
from crawler.validate.findings import Finding
from crawler.validate.sets import SetOptions, SitemapSet, check_set
from tests.conftest import run_cli
from tests.raw_site import DRIP, HANG, RawSite
from tests.staging_site import PROD, StagingServer, links, page

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HTML = {"Content-Type": "text/html; charset=utf-8"}
XML = {"Content-Type": "application/xml"}
TEXT = {"Content-Type": "text/plain"}
PAGES = [f"/p/{n}" for n in range(61)]


def urlset(entries: list[tuple[str, str | None]]) -> str:
    """One entry per line from line 3: entry *i* (0-based) is on line 3 + i."""
    lines = [f"<url><loc>{loc}</loc>" + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "") + "</url>"
             for loc, lastmod in entries]  # fmt: skip
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n' + "\n".join(lines) + "\n</urlset>\n"


def index(*locs: str) -> str:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NS}">{entries}</sitemapindex>\n'


@pytest.fixture
def other() -> Iterator[StagingServer]:
    server = StagingServer(password=False).start()
    yield server
    server.stop()


@pytest.fixture
def site() -> Iterator[StagingServer]:
    server = StagingServer(password=False).start()
    yield server
    server.stop()


def audit(url: str, out: Path, *options: str) -> Any:
    result = run_cli("audit", url, "--out", str(out), "--production-url", PROD, "--delay", "0", *options, timeout=90)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def report(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    return data


def findings(data: dict[str, Any], kind: Kind) -> list[dict[str, Any]]:
    return [f for f in data["findings"] if f["kind"] == kind.value]


def generated_site(site: StagingServer, third: int | None) -> None:
    """Sitemaps generated on staging: staging-host locs, 60 of 61 on one date, a production
    loc with a lastmod in the future, and (*third*: a port) one loc on a third host."""
    staging = site.url
    pages = {path: (200, HTML, page(path, links("/"))) for path in [*PAGES, "/about"]}
    dates = [(staging + path[1:], "2024-03-05" if path == "/p/7" else "2024-01-01") for path in PAGES]
    extra = [(f"{PROD}/about", "2099-01-01"), (staging, "2024-05-05")]
    if third is not None:
        extra.append((f"http://localhost:{third}/elsewhere", "2024-05-05"))
    site.routes.update(pages)
    site.routes.update({
        "/": (200, HTML, page("Home", links("/about", *PAGES))),
        "/robots.txt": (200, TEXT, f"User-agent: *\nDisallow: /cart\nSitemap: {staging}sitemap.xml\n"),
        "/sitemap.xml": (200, XML, index(f"{staging}sitemap-pages.xml", f"{PROD}/sitemap-extra.xml")),
        "/sitemap-pages.xml": (200, XML, urlset(dates)),
        "/sitemap-extra.xml": (200, XML, urlset(extra)),
    })  # fmt: skip


def test_a_sitemap_generated_on_staging_is_the_site_s_own(
    site: StagingServer, other: StagingServer, tmp_path: Path
) -> None:
    generated_site(site, None)
    out = tmp_path / "audit"
    result = audit(site.url, out, "--fail-on", "sitemap-errors")
    assert result.returncode == 0, result.stderr
    data = report(out)
    assert findings(data, Kind.SITEMAP_ERRORS) == []
    # Staging locs count as the pages: listed, compared, nothing "never reached" or "not listed".
    assert findings(data, Kind.LISTED_NOT_INDEXABLE) == findings(data, Kind.INDEXABLE_NOT_LISTED) == []
    assert all(row["in_sitemaps"] for row in data["urls"]), [r["url"] for r in data["urls"] if not r["in_sitemaps"]]
    assert data["sitemaps"]["files"] == 3 and data["sitemaps"]["urls"] == 63
    # Most URLs on one date: one finding for that file, naming the date and the share.
    (same,) = findings(data, Kind.SAME_LASTMOD)
    assert same["url"] == site.url + "sitemap-pages.xml"
    assert "60 of 61 URLs (98%) have lastmod 2024-01-01" in same["detail"]
    # A lastmod in the future is about the page: its URL, the value and where it stands.
    (future,) = findings(data, Kind.FUTURE_LASTMOD)
    assert (future["url"], future["production_url"]) == (site.url + "about", PROD + "/about")
    assert future["detail"] == f"lastmod 2099-01-01 at {site.url}sitemap-extra.xml:3"
    assert check_set(out / "sitemap.xml", PROD) == []
    assert other.log == []


def test_a_loc_on_a_third_host_is_the_one_sitemap_error(
    site: StagingServer, other: StagingServer, tmp_path: Path
) -> None:
    third = other.server_address[1]
    generated_site(site, third)
    out = tmp_path / "audit"
    result = audit(site.url, out, "--fail-on", "sitemap-errors")
    assert result.returncode == 4, result.stderr
    (error,) = findings(report(out), Kind.SITEMAP_ERRORS)
    assert f"http://localhost:{third}/elsewhere is not on {PROD}" in error["detail"]
    # Said once: the loc is no page of this site, so it is neither "not indexable" nor an orphan.
    assert not any("elsewhere" in f["url"] for f in report(out)["findings"] if f["kind"] != Kind.SITEMAP_ERRORS.value)
    assert check_set(out / "sitemap.xml", PROD) == []
    assert other.log == []  # neither the crawl nor the reading went there


def test_what_robots_txt_names_elsewhere_is_never_fetched_nor_opened(
    site: StagingServer, other: StagingServer, tmp_path: Path
) -> None:
    planted = tmp_path / "planted.xml"
    planted.write_text(urlset([(f"{PROD}/planted-page", None)]))
    port = other.server_address[1]
    named = [f"http://localhost:{port}/x.xml", f"http://127.0.0.1:{port}/y.xml", "/etc/passwd", str(planted),
             f"file://{planted}"]  # fmt: skip
    robots = "User-agent: *\nDisallow: /cart\n" + "".join(f"Sitemap: {url}\n" for url in named)
    site.routes.update({
        "/": (200, HTML, page("Home", links("/about"))),
        "/about": (200, HTML, page("About", links("/"))),
        "/robots.txt": (200, TEXT, robots),
    })  # fmt: skip
    out = tmp_path / "audit"
    result = audit(site.url, out)
    assert result.returncode == 0, result.stderr
    data = report(out)
    refused = findings(data, Kind.SITEMAP_ERRORS)
    assert [f["url"] for f in refused] == [site.url + "robots.txt"] * len(named)
    for finding, url in zip(refused, named, strict=True):
        assert finding["detail"].startswith(f"Sitemap: {url} not fetched: "), finding
    assert "not on the staging origin" in refused[0]["detail"] and "not an absolute" in refused[2]["detail"]
    # Nothing was read, so nothing is compared: no page is "indexable, not listed".
    assert data["sitemaps"]["sources"] == [] and findings(data, Kind.INDEXABLE_NOT_LISTED) == []
    for name in ("report.json", "report.html", "urls.csv"):
        text = (out / name).read_text()
        assert "planted-page" not in text and "root:x:0" not in text, name
    assert other.log == []
    assert {hit.path for hit in site.log} <= {"/", "/about", "/robots.txt", "/sitemap.xml"} | {
        hit.path for hit in site.log if hit.path.startswith("/sitemap-crawler-probe-")
    }


def padded(text: str, size: int) -> str:
    """*text* with comment lines added up to *size* characters exactly."""
    full, rest = divmod(size - len(text), 100)
    last = "#" + "x" * (rest - 2) + "\n" if rest >= 2 else "\n" * rest
    return text + ("#" + "x" * 98 + "\n") * full + last


def test_a_huge_robots_txt_is_read_as_the_crawl_reads_it(site: StagingServer, tmp_path: Path) -> None:
    """10 MB, with ``Disallow: /private`` cut to ``Disallow: /`` where the preflight stops reading
    (one byte past 500 KiB, and at 8 MiB where it used to): no blocker."""
    cut = "Disallow: /"
    body = "User-agent: *\n"
    for at in (MAX_ROBOTS_BYTES + 1, 8 * 1024 * 1024):  # what the preflight reads, and what it used to
        body = padded(body, at - len(cut)) + cut + "private\n"
    body = padded(body, 10 * 1024 * 1024)
    assert body[MAX_ROBOTS_BYTES + 1 - len(cut) : MAX_ROBOTS_BYTES + 1] == cut
    site.routes.update({"/": (200, HTML, page("Home", "")), "/robots.txt": (200, TEXT, body)})
    out = tmp_path / "audit"
    result = audit(site.url, out)
    assert result.returncode == 0, result.stderr
    assert "STAGING BLOCKER" not in result.stderr
    data = report(out)
    assert findings(data, Kind.STAGING_BLOCKER) == []
    assert {row["url"]: row["outcome"] for row in data["urls"]}[site.url] == "listed"


@pytest.mark.parametrize(
    ("routes", "words"),
    [
        ({"/": HANG}, "did not answer in full within 2 s"),  # accepts the connection, never answers
        ({"/": DRIP}, "did not answer in full within 2 s"),  # its headers a byte per 0.5 s
    ],
    ids=["silent", "dripping"],
)
def test_a_start_page_that_never_answers_ends_the_audit(routes: dict[str, str], words: str, tmp_path: Path) -> None:
    server = RawSite(dict(routes)).start()
    try:
        began = time.monotonic()
        result = audit(server.url, tmp_path / "audit", "--timeout", "2")
        took = time.monotonic() - began
    finally:
        server.stop()
    assert result.returncode == 1, result.stderr
    assert f"audit not run: the start URL {server.url} is unreachable" in result.stderr and words in result.stderr
    assert took < 30, took


def test_a_sitemap_that_never_answers_is_a_finding_not_a_hang(tmp_path: Path) -> None:
    home = ("text/html", b"<title>Home</title><a href='/a'>a</a>")
    routes: dict[str, tuple[str, bytes] | str] = {
        "/": home,
        "/a": ("text/html", b"<title>A</title>"),
        "/sitemap.xml": HANG,
    }
    server = RawSite(routes).start()
    routes["/robots.txt"] = ("text/plain", f"User-agent: *\nAllow: /\nSitemap: {server.url}sitemap.xml\n".encode())
    out = tmp_path / "audit"
    try:
        began = time.monotonic()
        result = audit(server.url, out, "--timeout", "2", "--retries", "0")
        took = time.monotonic() - began
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert took < 45, took
    (error,) = findings(report(out), Kind.SITEMAP_ERRORS)
    assert error["url"] == server.url + "sitemap.xml"
    assert "did not answer in full within 2 s" in error["detail"]


# Pure logic: which sources are read, and validate's rules.

HOSTS = HostMap.one("http://127.0.0.1:8000/", "https://www.example.com/")


def test_only_the_staging_origin_is_read_of_what_robots_txt_names() -> None:
    named = ["https://www.example.com/s.xml", "http://127.0.0.1:8000/t.xml", "http://127.0.0.1:8000/t.xml",
             "http://127.0.0.1:8001/u.xml", "http://localhost:8000/v.xml", "https://127.0.0.1:8000/w.xml",
             "/etc/passwd", "file:///etc/passwd", "ftp://127.0.0.1:8000/x.xml"]  # fmt: skip
    sources, refused, naming = site_sitemaps([(line, None) for line in named], HOSTS.staging, HOSTS)
    assert naming == {url: [HOSTS.staging] for url, _ in sources}
    assert sources == [("http://127.0.0.1:8000/s.xml", HOSTS.staging), ("http://127.0.0.1:8000/t.xml", HOSTS.staging)]
    assert [f.detail.split(" not fetched: ")[0] for f in refused] == [f"Sitemap: {url}" for url in named[3:]]
    assert {f.url for f in refused} == {"http://127.0.0.1:8000/robots.txt"}
    assert off_origin("HTTP://127.0.0.1:8000/a.xml", HOSTS.staging, None) == ("http://127.0.0.1:8000/a.xml", "")


def sitemap_findings(tmp_path: Path, text: str, **options: Any) -> list[Finding]:
    path = tmp_path / "sitemap.xml"
    path.write_text(text)
    found = SitemapSet(path, SetOptions(origin="https://www.example.com", **options))
    return [item for item in found if isinstance(item, Finding)]


@pytest.mark.parametrize(
    ("counts", "share", "expected"),
    [
        ((60, 1, 0), 90, "60 of 61 URLs (98%) have lastmod 2024-01-01"),
        ((55, 6, 0), 90, "55 of 61 URLs (90%) have lastmod 2024-01-01"),  # 90.2%
        ((54, 7, 0), 90, None),  # 88.5%
        ((9, 1, 0), 90, "9 of 10 URLs (90%)"),  # exactly the share
        ((8, 2, 0), 90, None),
        ((9, 0, 0), 90, None),  # fewer than 10 URLs say nothing
        ((55, 0, 6), 90, "55 of 61 URLs (90%)"),  # URLs without a lastmod count as other dates
        ((50, 0, 11), 90, None),
        ((61, 0, 0), 90, "all 61 URLs have lastmod 2024-01-01"),
        ((60, 1, 0), 100, None),
        ((40, 21, 0), 60, "40 of 61 URLs (65%)"),
        ((999, 1, 0), 90, "999 of 1000 URLs (99%)"),  # rounded down: not "100%"
    ],
)
def test_same_lastmod_is_most_urls_of_a_file_on_one_date(
    tmp_path: Path, counts: tuple[int, int, int], share: int, expected: str | None
) -> None:
    """*counts*: URLs on the shared date, on other dates, without a lastmod."""
    shared, others, undated = counts
    dates = ["2024-01-01"] * shared + [f"2023-02-{n % 28 + 1:02d}" for n in range(others)] + [None] * undated
    entries = [(f"https://www.example.com/p/{n}", date) for n, date in enumerate(dates)]
    found = sitemap_findings(tmp_path, urlset(entries), same_lastmod_share=share)
    same = [f for f in found if f.rule == "same-lastmod"]
    assert [f.rule for f in found if f.rule != "same-lastmod"] == []
    if expected is None:
        assert same == []
    else:
        (finding,) = same
        assert expected in finding.message and finding.line == 3  # at the first URL with that date


def test_a_staging_alias_is_the_set_s_origin_and_its_locs_the_same_pages(tmp_path: Path) -> None:
    entries = [("https://www.example.com/a", None), ("http://127.0.0.1:8000/b", None),
               ("http://127.0.0.1:8000/a", None), ("http://localhost:8000/c", None)]  # fmt: skip
    found = sitemap_findings(tmp_path, urlset(entries), aliases=("http://127.0.0.1:8000",))
    assert [(f.rule, f.line) for f in found] == [("duplicate", 5), ("host", 6)]
    assert sitemap_findings(tmp_path, urlset(entries[:3]))[0].rule == "host"  # without the alias: an error


def test_a_future_lastmod_names_its_page(tmp_path: Path) -> None:
    entries = [("https://www.example.com/a", "2024-01-01"), ("https://www.example.com/b", "2099-12-31")]
    (future,) = sitemap_findings(tmp_path, urlset(entries))
    assert (future.rule, future.loc, future.line) == ("future-lastmod", "https://www.example.com/b", 4)
    assert str(future).endswith(":4:42: warning: future-lastmod: lastmod 2099-12-31 is in the future")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ("--set", "SITEMAP_SAME_LASTMOD_SHARE=40"),
            "SITEMAP_SAME_LASTMOD_SHARE must be at least 50 (50 to 100 percent)",
        ),
        (
            ("--sitemap", "http://localhost:1/s.xml"),
            "--sitemap http://localhost:1/s.xml: not on http://127.0.0.1:1/ or",
        ),
    ],
)
def test_a_share_out_of_range_or_a_sitemap_elsewhere_is_refused_before_anything_runs(
    options: tuple[str, ...], message: str, tmp_path: Path
) -> None:
    result = audit("http://127.0.0.1:1/", tmp_path / "audit", *options)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "audit").exists()
