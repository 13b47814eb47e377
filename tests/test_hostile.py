"""Hostile sites end to end: each crawl ends by itself, within its budget,
in bounded memory (the child's peak RSS), with the reason in the report."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from scrapy import Request
from scrapy.utils.request import request_from_dict

from crawler.page.html import parse_html
from crawler.reasons import Reason
from crawler.robots_rules import MAX_ROBOTS_BYTES
from crawler.run.robots import VOUCH, SiteRules
from crawler.spiders.frontier import Frontier
from crawler.urls import resolve_link
from tests.conftest import sitemap_locs
from tests.traps import (
    CHARSETS,
    FARM_LINKS,
    RING_RULES,
    TrapHandler,
    TrapServer,
    big_robots,
    gzip_of_zeros,
    robots_text,
)

CLI = Path(sys.executable).with_name("sitemap-crawler")
#: The issue's bound for every hostile case, far above what a small crawl needs.
MAX_RSS_MB = 300


@dataclass
class Run:
    code: int
    stderr: str
    peak_mb: float
    out: Path
    report: list[dict[str, object]]

    def lines(self, reason: str) -> list[dict[str, object]]:
        return [line for line in self.report if line.get("reason") == reason]

    def lines_of_urls(self) -> list[dict[str, object]]:
        return [line for line in self.report if line["outcome"] != "warning"]

    def line(self, url: str) -> dict[str, object]:
        (found,) = [line for line in self.report if line["url"] == url and line["outcome"] != "warning"]
        return found


#: Runs the crawl as its own child and prints that child's peak RSS (KiB), then exits with its status.
#: A process forked straight from pytest would start its high-water mark at pytest's own RSS (the
#: kernel carries it through exec): hundreds of MB late in the suite. Forked from this small
#: launcher, the crawl's peak is its own.
_LAUNCHER = """\
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, flush=True)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured_crawl(server: TrapServer, path: str, tmp_path: Path, *options: str, timeout: float = 120) -> Run:
    """Run the console script on *path* of *server*; wait for it (bounded) and read its peak RSS."""
    out = tmp_path / "out"
    command = [str(CLI), "crawl", server.url(path), "--out", str(out), "--delay", "0", "-q", "--no-state", *options]
    errors = tmp_path / "stderr.txt"
    with open(errors, "w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, *command], stdout=subprocess.PIPE, stderr=sink,
            stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )  # fmt: skip
    try:
        peak_kib, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        pytest.fail(f"the crawl did not end by itself within {timeout} s")
    report_path = tmp_path / "out.crawl-report.jsonl"
    report = [json.loads(line) for line in report_path.read_text("utf-8").splitlines()] if report_path.exists() else []
    return Run(process.returncode, errors.read_text(), int(peak_kib.split()[-1]) / 1024, out, report)


@pytest.fixture
def trap() -> object:
    servers: list[TrapServer] = []

    def start(robots: object = None, **options: int) -> TrapServer:
        server = TrapServer(robots, **options).start()  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def test_a_link_farm_costs_the_page_budget_only(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, "/farm/0", tmp_path, "--max-pages", "150", "--max-not-requested", "500")
    assert run.code == 0, run.stderr
    assert len(server.requested("/farm/")) == 150
    assert run.peak_mb < MAX_RSS_MB
    limited = run.lines("limit")
    assert len(limited) == 500  # itemised up to the cap, the rest only counted
    (summary,) = run.lines("not-itemised")
    # Every new link counted once, the link up to a known page not at all: the start page's
    # links less the 149 requested and the 500 itemised, then all those of the 149 pages.
    counted = FARM_LINKS - 149 - 500 + 149 * FARM_LINKS
    assert f": {counted} limit (" in str(summary["detail"]), summary
    assert (tmp_path / "out.crawl-report.jsonl").stat().st_size < 2_000_000
    assert len(sitemap_locs(run.out, server.url("").rstrip("/"))) == 150


def test_seed_sitemaps_stop_once_the_budget_is_spent(tmp_path: Path, trap) -> None:  # type: ignore[no-untyped-def]
    sitemaps = "".join(f"Sitemap: http://127.0.0.1:{{port}}/sm/{i}.xml\n" for i in range(20))
    server = trap(
        lambda handler: (
            200,
            {"Content-Type": "text/plain"},
            f"User-agent: *\nAllow: /\n{sitemaps}".replace("{port}", str(handler.server.port)).encode(),
        )
    )
    run = measured_crawl(server, "/", tmp_path, "--max-pages", "50", "--max-not-requested", "100")
    assert run.code == 0, run.stderr
    assert len(server.requested("/seed/")) + len(server.requested("/farm/")) <= 50
    assert run.peak_mb < MAX_RSS_MB
    assert len(run.lines("limit")) == 100
    assert (tmp_path / "out.crawl-report.jsonl").stat().st_size < 1_000_000


def test_session_ids_are_stripped_and_path_parameters_capped(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, "/sess/start", tmp_path, "--max-query-variants", "20")
    assert run.code == 0, run.stderr
    assert len(server.requested("/sess/")) < 30  # page and list are one URL each; cart;token= hits the cap
    assert run.peak_mb < MAX_RSS_MB
    assert any("query variants of /sess/cart" in str(line["detail"]) for line in run.lines("limit"))
    locs = sitemap_locs(run.out, server.url("").rstrip("/"))
    assert server.url("/sess/page") in locs and server.url("/sess/list?p=1") in locs
    assert not any("jsessionid" in loc or "sid=" in loc for loc in locs)


def test_an_endless_redirect_chain_is_cut(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, "/rc/0", tmp_path, "--max-redirects", "10")
    assert run.code == 1  # nothing listable, and said so
    assert server.requested("/rc/") == [f"/rc/{i}" for i in range(11)]
    last = run.line(server.url("/rc/10"))
    assert last["reason"] == "redirect" and "chain too long" in str(last["detail"])
    assert len(last["redirect_chain"]) == 10  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(CHARSETS))
def test_every_charset_is_read(name: str, trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, f"/enc/{name}.html", tmp_path)
    assert run.code == 0, run.stderr
    page = run.line(server.url(f"/enc/{name}.html"))
    assert page["outcome"] == "listed", page
    assert run.line(server.url(f"/enc/target-{name}.html"))["outcome"] == "listed"  # its link was followed


def test_overflowing_structured_data_costs_the_value_not_the_page(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, "/overflow.html", tmp_path)
    assert run.code == 0, run.stderr
    assert run.line(server.url("/overflow.html"))["outcome"] == "listed"
    data = (run.out / "sitemap-1.xml").read_text()
    assert "<video:video>" in data and "video:duration" not in data and "video:view_count" not in data


def test_an_entry_too_big_for_a_file_is_cut_and_the_site_published(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, "/big-images.html", tmp_path, "--max-bytes-per-file", "1000000")
    assert run.code == 0, run.stderr
    (cut,) = run.lines("entry-cut")
    assert cut["url"] == server.url("/big-images.html") and "images left out" in str(cut["detail"])
    shard = run.out / "sitemap-1.xml"
    assert 100_000 < shard.stat().st_size <= 1_000_000
    assert sitemap_locs(run.out, server.url("").rstrip("/")) == [server.url("/big-images.html")]


def test_a_gzip_bomb_is_a_fetch_error_saying_why(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = trap()
    run = measured_crawl(server, "/bomb.html", tmp_path, "--retries", "0")
    assert run.code == 1
    line = run.line(server.url("/bomb.html"))
    assert line["reason"] == "fetch-error" and str(line["detail"]).startswith("body over ")
    assert "another origin of the same site" not in run.stderr
    assert run.peak_mb < MAX_RSS_MB


def _disallow_private(status: int) -> object:
    return robots_text("User-agent: *\nDisallow: /private/\n", status)


@pytest.mark.parametrize(
    ("robots", "private_fetched", "message"),
    [
        (lambda handler: handler.reset(), False, "is unreachable"),
        (lambda handler: handler.stall(3), False, "is unreachable"),
        (lambda handler: (200, {"Content-Encoding": "gzip"}, gzip_of_zeros(3_000_000)), False, "is unreachable"),
        (robots_text("", 503), False, "answered 503"),
        (lambda handler: (301, {"Location": "/moved-robots.txt"}, b""), False, None),
        (_disallow_private(401), True, None),
        (_disallow_private(403), True, None),
        (_disallow_private(404), True, None),
    ],
    ids=["reset", "timeout", "over-size-cap", "503", "redirect", "401", "403", "404"],
)
def test_robots_txt_failures_follow_rfc_9309(
    robots, private_fetched: bool, message: str | None, trap, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    def answer(handler: TrapHandler):  # type: ignore[no-untyped-def]
        if handler.path == "/moved-robots.txt":
            return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /private/\n"
        return robots(handler)

    server = trap(answer)
    run = measured_crawl(
        server,
        "/private/secret.html",
        tmp_path,
        "--retries",
        "0",
        "--timeout",
        "1",
        "--set",
        "DOWNLOAD_MAXSIZE=1000000",
    )
    assert ("/private/secret.html" in server.requested()) is private_fetched
    if private_fetched:
        assert run.code == 0, run.stderr
    else:
        assert run.code == 1
        assert run.line(server.url("/private/secret.html"))["reason"] == "robots"
    if message:
        assert message in run.stderr and "RFC 9309" in run.stderr


def test_a_robots_txt_redirected_to_another_port_is_not_followed(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Another port of the machine could be any service: the site cannot aim the crawler at it.
    The redirect is read as no robots.txt (RFC 9309: unavailable), and the other port hears nothing."""
    other = trap(_disallow_private(200))
    server = trap(lambda handler: (301, {"Location": other.url("/robots.txt")}, b""))
    run = measured_crawl(server, "/private/secret.html", tmp_path)
    assert run.code == 0, run.stderr
    assert other.requested() == []
    assert "/private/secret.html" in server.requested()
    assert "off the site" in run.stderr


def test_a_huge_robots_txt_is_read_to_500_kib_only(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rules = "".join(f"Disallow: /rule-{i}/\n" for i in range(300_000))  # about 6 MB
    server = trap(robots_text(f"User-agent: *\n{rules}Disallow: /private/\n"))
    run = measured_crawl(server, "/private/secret.html", tmp_path)
    assert run.code == 0, run.stderr  # the Disallow past 500 KiB is never read
    assert run.peak_mb < MAX_RSS_MB
    (note,) = run.lines("robots-truncated")
    assert "only the first" in str(note["detail"])


def test_a_sitemap_on_another_port_is_named_not_fetched(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = trap()
    line = f"Sitemap: http://127.0.0.1:{other.port}/sm/1.xml\n"
    server = trap(robots_text(f"User-agent: *\nAllow: /\n{line}"))
    run = measured_crawl(server, "/", tmp_path)
    assert run.code == 0, run.stderr
    assert other.requested() == []  # for an IP host every port is another site
    (named,) = run.lines("sitemap-other-origin")
    assert named["url"] == f"http://127.0.0.1:{other.port}/sm/1.xml"


def test_hrefs_with_control_characters_or_padding_are_joined_as_by_the_reference() -> None:
    hrefs = ["/a\tb", " /c ", "/d ", "/e\u00a0", "http://e.com/f\n", "http://e.com/g", "/h", "//e.com/i", "j"]
    body = "".join(f'<a href="{href}">x</a>' for href in hrefs).encode()
    expected = [resolve_link("http://e.com/p/q", href) for href in hrefs]
    assert parse_html(body, "http://e.com/p/q").links == expected  # the fast paths change nothing
    assert parse_html(b'<a href="/d ">x</a><a href="/h">y</a>', "http://e.com/").links == [
        "http://e.com/d",
        "http://e.com/h",
    ]


def test_frontier_counts_only_past_the_budget_with_no_line_left() -> None:
    frontier = Frontier(max_pages=1, max_depth=0, max_url_length=2048, max_variants=0, max_lines=1)
    assert not frontier.counting_only
    frontier.reserve("https://e.com/a")  # the budget is full, one limit line is left
    assert not frontier.counting_only
    assert frontier.itemise(Reason.LIMIT)
    assert frontier.counting_only
    frontier.release("https://e.com/a")  # a queued page robots.txt turned away: the budget has room again
    assert not frontier.counting_only
    frontier.count(Reason.LIMIT, 3)
    assert frontier.not_itemised == {Reason.LIMIT: 3}


def _rules(text: str) -> SiteRules:
    return SiteRules(text.encode())


def _marked(rules: SiteRules, url: str) -> Request:
    """A request built for *url* as the spider builds one, with the mark the rules give it."""
    mark = rules.mark(url)
    return Request(url, meta={VOUCH: mark} if mark is not None else {})


def test_a_request_passes_unmatched_only_if_these_rules_allowed_its_url_just_before() -> None:
    rules = _rules("User-agent: *\nDisallow: /private/\n")
    assert rules.allowed("http://e.com/a", "bot")
    built = _marked(rules, "http://e.com/a")
    assert rules.mark("http://e.com/a") is None  # one match marks one request
    assert not _rules("User-agent: *\n").vouched(built.replace(), "bot")  # another process's rules
    assert not rules.vouched(built.replace(meta={VOUCH: "0" * 32}), "bot")  # forged
    assert not rules.vouched(built.replace(), "otherbot")  # for the agent it was matched for only
    assert not rules.vouched(built.replace(url="http://e.com/private/a"), "bot")  # for its URL only
    read_back = request_from_dict(built.to_dict())  # the frontier waited on disk
    assert rules.vouched(read_back, "bot")
    assert not rules.vouched(read_back, "bot")  # and once

    assert rules.allowed("http://e.com/a", "bot")
    assert not rules.vouched(_marked(rules, "http://e.com/private/b"), "bot")  # not the URL the match allowed
    assert not rules.allowed("http://e.com/private/b", "bot")
    assert not rules.vouched(_marked(rules, "http://e.com/private/b"), "bot")  # the last match refused it


def _decisions(run: Run) -> dict[str, tuple[object, object]]:
    """Path -> (outcome, reason) of every URL in the report."""
    return {urlsplit(str(line["url"])).path: (line["outcome"], line["reason"]) for line in run.lines_of_urls()}


def test_a_500_kib_robots_txt_allows_and_refuses_what_its_rules_alone_do(trap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    huge_text = big_robots(RING_RULES)
    assert MAX_ROBOTS_BYTES - 1024 < len(huge_text) <= MAX_ROBOTS_BYTES  # read to its end, not cut
    small = trap(robots_text(f"User-agent: *\n{RING_RULES}"), ring_pages=60)
    huge = trap(robots_text(huge_text), ring_pages=60)
    runs = []
    for server in (small, huge):
        folder = tmp_path / str(server.port)
        folder.mkdir()
        runs.append(measured_crawl(server, "/ring/0", folder, "-v"))
        assert runs[-1].code == 0, runs[-1].stderr
    assert not runs[1].lines("robots-truncated")  # all of it was read
    refused = [f"/ring/{n}" for n in range(7, 60, 10)]
    assert sorted(huge.requested()) == sorted(small.requested())
    assert not set(refused) & set(huge.requested())
    assert len(huge.requested("/ring/")) == 60 - len(refused)
    assert _decisions(runs[1]) == _decisions(runs[0])
    assert sorted(path for path, (_, reason) in _decisions(runs[1]).items() if reason == "robots") == sorted(refused)
    # Each page robots.txt allowed was matched once, by the spider: all but the start page,
    # asked for before robots.txt was read.
    (vouched,) = re.findall(r"'robotstxt/allowed_by_spider': (\d+)", runs[1].stderr)
    assert int(vouched) == len(huge.requested("/ring/")) - 1


def test_the_rules_name_their_sitemaps_and_crawl_delay_through_a_public_interface() -> None:
    """What the spider, the audit and the pace read of robots.txt: no private attribute of Scrapy's parser."""
    rules = _rules("\ufeffUser-agent: *\nCrawl-delay: 2.5\nDisallow: /x\nSitemap: https://e.com/s.xml\n")
    assert rules.sitemaps == ["https://e.com/s.xml"]
    assert rules.crawl_delay("bot") == 2.5 and rules.crawl_delay(b"bot") == 2.5
    assert not rules.allowed("https://e.com/x", "bot") and rules.allowed(b"https://e.com/y", b"bot")
    assert _rules("User-agent: *\nDisallow: /\n").crawl_delay("bot") is None
