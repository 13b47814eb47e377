"""A crawl shared through a real redis-server by the coordinator and worker
processes: the same set and report as one process, no URL fetched twice,
nothing lost when a worker is killed, and the end reached by itself."""

from __future__ import annotations

import itertools
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CLI, CrawlResult, crawl, sitemap_locs
from tests.server import SiteServer

FAST = ("--no-state", "--set", "SITEMAP_IDLE_GRACE=0.5")


def workers(redis_url: str, count: int) -> list[subprocess.Popen[str]]:
    command = [str(CLI), "worker", redis_url, "--wait", "30"]
    return [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(count)]


def outcomes(result: CrawlResult) -> dict[str, tuple[object, object]]:
    return {url: (line["outcome"], line["reason"]) for url, line in result.report.items()}


def finish(processes: list[subprocess.Popen[str]]) -> list[int]:
    codes = []
    for process in processes:
        process.communicate(timeout=60)
        codes.append(process.returncode)
    return codes


@pytest.mark.parametrize("count", [1, 2])
def test_workers_through_redis_give_the_set_of_one_process(
    count: int, server: SiteServer, redis_url: str, tmp_path: Path
) -> None:
    reference = crawl(server.url(), tmp_path / "reference", "--no-state")
    once = Counter(path for path in server.paths() if path != "/robots.txt")  # retries of 5xx included
    server.reset()
    joined = workers(redis_url, count)
    shared = crawl(server.url(), tmp_path / "shared", *FAST, "--distributed", redis_url)
    assert shared.code == 0, shared.process.stderr
    assert finish(joined) == [0] * count  # every worker ended by itself
    assert sorted(shared.listed) == sorted(reference.listed)
    assert outcomes(shared) == outcomes(reference)
    fetched = Counter(path for path in server.paths() if path != "/robots.txt")
    assert fetched == once  # no URL fetched more often than by one process


def test_a_worker_killed_midway_loses_nothing(live_site: SiteServer, redis_url: str, tmp_path: Path) -> None:
    reference = crawl(live_site.url(), tmp_path / "reference", "--no-state")
    live_site.reset()
    doomed = workers(redis_url, 1)[0]
    options = (*FAST, "--set", "SITEMAP_LEASE_SECONDS=1", "--delay", "0.05", "--distributed", redis_url)
    coordinator = subprocess.Popen(
        [str(CLI), "crawl", live_site.url(), "--out", str(tmp_path / "shared"), "--concurrency", "4", "-q", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    midway = len(reference.report) // 3
    while len(live_site.paths()) < midway and time.monotonic() < deadline:
        time.sleep(0.02)
    doomed.send_signal(signal.SIGKILL)
    doomed.communicate(timeout=30)
    _, stderr = coordinator.communicate(timeout=120)
    assert coordinator.returncode == 0, stderr
    shared_report = {line.split('"url": "', 1)[1].split('"', 1)[0] for line in
                     (tmp_path / "shared.crawl-report.jsonl").read_text().splitlines()}  # fmt: skip
    assert shared_report == set(reference.report)
    origin = live_site.url().rstrip("/")
    assert sorted(sitemap_locs(tmp_path / "shared", origin)) == sorted(reference.listed)


def test_a_worker_without_a_crawl_says_so(redis_url: str) -> None:
    result = subprocess.run([str(CLI), "worker", redis_url, "--wait", "0"], capture_output=True, text=True,
                            timeout=60, check=False)  # fmt: skip
    assert result.returncode == 1 and "no crawl to join" in result.stderr
    result = subprocess.run([str(CLI), "worker", "redis://:pw-s3cret@127.0.0.1:1/0", "--wait", "0"],
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 1 and "pw-s3cret" not in result.stderr and "***" in result.stderr


def test_the_delay_holds_for_the_site_across_workers(server: SiteServer, redis_url: str, tmp_path: Path) -> None:
    server.reset()
    joined = workers(redis_url, 2)
    shared = crawl(server.url(), tmp_path / "shared", *FAST, "--delay", "0.15", "--distributed", redis_url)
    assert shared.code == 0, shared.process.stderr
    assert finish(joined) == [0, 0]
    # Each worker reads robots.txt itself for now: those requests are left out.
    times = sorted(hit.time for hit in server.hits if hit.host == "127.0.0.1" and hit.path != "/robots.txt")
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(times) > 20
    # Three processes, one pace: requests are granted 150 ms apart in Redis. Scheduling jitter on
    # this 2-core machine (three crawlers and the test server) moves single arrivals, never the rate:
    # with a delay per worker instead, three workers would arrive 50 ms apart on average.
    assert (times[-1] - times[0]) / len(gaps) >= 0.145, sorted(gaps)[:5]
    assert sum(gap < 0.075 for gap in gaps) <= len(gaps) // 10, sorted(gaps)[:5]
