"""``sitemap-crawler check``: a set published by the real crawler, served on 127.0.0.1 and
read back as a search engine reads it; each way of serving it wrong is one finding."""

from __future__ import annotations

import gzip
import itertools
import json
import re
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.check.plan import SetCheck
from crawler.check.sample import Listed, Sampler
from crawler.check.served import decode_content, judge_page, read_served
from crawler.protocol import MAX_BYTES, SITEMAP_NS
from crawler.validate.sets import check_set
from settings import USER_AGENT
from tests.conftest import crawl, run_cli
from tests.raw_site import ENDLESS, RawSite
from tests.served_set import ARTICLES, Answer, CachingProxy, Route, SetServer
from tests.server import SiteServer


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SetServer]:
    """The site, crawled once by the real crawler (gzip shards of 5 URLs), its set served beside its pages."""
    out = tmp_path_factory.mktemp("check") / "public"
    server = SetServer(out).start()
    result = crawl(server.root, out, "--gzip", "--max-urls-per-file", "5", "--no-state")
    assert result.code == 0, result.process.stderr
    assert len(result.listed) == 13
    assert check_set(out / "sitemap.xml", server.root.rstrip("/")) == []
    yield server
    server.stop()


@pytest.fixture
def site(published: SetServer) -> SetServer:
    """The served set as published, robots.txt naming its index, every answer correct."""
    published.routes.clear()
    published.hits.clear()
    published.arrivals.clear()
    published.robots = f"User-agent: *\nAllow: /\nSitemap: {published.root}sitemap.xml\n"
    return published


def check(*args: str) -> tuple[int, list[str], str]:
    process = run_cli("check", *args, timeout=60)
    assert "Traceback" not in process.stderr, process.stderr
    return process.returncode, process.stdout.splitlines(), process.stderr


def findings(*args: str) -> list[dict[str, object]]:
    process = run_cli("check", *args, "--json", timeout=60)
    assert "Traceback" not in process.stderr, process.stderr
    report = json.loads(process.stdout)
    assert process.returncode == (1 if report["errors"] else 0), process.stderr
    return list(report["findings"])


def test_a_correct_set_passes_as_a_search_engine_reads_it(site: SetServer) -> None:
    code, lines, stderr = check(site.root, "--expect", str(site.folder))
    assert (code, lines) == (0, []), stderr
    assert stderr.startswith(f"{site.root}: valid (4 files, 13 URLs read, 13 sampled in "), stderr
    paths = sorted(path for path, _ in site.hits)
    shards = [f"/sitemap-{number}.xml.gz" for number in (1, 2, 3)]
    assert paths == sorted(["/robots.txt", "/sitemap.xml", *shards, "/", *ARTICLES])
    assert {agent for _, agent in site.hits} == {USER_AGENT}


def test_the_json_report_has_the_counts(site: SetServer) -> None:
    process = run_cli("check", site.root + "sitemap.xml", "--json", "--sample", "4", timeout=60)
    report = json.loads(process.stdout)
    assert process.returncode == 0, process.stderr
    assert {key: report[key] for key in ("ok", "errors", "warnings", "files", "urls", "sampled", "findings")} == {
        "ok": True, "errors": 0, "warnings": 0, "files": 4, "urls": 13, "sampled": 4, "findings": [],
    }  # fmt: skip
    assert report["sitemaps"] == [site.root + "sitemap.xml"]


def _typed(content_type: str):  # type: ignore[no-untyped-def]
    return lambda server, body: (200, {"Content-Type": content_type}, body)


def _double_gzip(server: SetServer, body: bytes) -> Answer:
    return 200, {"Content-Type": "application/gzip", "Content-Encoding": "gzip"}, gzip.compress(body)


def _status(status: int, location: str | None = None):  # type: ignore[no-untyped-def]
    headers = {"Content-Type": "text/html"} | ({"Location": location} if location else {})
    return lambda server, body: (status, headers, b"<html><body>gone</body></html>")


def _noindex(server: SetServer, body: bytes) -> Answer:
    html = body.replace(b"<head>", b'<head><meta name="robots" content="noindex">')
    return 200, {"Content-Type": "text/html; charset=utf-8"}, html


def _noindex_header(server: SetServer, body: bytes) -> Answer:
    return 200, {"Content-Type": "text/html; charset=utf-8", "X-Robots-Tag": "googlebot: noindex"}, body


def _canonical(server: SetServer, body: bytes) -> Answer:
    html = body.replace(b"<head>", b'<head><link rel="canonical" href="/article-1.html">')
    return 200, {"Content-Type": "text/html; charset=utf-8"}, html


#: What breaks: (path, route) -> the one finding: rule, and where (the file's name, its line; 0: any).
BREAKAGES: dict[str, tuple[str, Route, str, str, int]] = {
    "index served as text/html": ("/sitemap.xml", _typed("text/html"), "content-type", "sitemap.xml", 1),
    "gzip shard served as application/xml": (
        "/sitemap-1.xml.gz", _typed("application/xml"), "content-type", "sitemap-1.xml.gz", 1,
    ),
    "shard gzipped twice": ("/sitemap-2.xml.gz", _double_gzip, "double-gzip", "sitemap-2.xml.gz", 1),
    "shard not deployed": ("/sitemap-3.xml.gz", _status(404), "status", "sitemap.xml", 5),
    "listed URL now redirects": (
        "/article-3.html", _status(301, "/article-3-new.html"), "sample-redirect", ".xml.gz", 0,
    ),
    "listed URL now gone": ("/article-4.html", _status(410), "sample-status", ".xml.gz", 0),
    "listed URL now noindex": ("/article-5.html", _noindex, "sample-noindex", ".xml.gz", 0),
    "listed URL noindex by header": ("/article-6.html", _noindex_header, "sample-noindex", ".xml.gz", 0),
    "listed URL canonicalised": ("/article-7.html", _canonical, "sample-canonical", ".xml.gz", 0),
}  # fmt: skip


@pytest.mark.parametrize("case", BREAKAGES.values(), ids=list(BREAKAGES))
def test_each_way_of_serving_it_wrong_is_one_finding(site: SetServer, case: tuple[str, Route, str, str, int]) -> None:
    path, route, rule, file, line = case
    site.routes[path] = route
    found = findings(site.root)
    assert [(item["rule"], item["severity"]) for item in found] == [(rule, "error")], found
    assert str(found[0]["file"]).endswith(file), found
    assert line == 0 or found[0]["line"] == line, found
    if rule.startswith("sample-"):
        assert found[0]["loc"] == site.root + path.lstrip("/")
        assert found[0]["line"] > 2, found  # the line of its <loc> in the shard that lists it
    code, lines, stderr = check(site.root)
    assert code == 1 and len(lines) == 1 and f": error: {rule}: " in lines[0], (lines, stderr)
    assert "1 error (" in stderr


def test_a_missing_robots_line_is_a_warning(site: SetServer) -> None:
    site.robots = "User-agent: *\nAllow: /\n"
    for target in (site.root, site.root + "sitemap.xml"):
        code, lines, stderr = check(target)
        assert code == 0, stderr
        assert len(lines) == 1 and lines[0].startswith(f"{site.root}robots.txt:1:1: warning: robots-sitemap: "), lines
        assert "valid, 1 warning (4 files, 13 URLs read" in stderr


def test_robots_rules_are_read_for_our_user_agent(site: SetServer) -> None:
    site.robots = f"User-agent: sitemap-crawler\nDisallow: /article-2.html\nSitemap: {site.root}sitemap.xml\n"
    found = findings(site.root)
    assert [(item["rule"], item["loc"]) for item in found] == [("sample-robots", site.root + "article-2.html")]
    assert "/article-2.html" not in {path for path, _ in site.hits}  # a search engine does not fetch it
    site.robots = f"User-agent: *\nDisallow: /sitemap\nSitemap: {site.root}sitemap.xml\n"
    found = findings(site.root, "--sample", "0")
    assert [(item["rule"], item["file"]) for item in found] == [("robots-blocked", site.root + "robots.txt")] + [
        ("robots-blocked", site.root + "sitemap.xml")
    ] * 3


def test_robots_txt_is_read_through_its_redirects(site: SetServer) -> None:
    robots = f"User-agent: *\nAllow: /\nSitemap: {site.root}sitemap.xml\n".encode()
    site.routes["/robots.txt"] = _status(301, "/robots/robots.txt")
    site.routes["/robots/robots.txt"] = lambda server, body: (200, {"Content-Type": "text/plain"}, robots)
    assert findings(site.root, "--sample", "0") == []


def test_a_robots_txt_redirected_to_another_port_is_not_followed(site: SetServer) -> None:
    other = SiteServer().start()
    try:
        site.routes["/robots.txt"] = _status(301, f"http://127.0.0.1:{other.port}/robots.txt")
        found = findings(site.root, "--sample", "0")
        assert other.paths() == []
        assert [item["rule"] for item in found] == ["robots-sitemap"]  # read as no robots.txt
        assert "robots.txt answers HTTP 301" in str(found[0]["message"])
    finally:
        other.stop()


def test_robots_txt_that_fails_is_an_error(site: SetServer) -> None:
    site.routes["/robots.txt"] = _status(503)
    found = findings(site.root, "--sample", "0")
    assert [(item["rule"], item["severity"]) for item in found] == [("robots", "error")]
    assert "robots.txt answers HTTP 503; a search engine reads the whole site as disallowed" in str(found[0]["message"])


def test_a_stale_index_kept_by_a_caching_proxy(tmp_path: Path) -> None:
    """The public URL is a caching proxy in front of the origin: a new publish reaches the
    origin, the proxy keeps serving the old index."""
    out = tmp_path / "public"
    origin = SetServer(out).start()
    proxy = CachingProxy(origin.root).start()
    try:
        assert crawl(proxy.root, out, "--gzip", "--max-urls-per-file", "5", "--no-state").code == 0
        origin.robots = f"User-agent: *\nAllow: /\nSitemap: {proxy.root}sitemap.xml\n"
        proxy.cache.clear()  # the deploy purges the cache once
        assert check(proxy.root, "--expect", str(out))[:2] == (0, [])  # fresh: the proxy caches this copy
        index = out / "sitemap.xml"  # the next publish: one shard's lastmod changed
        index.write_bytes(
            re.sub(
                rb"<lastmod>[^<]*</lastmod>", b"<lastmod>2026-01-01T00:00:00Z</lastmod>", index.read_bytes(), count=1
            )
        )
        assert check_set(index, proxy.root.rstrip("/")) == []
        found = findings(proxy.root, "--expect", str(out))
        assert [(item["rule"], item["severity"], item["file"]) for item in found] == [
            ("stale", "error", proxy.root + "sitemap.xml")
        ]
    finally:
        proxy.stop()
        origin.stop()


@pytest.fixture
def hanging(site: SetServer) -> Iterator[tuple[SetServer, threading.Event]]:
    """*site* whose routes may wait for an event the test sets at its end (no sleep)."""
    released = threading.Event()
    yield site, released
    released.set()


def _hang(released: threading.Event) -> Route:
    def route(server: SetServer, body: bytes) -> Answer:
        released.wait(timeout=60)
        return 200, {"Content-Type": "application/gzip"}, body

    return route


def test_a_request_that_takes_too_long_is_a_status_error(hanging: tuple[SetServer, threading.Event]) -> None:
    site, released = hanging
    site.routes["/sitemap-2.xml.gz"] = _hang(released)
    # Seconds enough for every other answer on a busy machine; the hanging one never comes.
    found = findings(site.root, "--timeout", "4", "--sample", "0")
    assert [(item["rule"], item["line"]) for item in found] == [("status", 4)], found
    assert "no answer" in str(found[0]["message"]), found
    site.routes.clear()
    site.routes["/article-8.html"] = _hang(released)
    found = findings(site.root, "--timeout", "4")
    assert [(item["rule"], item["loc"]) for item in found] == [("sample-status", site.root + "article-8.html")]
    assert "no answer" in str(found[0]["message"]), found


#: What a check may take beyond its deadline here: Python's and Scrapy's start (2-4 s on a loaded
#: 2-core machine), the closing grace (1 s), the process's exit.
DEADLINE_TOLERANCE = 8.0


def test_the_deadline_ends_the_check_with_an_error(hanging: tuple[SetServer, threading.Event]) -> None:
    """The deadline bounds the whole check: a request in flight longer (its own timeout is 60 s)
    is abandoned, and the check ends within the deadline and a stated tolerance."""
    site, released = hanging
    site.routes["/article-9.html"] = _hang(released)
    started = time.monotonic()
    found = findings(site.root, "--deadline", "4", "--timeout", "60")
    took = time.monotonic() - started
    assert [item["rule"] for item in found] == ["deadline"], found
    assert "1 request unanswered" in str(found[0]["message"]), found
    assert "/article-9.html" in [path for path, _ in site.hits]  # it was in flight at the deadline
    assert took < 4 + DEADLINE_TOLERANCE, took


def test_the_check_keeps_the_crawl_delay_robots_txt_asks_for(site: SetServer) -> None:
    """One request at a time, Crawl-delay apart, measured on the server's own clock (the gaps
    may be shorter by a little: the client's clock starts a delay as it sends)."""
    site.robots = f"User-agent: *\nCrawl-delay: 1.5\nAllow: /\nSitemap: {site.root}sitemap.xml\n"
    code, lines, stderr = check(site.root, "--sample", "2")
    assert (code, lines) == (0, []), stderr
    moments = [moment for moment, _ in site.arrivals]
    assert len(moments) == 7, site.arrivals  # robots.txt, the index, 3 shards, 2 pages
    gaps = [later - earlier for earlier, later in itertools.pairwise(moments[1:])]
    assert min(gaps) >= 1.2, gaps  # from the first request after robots.txt was read


def test_a_429_doubles_the_checks_delay(site: SetServer) -> None:
    """Crawl-delay 0.6, one request at a time; the first shard asked for answered 429: the next
    request waits the doubled delay (1.2 s; at least 1.0 s on the server's clock)."""
    site.robots = f"User-agent: *\nCrawl-delay: 0.6\nAllow: /\nSitemap: {site.root}sitemap.xml\n"
    answered: list[str] = []

    def first_refused(path: str):  # type: ignore[no-untyped-def]
        served = site.routes.get(path) or (lambda server, body: (200, {"Content-Type": "application/gzip"}, body))

        def route(server: SetServer, body: bytes) -> Answer:
            answered.append(path)
            return _status(429)(server, body) if len(answered) == 1 else served(server, body)

        return route

    for number in (1, 2, 3):
        site.routes[f"/sitemap-{number}.xml.gz"] = first_refused(f"/sitemap-{number}.xml.gz")
    found = findings(site.root, "--sample", "0")
    assert [item["rule"] for item in found] == ["status"], found
    moments = [moment for moment, _ in site.arrivals]
    refused = [path for _, path in site.arrivals].index(answered[0])
    assert refused + 1 < len(moments), site.arrivals
    assert moments[refused + 1] - moments[refused] >= 1.0, site.arrivals


def test_a_sample_that_cannot_be_fetched_at_the_crawl_delay_by_the_deadline_is_cut(site: SetServer) -> None:
    """Crawl-delay 1 and 9 s in all: the sitemaps take about 4 s, so a few sampled URLs fit and
    are fetched, the rest are said to be cut, and the check ends before its deadline."""
    site.robots = f"User-agent: *\nCrawl-delay: 1\nAllow: /\nSitemap: {site.root}sitemap.xml\n"
    found = findings(site.root, "--sample", "20", "--deadline", "9")
    assert [item["rule"] for item in found] == ["sample-cut"], found
    cut = re.search(r"leaves time for (\d+) of the (\d+) sampled URLs", str(found[0]["message"]))
    assert cut is not None, found
    room, wanted = int(cut.group(1)), int(cut.group(2))
    pages = [path for _, path in site.arrivals if path.startswith("/article-") or path == "/"]
    assert wanted == 13 and 1 <= room < wanted and len(pages) == room, (room, pages)


def test_the_deadline_ends_a_check_held_by_its_crawl_delay(site: SetServer) -> None:
    """A request waiting out a long Crawl-delay at the deadline is dropped there, not sent later."""
    site.robots = f"User-agent: *\nCrawl-delay: 25\nSitemap: {site.root}sitemap.xml\n"
    started = time.monotonic()
    found = findings(site.root, "--deadline", "3")
    took = time.monotonic() - started
    assert [item["rule"] for item in found] == ["deadline"], found
    assert [path for _, path in site.arrivals] == ["/robots.txt"]
    assert took < 3 + DEADLINE_TOLERANCE, took


def test_a_sitemap_larger_than_the_protocol_allows_is_not_read(site: SetServer) -> None:
    site.routes["/sitemap-1.xml.gz"] = lambda server, body: (
        200,
        {"Content-Type": "application/gzip"},
        bytes(MAX_BYTES + 2),
    )
    found = findings(site.root, "--sample", "0")
    assert [(item["rule"], item["file"]) for item in found] == [("size", site.root + "sitemap-1.xml.gz")], found


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["not a url"], "is not an http(s) URL"),
        (["ftp://example.com/sitemap.xml"], "is not an http(s) URL"),
        (["http://127.0.0.1:99999/"], "bad port"),
        (["http://127.0.0.1/", "--sample", "-1"], "--sample: must be at least 0 (0 to 100,000 URLs), not -1"),
        (["http://127.0.0.1/", "--sample", "many"], "--sample: must be a whole number"),
        (["http://127.0.0.1/", "--timeout", "0"], "--timeout: must be at least 0.1"),
        (["http://127.0.0.1/", "--deadline", "nan"], "--deadline: must be a finite number"),
        (["http://127.0.0.1/", "--expect", "/no/such/folder"], "--expect /no/such/folder: no such folder"),
        ([], "the following arguments are required: URL"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], words: str) -> None:
    code, lines, stderr = check(*args)
    assert (code, lines) == (2, []), stderr
    assert stderr.count("\n") == 1 and stderr.startswith("sitemap-crawler: error: ") and words in stderr, stderr


IN_PROCESS = """\
import json, sys
from pathlib import Path
from crawler.spiders.check import check_published
from settings import USER_AGENT
root, folder = sys.argv[1:]
runs = [
    check_published(root, user_agent=USER_AGENT, expect=Path(folder), sample=3, extra_urls=(root + "new.html",))
    for _ in range(2)  # the second after this process's reactor ran: in a child process
]
print(json.dumps([{**run.as_json(), "elapsed": 0} for run in runs]))
"""


def test_a_crawl_can_run_the_check_in_process_twice(site: SetServer) -> None:
    """What ``crawl --check-published`` calls: the sample plus the URLs the crawl added."""
    process = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, site.root, str(site.folder)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    first, second = json.loads(process.stdout)
    assert first == second
    assert (first["files"], first["urls"], first["sampled"]) == (4, 13, 4)
    assert [(item["rule"], item["file"]) for item in first["findings"]] == [("sample-status", site.root + "new.html")]


# --- the pure rules ---------------------------------------------------------------------------

XML = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}"><url><loc>https://e.com/a</loc></url></urlset>\n'
DATA = XML.encode()

SERVED = {
    "xml as application/xml": ("s.xml", {"content-type": ["application/xml"]}, DATA, []),
    "xml as text/xml with a charset": ("s.xml", {"content-type": ["text/xml; charset=UTF-8"]}, DATA, []),
    "xml as text/plain": ("s.xml", {"content-type": ["text/plain"]}, DATA, ["content-type"]),
    "xml without a Content-Type": ("s.xml", {}, DATA, ["content-type"]),
    "xml gzipped on the fly": (
        "s.xml", {"content-type": ["application/xml"], "content-encoding": ["gzip"]}, gzip.compress(DATA), [],
    ),
    "gzip as application/gzip": ("s.xml.gz", {"content-type": ["application/gzip"]}, gzip.compress(DATA), []),
    "gzip as application/x-gzip": ("s.xml.gz", {"content-type": ["application/x-gzip"]}, gzip.compress(DATA), []),
    "gzip as application/octet-stream": (
        "s.xml.gz", {"content-type": ["application/octet-stream"]}, gzip.compress(DATA), ["content-type"],
    ),
    "gzip as xml with Content-Encoding gzip": (
        "s.xml.gz", {"content-type": ["application/xml"], "content-encoding": ["gzip"]}, gzip.compress(DATA), [],
    ),
    "gzip twice": (
        "s.xml.gz", {"content-type": ["application/gzip"], "content-encoding": ["gzip"]},
        gzip.compress(gzip.compress(DATA)), ["double-gzip"],
    ),
    "deflate on the fly": (
        "s.xml", {"content-type": ["application/xml"], "content-encoding": ["deflate"]}, zlib.compress(DATA), [],
    ),
    "brotli, never asked for": (
        "s.xml", {"content-type": ["application/xml"], "content-encoding": ["br"]}, b"\x0b\x02", ["content-encoding"],
    ),
    "named .gz, plain": ("s.xml.gz", {"content-type": ["application/gzip"]}, DATA, ["content-type", "gzip"]),
    "broken gzip": ("s.xml.gz", {"content-type": ["application/gzip"]}, gzip.compress(DATA)[:-9], ["gzip"]),
}  # fmt: skip


@pytest.mark.parametrize("case", SERVED.values(), ids=list(SERVED))
def test_how_a_sitemap_is_served(case: tuple[str, dict[str, list[str]], bytes, list[str]]) -> None:
    name, headers, raw, rules = case
    served = read_served("https://e.com/" + name, headers, raw)
    assert [rule for rule, _ in served.problems] == rules
    if "gzip" not in rules and "content-encoding" not in rules:
        assert served.document == DATA


def test_decoding_stops_past_the_protocols_limit() -> None:
    bomb = gzip.compress(b"\0" * (MAX_BYTES + 5_000_000))
    assert len(decode_content(bomb, "gzip")) == MAX_BYTES + 1
    served = read_served("https://e.com/s.xml.gz", {"content-type": ["application/gzip"]}, bomb)
    assert served.document is not None and len(served.document) == MAX_BYTES + 1  # validate's size rule sees it


PAGE = b'<html><head><link rel="canonical" href="http://e.com:80/a#top"></head><body>a</body></html>'


@pytest.mark.parametrize(
    ("status", "headers", "body", "rules"),
    [
        (200, {"content-type": ["text/html"]}, PAGE, []),  # canonical to itself, spelled otherwise
        (200, {"content-type": ["text/html"], "x-robots-tag": ["bingbot: noindex"]}, PAGE, []),  # not for us
        (200, {"content-type": ["text/html"], "x-robots-tag": ["none"]}, PAGE, ["sample-noindex"]),
        (200, {"content-type": ["application/pdf"], "x-robots-tag": ["noindex"]}, b"%PDF", ["sample-noindex"]),
        (
            200,
            {"content-type": ["text/html"], "link": ['<http://e.com/b>; rel="canonical"']},
            PAGE,
            ["sample-canonical"],
        ),
        (302, {"location": ["/b"]}, b"", ["sample-redirect"]),
        (500, {}, b"", ["sample-status"]),
    ],
)
def test_what_keeps_a_listed_url_out_of_the_index(
    status: int, headers: dict[str, list[str]], body: bytes, rules: list[str]
) -> None:
    assert [rule for rule, _ in judge_page("http://e.com/a", status, headers, body, "googlebot")] == rules


def _listed(shard: int, count: int) -> list[Listed]:
    return [Listed(f"https://e.com/{shard}/{n}", f"s{shard}", n + 3, 6) for n in range(count)]


def test_the_sample_is_spread_over_the_shards_and_the_same_in_any_order() -> None:
    shards = {1: _listed(1, 100), 2: _listed(2, 1), 3: _listed(3, 100)}
    samples = []
    for order in ([1, 2, 3], [3, 2, 1]):
        sampler = Sampler(9, 3)
        for shard in order:
            for listed in reversed(shards[shard]) if shard == 3 else shards[shard]:
                sampler.offer(shard, listed)
        samples.append(sampler.chosen())
    assert samples[0] == samples[1]
    assert sorted(Counter(listed.file for listed in samples[0]).items()) == [("s1", 4), ("s2", 1), ("s3", 4)]
    assert Sampler(0, 3).chosen() == []


@pytest.mark.slow  # 50,000 URLs written and read back: seconds, not the fast lane
def test_a_50000_url_shard_is_read_in_bounded_memory() -> None:
    root = "https://www.example.com/"
    entries = "".join(
        f"<url><loc>{root}articles/{n:06d}/the-slug-of-page-{n}.html</loc>"
        f"<lastmod>2026-01-{n % 28 + 1:02d}</lastmod></url>\n"
        for n in range(50_000)
    )
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n{entries}</urlset>\n'.encode()
    plan = SetCheck(root + "sitemap-1.xml.gz", user_agent=USER_AGENT, sample=50)
    (robots,) = plan.start()
    (shard,) = plan.answered(robots, 200, {}, f"Sitemap: {root}sitemap-1.xml.gz\n".encode())
    raw = gzip.compress(body)
    tracemalloc.start()
    try:
        pages = plan.answered(shard, 200, {"content-type": ["application/gzip"]}, raw)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (plan.result.urls, len(pages), plan.result.findings) == (50_000, 50, [])
    assert kept < 12_000_000  # validate's hashes of the locs seen, the sample: never the locs themselves
    assert peak < 4 * len(body)


def test_another_tools_sitemap_beside_ours_is_said_once_not_called_stale(site: SetServer) -> None:
    """WordPress names its own wp-sitemap.xml in robots.txt: no old copy of ours, nothing to delete."""
    entry = f"<sitemap><loc>{site.root}wp-sitemap-posts-1.xml</loc></sitemap>"
    wp_index = f'<sitemapindex xmlns="{SITEMAP_NS}">{entry}</sitemapindex>'
    wp_posts = f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.root}</loc></url></urlset>'
    xml = {"Content-Type": "application/xml"}
    site.routes["/wp-sitemap.xml"] = lambda server, _: (200, xml, wp_index.encode())
    site.routes["/wp-sitemap-posts-1.xml"] = lambda server, _: (200, xml, wp_posts.encode())
    site.robots = f"User-agent: *\nSitemap: {site.root}sitemap.xml\nSitemap: {site.root}wp-sitemap.xml\n"
    found = findings(site.root, "--expect", str(site.folder))
    assert [(f["rule"], f["severity"]) for f in found if f["rule"] != "duplicate"] == [("other-sitemap", "warning")], [
        (f["rule"], f["message"]) for f in found
    ]
    assert "another tool's sitemap" in str(found[0]["message"])
    site.robots = f"User-agent: *\nSitemap: {site.root}sitemap.xml\nSitemap: {site.root}sitemap-old.xml\n"
    site.routes["/sitemap-old.xml"] = lambda server, _: (200, xml, wp_posts.encode())
    stale = findings(site.root, "--expect", str(site.folder))
    assert "stale" in [f["rule"] for f in stale]  # a name of our set's, not in the folder: an old file of ours


def _with_locs(locs: list[str]) -> Route:
    """The first shard as published, with *locs* added before its end."""

    def route(server: SetServer, body: bytes) -> Answer:
        extra = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs).encode()
        shard = gzip.decompress(body).replace(b"</urlset>", extra + b"</urlset>")
        return 200, {"Content-Type": "application/gzip"}, gzip.compress(shard)

    return route


def test_a_loc_on_another_origin_is_a_finding_and_never_fetched(site: SetServer) -> None:
    """A checked site cannot make the checker request another host or port of its network."""
    other = SiteServer().start()
    try:
        elsewhere = [f"http://127.0.0.1:{other.port}/secret/{n}" for n in range(60)]
        site.routes["/sitemap-1.xml.gz"] = _with_locs([*elsewhere, "http://localhost:9/x"])
        found = findings(site.root, "--sample", "100")
        assert other.paths() == []  # not one request, though 61 of the 74 locs are elsewhere
        hosts = [item for item in found if item["rule"] == "host"]
        assert len(hosts) == 61 and all(str(item["message"]).endswith(site.root.rstrip("/")) for item in hosts)
        assert not [item for item in found if str(item["rule"]).startswith("sample-")]
    finally:
        other.stop()


def test_expect_reads_no_file_outside_its_folder(site: SetServer, tmp_path: Path) -> None:
    """An index entry whose path decodes to an absolute one (``%2F``) is no way out of --expect DIR:
    the file it names is never read (read, it would be compared and said to differ)."""
    out = tmp_path / "expect"
    out.mkdir()
    secret = tmp_path / "secret.xml"
    secret.write_bytes(b"<urlset>a file outside DIR</urlset>")
    path = "/" + str(secret).replace("/", "%2F")
    index = f'<sitemapindex xmlns="{SITEMAP_NS}"><sitemap><loc>{site.root}{path[1:]}</loc></sitemap></sitemapindex>'
    served = f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.root}a</loc></url></urlset>'
    site.routes["/sitemap.xml"] = lambda server, body: (200, {"Content-Type": "application/xml"}, index.encode())
    site.routes[path] = lambda server, body: (200, {"Content-Type": "application/xml"}, served.encode())
    found = findings(site.root, "--expect", str(out))
    stale = {str(item["file"]): str(item["message"]) for item in found if item["rule"] == "stale"}
    assert f"{site.root}{path[1:]}" in stale  # asked for: the server has it, DIR has not
    assert not [message for message in stale.values() if str(secret) in message and "differs" in message]


def test_an_endless_body_is_a_size_finding_in_check_and_validate() -> None:
    """A sitemap whose chunked body never ends is read up to the protocol's limit, then said to be
    too large, in the same rule by both commands (not a download that was 'cancelled')."""
    robots = ("text/plain", b"User-agent: *\nAllow: /\n")
    server = RawSite({"/robots.txt": robots, "/sitemap.xml": ENDLESS}).start()
    try:
        found = findings(server.url + "sitemap.xml", "--sample", "0")
        sizes = [item for item in found if item["rule"] == "size"]
        assert len(sizes) == 1 and "larger than 52428800 bytes" in str(sizes[0]["message"]), found
        validated = run_cli("validate", server.url + "sitemap.xml", timeout=60)
        assert validated.returncode == 1, validated.stderr
        assert ": error: size: larger than 52428800 bytes" in validated.stdout, validated.stdout
    finally:
        server.stop()
