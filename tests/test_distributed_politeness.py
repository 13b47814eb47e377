"""Politeness and the rules of a local crawl, kept by a crawl shared through a real
redis-server: delay, Crawl-delay and robots.txt for the site as a whole, one page budget,
and the state store's lastmod, shards and removals across runs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CrawlResult, crawl, run_cli
from tests.server import NOT_PAGES, ROUTES, SiteServer
from tests.shared_crawl import FAST, chain_site, fan_site, finish, workers
from tests.test_adaptive_speed import PAGES, serve
from tests.test_scheduled import age_files, edit, lastmods, next_second, rewritten, shard_of
from tests.timing import assert_paced


def test_the_delay_holds_for_the_site_across_workers(server: SiteServer, redis_url: str, tmp_path: Path) -> None:
    server.reset()
    joined = workers(redis_url, 2)
    shared = crawl(server.url(), tmp_path / "shared", *FAST, "--delay", "0.15", "--distributed", redis_url)
    assert shared.code == 0, shared.process.stderr
    assert finish(joined) == [0, 0]
    assert server.paths().count("/robots.txt") == 1  # read once for all three workers
    times = [hit.time for hit in server.hits if hit.host == "127.0.0.1"]
    assert len(times) > 20
    # Three processes, one pace: requests are granted 150 ms apart in Redis, then sent by three
    # processes on two loaded cores, so single arrivals move more than the rate. With a delay per
    # worker instead, three workers would arrive 50 ms apart on average.
    assert_paced(times, 0.15, short=0.5)


def test_crawl_delay_holds_for_the_site_across_workers(live_site: SiteServer, redis_url: str, tmp_path: Path) -> None:
    (live_site.root / "live" / "robots.txt").write_text("User-agent: *\nCrawl-delay: 0.2\nAllow: /\n")
    joined = workers(redis_url, 2)
    shared = crawl(live_site.url(), tmp_path / "shared", *FAST, "--delay", "0", "--distributed", redis_url)
    assert shared.code == 0, shared.process.stderr
    assert finish(joined) == [0, 0]
    paths = live_site.paths()
    assert paths.count("/robots.txt") == 1
    # The delay is known once robots.txt is read: it holds from the first page on.
    times = [hit.time for hit in live_site.hits if hit.path not in NOT_PAGES]
    assert len(times) >= 10
    # Crawl-delay holds between two requests to the site, whichever worker sends them.
    assert_paced(times, 0.2)


def test_the_page_budget_holds_for_all_workers_together(redis_url: str, tmp_path: Path) -> None:
    site = chain_site(tmp_path, 120)
    try:
        joined = workers(redis_url, 2)
        options = (*FAST, "--max-pages", "20", "--concurrency", "2", "--distributed", redis_url)
        shared = crawl(site.url(), tmp_path / "shared", *options)
        assert shared.code == 0, shared.process.stderr
        assert finish(joined) == [0, 0]
        pages = [path for path in site.paths() if path not in NOT_PAGES]
    finally:
        site.stop()
    # Three processes, one budget: twenty pages, as one process fetches, not twenty for each.
    assert len(pages) == 20 == len(set(pages)), pages
    assert len(shared.listed) == 20
    limited = [url for url, line in shared.report.items() if line["reason"] == "limit"]
    assert limited and all(shared.report[url]["detail"] == "max pages 20 reached" for url in limited)


def test_a_shared_crawl_keeps_lastmod_shards_and_removals_across_runs(
    live_site: SiteServer, redis_url: str, tmp_path: Path
) -> None:
    """The exporter's state store gives a shared crawl every rule of a scheduled one."""
    site, out, url = live_site.root / "live", tmp_path / "public", live_site.url

    def run() -> CrawlResult:
        live_site.reset()
        joined = workers(redis_url, 1)
        result = crawl(url(), out, "--max-urls-per-file", "4", "--distributed", redis_url)
        assert result.code == 0, result.process.stderr
        assert finish(joined) == [0]
        return result

    first = run()
    marks, shards = lastmods(out), shard_of(out)
    assert len(first.listed) == 11 and marks[url("/blog/post1.html")] == "2026-01-15T09:00:00Z"
    age_files(out)
    run()  # nothing changed: nothing rewritten (every page fetched again: workers keep no state)
    assert rewritten(out) == set() and lastmods(out) == marks
    edit(site / "products/p3.html", "10 EUR", "12 EUR")
    edit(site / "products/p7.html", 'csrf="t7"', 'csrf="zz"')  # volatile only: its lastmod stays
    (site / "products/p8.html").unlink()
    age_files(out)
    next_second()
    run()
    after = lastmods(out)
    assert after.pop(url("/products/p3.html")) != marks[url("/products/p3.html")]
    assert after == {k: v for k, v in marks.items() if k not in (url("/products/p3.html"), url("/products/p8.html"))}
    assert all(shard_of(out)[u] == shards[u] for u in after)  # every URL keeps its shard
    removals = [json.loads(line) for line in (tmp_path / "public.removals.jsonl").read_text().splitlines()]
    assert [(r["url"], r["reason"]) for r in removals] == [(url("/products/p8.html"), "status")]


def test_an_unreadable_robots_txt_stops_a_shared_crawl_as_it_stops_one_process(redis_url: str, tmp_path: Path) -> None:
    broken = SiteServer(sites={"127.0.0.1": "broken"}).start()
    try:
        result = run_cli("crawl", broken.url(), "--out", str(tmp_path / "out"), "--delay", "0", "--retries", "0",
                         "-q", *FAST, "--distributed", redis_url)  # fmt: skip
    finally:
        broken.stop()
    assert result.returncode == 1, result.stderr
    assert "answered 503" in result.stderr and "RFC 9309" in result.stderr
    assert broken.paths() == ["/robots.txt"]


@pytest.mark.parametrize("limit", [2, 6])
def test_without_a_delay_the_concurrency_limit_holds_for_the_site(limit: int, redis_url: str, tmp_path: Path) -> None:
    """Three processes: with a limit of 6 each keeps its share of 2 in flight; with a limit of 2
    (fewer than the workers) each download also takes the site's slot in Redis."""
    for site in serve(k=0.01):  # answers slow down with the requests in flight
        joined = workers(redis_url, 2)
        result = run_cli("crawl", site.url(), "--out", str(tmp_path / "out"), *FAST, "--delay", "0",
                         "--concurrency", str(limit), "--distributed", redis_url)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert finish(joined) == [0, 0]
        loads = [load for _, _, load in site.pages()]
        assert len(loads) == PAGES + 1
        # Not the limit for each worker (3x). A worker that joins takes its share at once, while the
        # others give theirs back only at their next count of the live workers (four times a second)
        # and as their requests end, so a short overshoot on this server that slows under load stays.
        assert statistics.median(loads) <= limit and statistics.mean(loads) <= 1.3 * limit, loads


def test_a_retry_after_holds_the_whole_site_for_every_worker(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One worker hears 503 with Retry-After: 3; the site is held for all three processes, not only
    for the one that heard it (judged on the server's own log: a quiet window after the 503)."""
    answered: list[bool] = []

    def busy_once(handler: Any, query: str) -> tuple[int, dict[str, str], bytes]:
        first = not answered
        answered.append(True)
        if first:
            return 503, {"Content-Type": "text/html", "Retry-After": "3"}, b"busy"
        return 200, {"Content-Type": "text/html"}, b"<html><head><title>P8</title></head><body>8</body></html>"

    monkeypatch.setitem(ROUTES, "fan", {"/p8.html": busy_once})
    site = fan_site(tmp_path, 120, "User-agent: *\nAllow: /\n")
    try:
        joined = workers(redis_url, 2)
        shared = crawl(site.url(), tmp_path / "out", *FAST, "--delay", "0", "--concurrency", "4",
                       "--distributed", redis_url)  # fmt: skip
        assert finish(joined) == [0, 0]
    finally:
        site.stop()
    assert shared.code == 0, shared.process.stderr
    [busy] = [hit.time for hit in site.hits if hit.path == "/p8.html" and hit.status == 503]
    # Downloads granted before the hold was told may still land just after the 503; from 1 s on,
    # until 2.5 s (of the 3 held), nothing reaches the site from any worker. Held by the worker
    # that heard it alone, the two others would keep crawling the 120 pages at full speed.
    quiet = [round(hit.time - busy, 2) for hit in site.hits if busy + 1.0 < hit.time < busy + 2.5]
    assert quiet == [], f"requests while the site was held: {quiet}"
    assert any(hit.time >= busy + 2.5 for hit in site.hits)  # and the crawl went on after it
    assert "/p8.html" in {url.removeprefix(site.url().rstrip("/")) for url in shared.listed}
