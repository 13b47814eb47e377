"""`coverage`: the access log of a real nginx, written while the test fetches the site as
crawlers would (user agents of Googlebot and GPTBot, from loopback addresses the test's own
--bot-ranges file gives them), plus a rotated, gzipped older log with public and IPv6
addresses, a malformed and a non-UTF-8 line; joined with the set and the report of a crawl of
the same nginx.
"""

from __future__ import annotations

import gzip
import http.client
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import lxml.html
import pytest

from crawler.coverage.crawlers import load_ranges
from tests.conftest import CLI, run_cli, sitemap_locs
from tests.local_server import LocalServer
from tests.realapps.nginx import Nginx, nginx_binary

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
#: The test's ranges: Googlebot from 127.0.0.2 (and Google's own addresses, for the written log),
#: GPTBot from 127.0.0.3. A Googlebot agent from 127.0.0.1 is spoofed.
RANGES = {
    "collected": "2026-12-01",
    "crawlers": {
        "Googlebot": {"sources": ["test"], "ranges": ["127.0.0.2/32", "66.249.64.0/27", "2001:4860:4801:10::/64"]},
        "GPTBot": {"sources": ["test"], "ranges": ["127.0.0.3/32"]},
    },
}


#: A query parameter name a visitor wrote: shown as text in the HTML report, never run.
PLANTED = "%3Cscript%3Edocument.title%3D%27pwned%27%3C%2Fscript%3E"


def page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


def site_files(root: Path) -> None:
    links = "".join(
        f'<a href="{path}">{path}</a>'
        for path in ("/a.html", "/b.html", "/noindex.html", "/dup.html", "/docs", "/private/secret.html")
    )
    files = {
        "index.html": page(links),
        "a.html": page("a"),
        "b.html": page("b", '<meta property="article:modified_time" content="2026-12-01T12:00:00Z">'),
        "noindex.html": page("n", '<meta name="robots" content="noindex">'),
        "dup.html": page("a", '<link rel="canonical" href="/a.html">'),
        "docs/index.html": page("docs"),
        "private/secret.html": page("secret"),
        "robots.txt": "User-agent: *\nDisallow: /private/\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")


def fetch(port: int, path: str, agent: str, source: str) -> int:
    """One GET from *source* (a loopback address), as a crawler with *agent* would send it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        connection.request("GET", path, headers={"User-Agent": agent})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


#: (source address, agent, path, times): what the "crawlers" ask of nginx.
VISITS = [
    ("127.0.0.2", GOOGLEBOT, "/", 2),
    ("127.0.0.2", GOOGLEBOT, "/a.html", 1),
    ("127.0.0.2", GOOGLEBOT, "/noindex.html", 3),
    ("127.0.0.2", GOOGLEBOT, "/docs", 1),  # nginx: 301 to /docs/
    ("127.0.0.2", GOOGLEBOT, "/private/secret.html", 1),  # robots.txt disallows it
    ("127.0.0.2", GOOGLEBOT, "/gone.html", 2),  # 404: the crawl never met it
    ("127.0.0.2", GOOGLEBOT, "/a.html?sort=1", 2),  # parameter variants the crawl never met
    ("127.0.0.2", GOOGLEBOT, "/a.html?sort=2&page=3", 1),
    ("127.0.0.3", GPTBOT, "/b.html", 2),
    ("127.0.0.3", GPTBOT, "/dup.html", 1),
    ("127.0.0.3", GPTBOT, f"/dup.html?{PLANTED}=1", 1),  # a parameter name that is markup
    ("127.0.0.1", GOOGLEBOT, "/a.html", 4),  # spoofed: not Google's address
]


def old_log(path: Path) -> None:
    """A rotated, gzipped log from before the crawl: Google's own IPv4 and IPv6 addresses, a line
    older than the window, a malformed line and one that is not UTF-8."""
    lines = [
        b'66.249.64.5 - - [01/Dec/2026:10:00:00 +0000] "GET /b.html HTTP/1.1" 200 99 "-" "' + GOOGLEBOT.encode() + b'"',
        b'2001:4860:4801:10::7 - - [02/Dec/2026:10:00:00 +0000] "GET /b.html HTTP/1.1" 200 99 "-" "'
        + GOOGLEBOT.encode() + b'"',
        b'66.249.64.5 - - [01/Jan/2020:10:00:00 +0000] "GET /a.html HTTP/1.1" 200 99 "-" "' + GOOGLEBOT.encode() + b'"',
        b"this is no log line",
        b'66.249.64.5 - - [02/Dec/2026:10:00:00 +0000] "GET /caf\xe9 HTTP/1.1" 404 9 "-" "Googlebot"',
    ]  # fmt: skip
    with gzip.open(path, "wb") as handle:
        handle.write(b"\n".join(lines) + b"\n")


@dataclass
class Coverage:
    origin: str
    document: dict[str, Any]
    stderr: str
    html: Path

    def url(self, path: str) -> dict[str, Any]:
        rows = {row["url"]: row for row in self.document["urls"]}
        return rows[self.origin + path]


@pytest.fixture(scope="module")
def covered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Coverage]:
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    folder = tmp_path_factory.mktemp("coverage")
    root = folder / "site"
    root.mkdir()
    site_files(root)
    with Nginx(root, folder / "nginx", log_format="combined") as nginx:
        out = folder / "out"
        crawl = run_cli("crawl", nginx.origin + "/", "--out", str(out), "--delay", "0", "-q")
        assert crawl.returncode == 0, crawl.stderr
        listed = [nginx.origin + path for path in ("/", "/a.html", "/b.html", "/docs/")]
        assert sorted(sitemap_locs(out, nginx.origin)) == listed  # a valid set, what coverage joins with
        for source, agent, path, times in VISITS:
            for _ in range(times):
                fetch(nginx.port, path, agent, source)
    ranges = folder / "ranges.json"
    ranges.write_text(json.dumps(RANGES), "utf-8")
    rotated = folder / "access.log.2.gz"
    old_log(rotated)
    result = run_cli(
        "coverage", str(out), "--logs", str(rotated), "--logs", str(nginx.access_log), "--bot-ranges", str(ranges),
        "--json", "--days", "30", "--html", str(folder / "coverage.html"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    yield Coverage(nginx.origin, json.loads(result.stdout), result.stderr, folder / "coverage.html")


def test_every_listed_url_is_a_row_of_its_own(covered: Coverage) -> None:
    listed = sorted(row["url"] for row in covered.document["urls"] if row["listed"])
    assert listed == [covered.origin + path for path in ("/", "/a.html", "/b.html", "/docs/")]
    assert covered.document["listed"] == 4


def test_verified_fetches_are_counted_exactly_per_url_and_crawler(covered: Coverage) -> None:
    assert covered.url("/")["fetches"] == {"Googlebot": 2}
    assert covered.url("/a.html")["fetches"] == {"Googlebot": 1}  # the spoofed four are not counted
    assert covered.url("/b.html")["fetches"] == {"GPTBot": 2, "Googlebot": 2}  # IPv4 and IPv6 from the old log
    assert covered.url("/docs/")["fetches"] == {}
    assert covered.url("/b.html")["statuses"] == {"200": 4}


def test_what_crawlers_fetch_that_is_not_listed_says_why(covered: Coverage) -> None:
    assert (covered.url("/noindex.html")["reason"], covered.url("/noindex.html")["fetches"]) == (
        "noindex",
        {"Googlebot": 3},
    )
    assert covered.url("/docs")["reason"] == "redirect" and covered.url("/docs")["statuses"] == {"301": 1}
    assert covered.url("/private/secret.html")["reason"] == "robots"
    assert covered.url("/dup.html")["reason"] == "canonicalised"
    gone = covered.url("/gone.html")
    assert (gone["reason"], gone["statuses"], gone["listed"]) == ("not-met", {"404": 2}, False)
    google = covered.document["crawlers"]["Googlebot"]
    assert google["fetches"] == 15
    assert {reason: entry["fetches"] for reason, entry in google["not_listed"].items()} == {
        "noindex": 3, "not-met": 5, "redirect": 1, "robots": 1,
    }  # fmt: skip
    assert google["not_met_statuses"] == {"200": 3, "404": 2}  # the line that is not UTF-8 is skipped
    assert google["not_listed"]["noindex"]["share"] == 20.0


def test_listed_urls_no_crawler_fetched_are_counted_per_crawler(covered: Coverage) -> None:
    crawlers = covered.document["crawlers"]
    assert (crawlers["Googlebot"]["listed_fetched"], crawlers["Googlebot"]["listed_not_fetched"]) == (3, 1)
    assert (crawlers["GPTBot"]["listed_fetched"], crawlers["GPTBot"]["listed_not_fetched"]) == (1, 3)
    assert "Googlebot: 15 fetches; 3 listed URLs fetched, 1 never" in covered.stderr


def test_spoofed_malformed_and_old_lines_are_counted_apart(covered: Coverage) -> None:
    document = covered.document
    assert document["spoofed"] == {"Googlebot": 4}
    assert (document["logs"]["malformed"], document["logs"]["not_utf8"]) == (1, 1)
    assert covered.url("/a.html")["fetches"] == {"Googlebot": 1}  # the 2020 fetch is out of the window
    assert "Spoofed" in covered.stderr and "Googlebot 4" in covered.stderr


BAD = [
    (["--logs", "/nonexistent.log"], "--logs /nonexistent.log: no such file"),
    (["--logs", "-", "--log-format", "$remote_addr $status"], "the log format has no $time_local"),
    (["--logs", "-", "--bot-ranges", "/nonexistent.json"], "/nonexistent.json: not readable as JSON"),
    (["--logs", "-", "--html", "/nonexistent/page.html"], "--html /nonexistent/page.html: give a file in a folder"),
    (["--logs", "-", "--html", "/tmp"], "--html /tmp: give a file in a folder that exists"),
    (["--logs", "-", "--state", "/tmp"], "--state /tmp: not a file"),
]


@pytest.mark.parametrize(("options", "words"), BAD, ids=[words for _, words in BAD])
def test_a_wrong_option_is_one_line_and_exit_2(
    covered: Coverage, tmp_path: Path, options: list[str], words: str
) -> None:
    out = tmp_path / "set"
    out.mkdir()
    (out / ".sitemap-manifest.json").write_text('{"index": "sitemap.xml", "files": {}}')
    result = run_cli("coverage", str(out), *options)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr, result.stderr


class _Sources(BaseHTTPRequestHandler):
    """An operator's files: GPTBot's in Google's shape, ClaudeBot's as a plain list, DuckDuckBot's gone."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        files = {
            "/gptbot.json": {"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}, {"ipv6Prefix": "2001:db8::/32"}]},
            "/claude.json": ["198.51.100.7/32", "not a range", {"nested": "203.0.113.0/25"}],
        }  # fmt: skip
        body = json.dumps(files[self.path]).encode() if self.path in files else b"gone"
        self.send_response(200 if self.path in files else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_ranges_are_refreshed_from_their_sources_and_a_failed_one_is_kept(tmp_path: Path) -> None:
    server = LocalServer(_Sources).start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        start = tmp_path / "old.json"
        start.write_text(json.dumps({"collected": "2020-01-01", "crawlers": {
            "GPTBot": {"sources": [f"{base}/gptbot.json"], "ranges": ["10.0.0.0/8"]},
            "ClaudeBot": {"sources": [f"{base}/claude.json"], "ranges": ["10.0.0.0/8"]},
            "DuckDuckBot": {"sources": [f"{base}/gone.json"], "ranges": ["10.1.0.0/16"]},
        }}))  # fmt: skip
        output = tmp_path / "new.json"
        process = subprocess.run(
            [sys.executable, "-m", "crawler.coverage.refresh", str(output), "--from", str(start)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        server.stop()
    assert process.returncode == 1, process.stderr  # one crawler kept its old ranges
    assert "DuckDuckBot: HTTP 404: its old ranges are kept" in process.stderr
    document = json.loads(output.read_text())
    crawlers = document["crawlers"]
    assert crawlers["GPTBot"]["ranges"] == ["192.0.2.0/24", "2001:db8::/32"]
    assert crawlers["ClaudeBot"]["ranges"] == ["198.51.100.7/32", "203.0.113.0/25"]
    assert crawlers["DuckDuckBot"]["ranges"] == ["10.1.0.0/16"] and document["kept"] == ["DuckDuckBot"]
    assert load_ranges(output).vouches("GPTBot", "2001:db8::5")


def test_each_query_parameter_says_what_it_cost_and_the_line_that_stops_it(covered: Coverage) -> None:
    parameters = {entry["name"]: entry for entry in covered.document["parameters"]}
    sort = parameters["sort"]
    assert (sort["urls"], sort["values"], sort["listed"], sort["fetches"]) == (2, 2, 0, 3)
    assert sort["excluded"] == {"not-met": 2}
    assert sort["suggested"] == ["Disallow: /*?sort=", "Disallow: /*&sort="]
    assert (parameters["page"]["urls"], parameters["page"]["fetches"]) == (1, 1)
    assert "sort: 3 fetches of 2 URLs (2 values); robots.txt: Disallow: /*?sort= and Disallow: /*&sort=" in (
        covered.stderr
    )
    page = lxml.html.fromstring(covered.html.read_bytes())
    row = page.xpath('//table[@id="parameters"]//tr[td/code="sort"]/td')
    assert [cell.text_content() for cell in row[1:4]] == ["2", "2", "0"]  # URLs, values, listed


def test_the_section_chart_counts_each_listed_url_once(covered: Coverage) -> None:
    """/b.html was fetched on three days, by two crawlers: still one listed URL of four, and /docs/
    the one no crawler fetched."""
    page = lxml.html.fromstring(covered.html.read_bytes())
    titles = page.xpath('//*[@id="sections"]//*[local-name()="title"]/text()')
    assert titles == ["1 of 4 listed URLs never fetched by a verified crawler"]


def test_how_long_a_change_waited_for_each_crawler(covered: Coverage) -> None:
    """/b.html changed on 1 December at noon (its lastmod): Googlebot fetched it at 10:00 that
    morning (before) and on 2 December at 10:00 (22 h after); GPTBot today. No other listed URL
    has a lastmod."""
    crawlers = covered.document["crawlers"]
    assert crawlers["Googlebot"]["after_change"] == {
        "refetched": 1, "median_hours": 22.0, "p90_hours": 22.0, "not_refetched": 0,
    }  # fmt: skip
    assert crawlers["GPTBot"]["after_change"]["refetched"] == 1
    assert "fetched 1 listed URLs again after their lastmod (median 22.0 h, 90% within 22.0 h); 0 not since" in (
        covered.stderr
    )


# --- a set written by hand: what OUT, the report and the logs may hold --------------------------------

SITE = "https://www.example.com"


def hand_set(out: Path, locs: dict[str, list[str]], report: list[dict[str, object]] | None = None) -> Path:
    """A set in OUT as the exporter writes it: one file per section (``""``: none), a manifest;
    the crawl report beside it when given."""
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for section, urls in locs.items():
        name = f"sitemap-{section}-1.xml" if section else "sitemap-1.xml"
        body = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
        (out / name).write_text(f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>')
        files[name] = {}
    (out / ".sitemap-manifest.json").write_text(json.dumps({"index": "sitemap.xml", "files": files}))
    if report is not None:
        lines = [json.dumps(line) for line in report]
        (out.parent / f"{out.name}.crawl-report.jsonl").write_text("\n".join(lines) + "\n")
    return out


def log_line(path: str, address: str = "66.249.64.1", agent: str = GOOGLEBOT, status: int = 200) -> str:
    return f'{address} - - [04/Dec/2026:10:00:00 +0000] "GET {path} HTTP/1.1" {status} 1 "-" "{agent}"'


def test_a_set_that_names_files_outside_its_folder_is_never_read_there(tmp_path: Path) -> None:
    out = hand_set(tmp_path / "out", {"": [f"{SITE}/a"]})
    (tmp_path / "secret.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{SITE}/s</loc></url></urlset>'
    )
    names = ("sitemap-1.xml", "../secret.xml", "x/../../secret.xml", str(tmp_path / "secret.xml"), "/etc/passwd")
    manifest = {"index": "sitemap.xml", "files": {name: {} for name in names}}
    (out / ".sitemap-manifest.json").write_text(json.dumps(manifest))
    (out / "sitemap-2.xml").symlink_to(tmp_path / "secret.xml")
    log = tmp_path / "access.log"
    log.write_text(log_line("/a") + "\n")
    result = run_cli("coverage", str(out), "--logs", str(log), "--json")
    assert result.returncode == 0, result.stderr
    assert [row["url"] for row in json.loads(result.stdout)["urls"] if row["listed"]] == [f"{SITE}/a"]
    manifest["files"]["sitemap-2.xml"] = {}  # a file of the set that is a symlink: refused, named
    (out / ".sitemap-manifest.json").write_text(json.dumps(manifest))
    refused = run_cli("coverage", str(out), "--logs", str(log))
    assert refused.returncode == 2 and "sitemap-2.xml: not a readable sitemap" in refused.stderr, refused.stderr
    (out / ".sitemap-manifest.json").write_text("[")
    broken = run_cli("coverage", str(out), "--logs", str(log))
    assert broken.returncode == 2 and "not a manifest of sitemap-crawler's" in broken.stderr, broken.stderr
    assert "Traceback" not in refused.stderr + broken.stderr


def test_without_a_report_reasons_are_unknown_and_an_explicit_one_must_exist(tmp_path: Path) -> None:
    out = hand_set(tmp_path / "out", {"": [f"{SITE}/a"]})
    log = tmp_path / "access.log"
    log.write_text(log_line("/noindexed") + "\n")
    result = run_cli("coverage", str(out), "--logs", str(log), "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["url"]: row for row in json.loads(result.stdout)["urls"]}
    assert rows[f"{SITE}/noindexed"]["reason"] == "no-report"  # never called an orphan
    assert "No crawl report (no-report)" in result.stderr
    missing = run_cli("coverage", str(out), "--logs", str(log), "--report", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "--report" in missing.stderr and "no such file" in missing.stderr


def test_hosts_sections_ranges_and_stdin_are_each_what_they_say(tmp_path: Path) -> None:
    """A log without $host beside a set of several hosts counts none of its lines for a host; a
    section no crawler fetched is a row of its own; a crawler the ranges file does not know is
    not verifiable (never "spoofed"); a gzipped log on standard input is read."""
    out = tmp_path / "out"
    hand_set(out / "www.example.com", {"": [f"{SITE}/a"]})
    hand_set(out / "blog.example.com", {"": ["https://blog.example.com/p"]})
    log = tmp_path / "access.log"
    log.write_text(log_line("/a") + "\n")
    several = run_cli("coverage", str(out), "--logs", str(log), "--json")
    assert json.loads(several.stdout)["logs"]["other_hosts"] == 1, several.stderr
    assert "name no host while OUT holds several" in several.stderr
    single = hand_set(tmp_path / "single", {"blog": [f"{SITE}/b1", f"{SITE}/b2"], "pages": [f"{SITE}/a"]})
    ranges = tmp_path / "ranges.json"
    ranges.write_text(json.dumps({"crawlers": {"Googlebot": {"ranges": ["66.249.64.0/27"]}}}))
    gptbot = log_line("/a", "4.227.36.1", "GPTBot/1.2")
    zipped = gzip.compress((log_line("/a") + "\n" + gptbot + "\n").encode())
    process = subprocess.run(
        [str(CLI), "coverage", str(single), "--logs", "-", "--bot-ranges", str(ranges), "--json"],
        input=zipped, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    document = json.loads(process.stdout)
    assert document["crawlers"]["Googlebot"]["sections"] == {
        "blog": {"listed": 2, "fetched": 0}, "pages": {"listed": 1, "fetched": 1},
    }  # fmt: skip
    assert (document["spoofed"], document["unverifiable"]) == ({}, {"GPTBot": 1})


def test_a_log_given_twice_is_read_once_and_a_log_without_agents_says_so(tmp_path: Path) -> None:
    out = hand_set(tmp_path / "out", {"": [f"{SITE}/a"]})
    log = tmp_path / "access.log"
    log.write_text(log_line("/a") + "\n")
    (tmp_path / "access.log.1").hardlink_to(log)  # a rotated name of the same file
    twice = run_cli("coverage", str(out), "--logs", str(log), "--logs", str(tmp_path / "access.log.1"), "--json")
    assert twice.returncode == 0, twice.stderr
    document = json.loads(twice.stdout)
    assert document["crawlers"]["Googlebot"]["fetches"] == 1 and document["logs"]["lines"] == 1
    assert document["logs"]["given_twice"] == [str(tmp_path / "access.log.1")]
    assert f"Given twice, read once: {tmp_path / 'access.log.1'}" in twice.stderr
    common = tmp_path / "common.log"
    common.write_text('66.249.64.1 - - [04/Dec/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1\n')
    blind = run_cli("coverage", str(out), "--logs", str(common), "--json")
    assert json.loads(blind.stdout)["logs"]["no_agent"] == 1
    assert "names its user agent (the common format?)" in blind.stderr
    assert "names its user agent" not in twice.stderr
    common.write_text(common.read_text() + log_line("/a") + "\n")  # one combined line among them
    mixed = run_cli("coverage", str(out), "--logs", str(common))
    assert "1 request of the logs names no user agent (the common format?)" in mixed.stderr


def test_a_set_of_several_hosts_gets_each_hosts_figures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    hand_set(out / "www.example.com", {"": [f"{SITE}/a", f"{SITE}/b"]})
    hand_set(out / "blog.example.com", {"": ["https://blog.example.com/p"]})
    log = tmp_path / "access.log"
    with_host = [line.replace(' - - [', f' {host} [', 1) for line, host in [
        (log_line("/a"), "www.example.com"), (log_line("/p"), "blog.example.com"),
        (log_line("/x"), "Blog.example.com:443"),
    ]]  # fmt: skip
    log.write_text("\n".join(with_host) + "\n")
    log_format = (
        '$remote_addr $host [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"'
    )
    page = tmp_path / "coverage.html"
    done = run_cli("coverage", str(out), "--logs", str(log), "--log-format", log_format, "--json", "--html", str(page))
    assert done.returncode == 0, done.stderr
    hosts = page.read_text().partition('id="hosts"')[2].partition("</table>")[0]
    assert '<td>https://blog.example.com/</td><td class="num">1</td><td>Googlebot 1</td>' in hosts
    assert json.loads(done.stdout)["hosts"] == {
        "https://blog.example.com/": {
            "listed": 1, "crawlers": {"Googlebot": {"fetches": 2, "listed_fetched": 1, "listed_not_fetched": 0}},
        },
        "https://www.example.com/": {
            "listed": 2, "crawlers": {"Googlebot": {"fetches": 1, "listed_fetched": 1, "listed_not_fetched": 1}},
        },
    }  # fmt: skip
    assert "  https://www.example.com/: 2 listed URLs; Googlebot fetched 1" in done.stderr


def test_the_logs_read_by_several_processes_count_what_one_process_counts(tmp_path: Path) -> None:
    """Plain files cut at line starts into pieces for two workers, gzip files whole: the same
    document as one process, whatever lies across a cut (a line over 64 KiB, bytes that are not
    UTF-8, CRLF and blank lines, a gzip file cut short)."""
    out = hand_set(tmp_path / "out", {"": [f"{SITE}/p/{n}" for n in range(40)]})
    lines = []
    for n in range(600):
        address = ("66.249.64.1", "203.0.113.7", "198.51.100.1")[n % 3]  # verified, spoofed, a visitor
        agent = GOOGLEBOT if n % 3 != 2 else "Mozilla/5.0 Firefox/130.0"
        line = log_line(f"/p/{n % 50}?sort={n % 4}" if n % 7 == 0 else f"/p/{n % 50}", address, agent, 200 + n % 2)
        lines.append(
            line.replace("10:00:00", f"{n % 24:02d}:{n % 60:02d}:00").replace("04/Dec", f"{1 + n % 9:02d}/Dec")
        )
    body = "\n".join(lines).encode()
    middle = len(body) // 2
    body = body[:middle] + b"\n" + b"x" * 70_000 + b"\n\xff\xfe broken\r\n\n" + body[middle:] + b"\r\n"
    plain = tmp_path / "access.log"
    plain.write_bytes(body)
    zipped = tmp_path / "access.log.2.gz"
    zipped.write_bytes(gzip.compress(("\n".join(lines[:100]) + "\n").encode()))
    cut_short = tmp_path / "access.log.3.gz"
    cut_short.write_bytes(gzip.compress(("\n".join(lines[100:300]) + "\n").encode())[:-30])
    logs = ["--logs", str(plain), "--logs", str(zipped), "--logs", str(cut_short)]
    one = run_cli("coverage", str(out), *logs, "--json", "--jobs", "1")
    several = run_cli("coverage", str(out), *logs, "--json", "--jobs", "2")
    assert one.returncode == several.returncode == 0, one.stderr + several.stderr
    assert json.loads(several.stdout) == json.loads(one.stdout)
    document = json.loads(one.stdout)
    assert document["logs"]["malformed"] == 1 and document["logs"]["not_utf8"] == 1, document["logs"]
    assert document["logs"]["requests"] > 700  # the gzip cut short counts as far as it reads
    assert document["logs"]["broken_files"] == [str(cut_short)] and document["spoofed"]["Googlebot"] > 0
    assert several.stderr == one.stderr


def test_apaches_vhost_name_picks_a_set_but_never_loses_a_fetch(tmp_path: Path) -> None:
    """%v is the server's name, not the Host asked for: Debian's default vhost logs the
    machine's name. A name of a set picks it; any other is the one set's, never another host's."""
    single = hand_set(tmp_path / "single", {"": [f"{SITE}/a"]})
    log = tmp_path / "access.log"
    names = ["www.example.com:443", "web01.localdomain:443", "[2001:db8::1]:443"]
    log.write_text("".join(f"{name} {log_line('/a')}\n" for name in names))
    done = run_cli("coverage", str(single), "--logs", str(log), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["crawlers"]["Googlebot"]["fetches"] == 3 and document["logs"]["other_hosts"] == 0
    several = tmp_path / "several"
    hand_set(several / "www.example.com", {"": [f"{SITE}/a"]})
    hand_set(several / "blog.example.com", {"": ["https://blog.example.com/a"]})
    log.write_text(f"blog.example.com:443 {log_line('/a')}\nweb01.localdomain:443 {log_line('/a')}\n")
    done = run_cli("coverage", str(several), "--logs", str(log), "--json")
    document = json.loads(done.stdout)
    assert document["hosts"]["https://blog.example.com/"]["crawlers"]["Googlebot"]["fetches"] == 1
    assert "Googlebot" not in document["hosts"]["https://www.example.com/"]["crawlers"]
    assert document["logs"]["other_hosts"] == 1  # with several sets, a machine's name is no set's


def test_a_url_the_crawl_no_longer_meets_says_what_earlier_crawls_knew(tmp_path: Path) -> None:
    """Two crawls with their state store: /old was listed by the first and is linked from nowhere
    at the second. Googlebot still fetches it: not met, and the state store says it was listed;
    /never is a URL the site never had. A --state that is no state store is one line, exit 2."""
    from tests.hosts_site import HostsSite, html, resolve_options

    host = "www.state.test"
    pages = {"/": html('home <a href="/a">a</a> <a href="/old">old</a>'), "/a": html("page a"), "/old": html("old")}
    site = HostsSite({host: pages}).start()
    out = tmp_path / "out"
    try:
        for _ in range(2):
            crawl = run_cli("crawl", site.root(host), "--out", str(out), *resolve_options([host], site.port), "-q")
            assert crawl.returncode == 0, crawl.stderr
            pages["/"] = html('home <a href="/a">a</a>')  # the second crawl meets /old no more
            pages.pop("/old", None)
    finally:
        site.stop()
    origin = site.root(host).rstrip("/")
    assert sorted(sitemap_locs(out, origin)) == [origin + "/", origin + "/a"]
    log = tmp_path / "access.log"
    lines = [log_line("/a"), log_line("/old", status=404), log_line("/old", status=404), log_line("/never", status=404)]
    log.write_text("\n".join(lines) + "\n")
    beside = sorted(path.name for path in tmp_path.iterdir())
    result = run_cli("coverage", str(out), "--logs", str(log), "--json", "--html", str(tmp_path / "c.html"))
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != "c.html") == beside  # read only
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    rows = {row["url"]: row for row in document["urls"]}
    page = lxml.html.fromstring((tmp_path / "c.html").read_bytes())
    reasons = {row.xpath("td")[0].text_content(): row.xpath("td")[1].text_content() for row in page.xpath(
        '//table[@id="unlisted"]//tr[td]')}  # fmt: skip
    assert reasons[origin + "/old"].startswith("not-met (an earlier crawl met it, last 20")
    assert reasons[origin + "/old"].endswith(", once listed)") and reasons[origin + "/never"] == "not-met"
    old, never = rows[origin + "/old"], rows[origin + "/never"]
    assert (old["reason"], old["earlier"]["outcome"], old["earlier"]["listed"]) == ("not-met", "listed", True)
    assert (never["reason"], never["earlier"]) == ("not-met", None)
    assert rows[origin + "/a"]["earlier"] is None  # met by this crawl: its reason is the report's
    assert document["crawlers"]["Googlebot"]["not_met_earlier"] == {"urls": 1, "fetches": 2, "listed_before": 1}
    assert document["state"]["known"] == 1 and document["state"]["error"] is None
    assert (
        "2 fetches of 1 URL the site no longer links that earlier crawls met (1 of them once listed)" in result.stderr
    )
    assert f"State store {tmp_path / 'out.state.sqlite'}: earlier crawls met 1 URL this one never did" in (
        result.stderr
    )
    wrong = run_cli("coverage", str(out), "--logs", str(log), "--state", str(log))
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr
    assert "not a state store" in wrong.stderr
    other = tmp_path / "other.state.sqlite"  # another site's store: the same pages on another host
    shutil.copy(tmp_path / "out.state.sqlite", other)
    with sqlite3.connect(other) as store:
        store.execute("UPDATE page SET url = replace(url, 'www.state.test', 'www.elsewhere.test')")
    store.close()
    refused = run_cli("coverage", str(out), "--logs", str(log), "--state", str(other))
    assert refused.returncode == 2 and "no URL of OUT's sets in it" in refused.stderr, refused.stderr
    empty = hand_set(tmp_path / "empty", {"": []})  # a set of no URL names no origin to look for
    assert run_cli("coverage", str(empty), "--logs", str(log), "--state", str(other)).returncode == 0
    # Without the crawl report, which URLs this crawl met is not known: the store is not asked.
    (tmp_path / "out.crawl-report.jsonl").rename(tmp_path / "report.jsonl")
    unknown = run_cli("coverage", str(out), "--logs", str(log), "--json")
    assert unknown.returncode == 0, unknown.stderr
    rows = {row["url"]: row for row in json.loads(unknown.stdout)["urls"]}
    assert rows[origin + "/old"]["earlier"] is None and "State store not read (no crawl report" in unknown.stderr
