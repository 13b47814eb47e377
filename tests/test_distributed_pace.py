"""A shared crawl under real politeness, on a real redis-server and the site's own request log:
the site's pace kept on Redis's clock whatever the workers' clocks say, leases that never
expire under a live worker, and what a worker killed mid-crawl costs."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from redis import Redis

from tests.conftest import CLI, CrawlResult, read_report, run_cli, sitemap_locs
from tests.server import NOT_PAGES, SiteServer
from tests.shared_crawl import FAST, fan_site, finish

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
#: A server thread scheduled late on a loaded 2-core machine records an arrival late: one gap
#: shrinks by as much as the next grows. Below the delay by more than this is a request sent early.
JITTER = 0.05


def robots(crawl_delay: float) -> str:
    return f"User-agent: *\nCrawl-delay: {crawl_delay}\nAllow: /\n"


def pages(site: SiteServer) -> list[str]:
    return [path for path in site.paths() if path not in NOT_PAGES]


def joined(redis_url: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A `sitemap-crawler worker` (the Redis URL in its environment, out of `ps`; its log in *log*:
    a pipe could fill and stall it)."""
    command = [str(CLI), "worker", "--wait", "30", "-vv"]
    environment = {**os.environ, "SITEMAP_CRAWLER_DISTRIBUTED": redis_url, **(env or {})}
    with log.open("w") as sink:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink, text=True, env=environment)


def crawled(log: Path) -> int:
    """Pages a worker fetched, by its own debug log."""
    return len(re.findall(r"Crawled \(200\) <GET [^>]*/(?:p\d+|index)\.html", log.read_text()))


def shared_crawl(site: SiteServer, out: Path, redis_url: str, *options: str, timeout: float = 120) -> CrawlResult:
    """The coordinator (it crawls too), run to its end."""
    process = run_cli("crawl", site.url(), "--out", str(out), *FAST, *options, timeout=timeout,
                      env={"SITEMAP_CRAWLER_DISTRIBUTED": redis_url})  # fmt: skip
    report = read_report(out.parent / f"{out.name}.crawl-report.jsonl") if process.returncode == 0 else {}
    listed = sitemap_locs(out, site.url().rstrip("/")) if process.returncode == 0 else []
    return CrawlResult(process, out, report, listed)


@pytest.mark.skipif(not LIBFAKETIME.exists() and not os.environ.get("CI"), reason="libfaketime is not installed")
def test_the_crawl_delay_holds_on_redis_clock_whatever_the_workers_clocks_say(redis_url: str, tmp_path: Path) -> None:
    site = fan_site(tmp_path, 14, robots(0.5))  # all queued at once: every worker gets its share
    logs = [tmp_path / "ahead.log", tmp_path / "behind.log"]
    try:
        # Two workers whose clocks are 2 s ahead and 2 s behind the coordinator's (libfaketime).
        others = [
            joined(redis_url, log, {"LD_PRELOAD": str(LIBFAKETIME), "FAKETIME": offset})
            for log, offset in zip(logs, ("+2s", "-2s"), strict=True)
        ]
        result = shared_crawl(site, tmp_path / "out", redis_url)
        assert result.code == 0, result.process.stderr
        assert finish(others) == [0, 0]
        times = sorted(hit.time for hit in site.hits if hit.path not in NOT_PAGES)
    finally:
        site.stop()
    assert len(result.listed) == 14
    assert all(crawled(log) >= 1 for log in logs), [crawled(log) for log in logs]  # all three crawled
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(gaps) == 13
    # Every gap keeps the Crawl-delay as the site saw it, less the server's own jitter; and the rate
    # does: the mean gap is the delay. A worker 2 s ahead trusting its clock would send at once.
    assert min(gaps) >= 0.45 - JITTER, [round(gap, 3) for gap in gaps]
    assert (times[-1] - times[0]) / len(gaps) >= 0.5 - JITTER / len(gaps), [round(gap, 3) for gap in gaps]


def leases_of(redis_url: str, pid: int, timeout: float) -> int:
    """How many frontier leases the worker of process *pid* holds, once it holds some (bounded)."""
    ends = time.monotonic() + timeout
    with Redis.from_url(redis_url) as redis:
        while time.monotonic() < ends:
            for crawl in redis.scan_iter(match="sitemap-crawler:*:frontier"):
                for consumer in redis.xinfo_consumers(crawl, "workers"):
                    if f"-{pid}-" in consumer["name"].decode() and consumer["pending"] > 0:
                        return int(consumer["pending"])
            time.sleep(0.02)
    raise AssertionError(f"worker {pid} held no lease within {timeout} s")


def fetched_twice(site: SiteServer) -> dict[str, int]:
    return {path: count for path, count in Counter(pages(site)).items() if count > 1}


def test_a_live_worker_waiting_for_the_pace_keeps_its_leases(redis_url: str, tmp_path: Path) -> None:
    """Crawl-delay 1 s, three workers and leases of 2 s: a worker's turn comes every 3 s, so even
    one lease held expires before it is fetched unless the worker renews it while it waits."""
    site = fan_site(tmp_path, 12, robots(1))
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    try:
        others = [joined(redis_url, log) for log in logs]
        result = shared_crawl(site, tmp_path / "out", redis_url, "--set", "SITEMAP_LEASE_SECONDS=2")
        assert result.code == 0, result.process.stderr
        assert finish(others) == [0, 0]
    finally:
        site.stop()
    assert fetched_twice(site) == {}
    assert len(pages(site)) == len(result.listed) == 12
    assert "re-fetched" not in result.process.stderr


def test_slow_crawl_delays_fetch_no_page_twice_with_the_default_lease(redis_url: str, tmp_path: Path) -> None:
    """Crawl-delay 2 s and 5 s, three workers each, the default lease (60 s): both crawls run
    longer than a lease (at the same time, so the suite waits for one), and no page is fetched twice."""
    runs = {}
    for crawl_delay, count in ((2, 36), (5, 15)):
        # All pages queued at once: a worker holding its default eight leases at Crawl-delay 5 s
        # (one fetch every 15 s) would still hold its last ones when the lease lapses.
        site = fan_site(tmp_path / f"d{crawl_delay}", count, robots(crawl_delay))
        runs[crawl_delay] = (site, [joined(f"{redis_url[:-1]}{crawl_delay}", tmp_path / f"d{crawl_delay}-{n}.log")
                                    for n in range(2)])  # fmt: skip
    results: dict[int, CrawlResult] = {}

    def coordinate(crawl_delay: int) -> None:
        site = runs[crawl_delay][0]
        url = f"{redis_url[:-1]}{crawl_delay}"  # a database of its own
        results[crawl_delay] = shared_crawl(site, tmp_path / f"out{crawl_delay}", url, timeout=200)

    try:
        threads = [threading.Thread(target=coordinate, args=(delay,)) for delay in runs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=220)
        for crawl_delay, (_, others) in runs.items():
            assert results[crawl_delay].code == 0, results[crawl_delay].process.stderr
            assert finish(others) == [0, 0]
    finally:
        for site, _ in runs.values():
            site.stop()
    for crawl_delay, (site, _) in runs.items():
        times = sorted(hit.time for hit in site.hits if hit.path not in NOT_PAGES)
        assert times[-1] - times[0] > 60, "shorter than a lease: it would prove nothing"
        assert fetched_twice(site) == {}, crawl_delay
        assert len(results[crawl_delay].listed) == len(pages(site))


def test_a_killed_worker_costs_at_most_its_leases_and_the_summary_says_how_many(redis_url: str, tmp_path: Path) -> None:
    site = fan_site(tmp_path, 40, robots(0.1))
    logs = [tmp_path / "victim.log", tmp_path / "other.log"]
    try:
        victim, other = (joined(redis_url, log) for log in logs)
        coordinator = subprocess.Popen(
            [str(CLI), "crawl", site.url(), "--out", str(tmp_path / "out"), *FAST, "--set", "SITEMAP_LEASE_SECONDS=3"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
            env={**os.environ, "SITEMAP_CRAWLER_DISTRIBUTED": redis_url},
        )  # fmt: skip
        # Mid-crawl, once the victim holds leases (the frontier's consumer group says so).
        held = leases_of(redis_url, victim.pid, timeout=60)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        _, stderr = coordinator.communicate(timeout=120)
        assert coordinator.returncode == 0, stderr
        assert finish([other]) == [0]
    finally:
        site.stop()
    assert held >= 1
    listed = sitemap_locs(tmp_path / "out", site.url().rstrip("/"))
    assert len(listed) == 40  # nothing lost
    said = re.search(r"(\d+) requests? re-fetched after a worker stopped", stderr)
    assert said is not None, stderr
    refetched = int(said.group(1))
    # A live worker's leases are never taken; the dead one's are, and only those: fetched twice at
    # most as many pages as it held. At a Crawl-delay (one download at a time for the site) it
    # holds two, the one it fetches and the next, not the eight it may hold without a pace.
    assert 1 <= refetched <= 2 and held <= 2
    assert sum(count - 1 for count in fetched_twice(site).values()) <= refetched, fetched_twice(site)


def test_a_worker_asked_to_stop_hands_its_leases_back_at_once(redis_url: str, tmp_path: Path) -> None:
    """SIGTERM: the worker ends what it fetched and hands the rest of its leases back, so the
    others take them now, not a quarter lease (15 s) after its heartbeat went."""
    site = fan_site(tmp_path, 40, robots(0.1))
    logs = [tmp_path / "stopped.log", tmp_path / "other.log"]
    try:
        stopped, other = (joined(redis_url, log) for log in logs)
        result_box: list[CrawlResult] = []
        coordinator = threading.Thread(
            target=lambda: result_box.append(
                shared_crawl(site, tmp_path / "out", redis_url, "--set", "SITEMAP_LEASE_SECONDS=60")
            )
        )
        coordinator.start()
        held = leases_of(redis_url, stopped.pid, timeout=60)
        stopped.send_signal(signal.SIGTERM)
        stopped.communicate(timeout=30)
        coordinator.join(timeout=110)
        assert finish([other]) == [0]
    finally:
        site.stop()
    [result] = result_box
    assert result.code == 0, result.process.stderr
    assert held >= 1 and len(result.listed) == 40  # nothing lost
    # (It may have had none left by the time its downloads in flight were done: the gap says it.)
    times = sorted(hit.time for hit in site.hits)
    # Waiting for the stopped worker's leases to lapse would leave the site idle for most of a lease.
    longest = max(later - earlier for earlier, later in itertools.pairwise(times))
    assert longest < 5, f"the site waited {longest:.1f} s: the leases were not handed back"
