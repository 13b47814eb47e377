"""A crawl shared through a real redis-server by the coordinator and worker
processes: the same set and report as one process, no URL fetched twice,
nothing lost when a worker is killed, and the end reached by itself."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from redis import Redis

from crawler.distributed.server import PrivateRedis
from tests.conftest import CLI, CrawlResult, crawl, run_cli, sitemap_locs
from tests.server import NOT_PAGES, SiteServer
from tests.shared_crawl import FAST, chain_site, finish, outcomes, workers


@pytest.mark.parametrize("count", [1, 2])
def test_workers_through_redis_give_the_set_of_one_process(
    count: int, server: SiteServer, redis_url: str, tmp_path: Path
) -> None:
    """The coordinator crawls too: one or two workers beside it make two or three."""
    reference = crawl(server.url(), tmp_path / "reference", "--no-state")
    once = Counter(path for path in server.paths() if path not in NOT_PAGES)  # retries of 5xx included
    server.reset()
    joined = workers(redis_url, count)
    shared = crawl(server.url(), tmp_path / "shared", *FAST, "--distributed", redis_url)
    assert shared.code == 0, shared.process.stderr
    assert finish(joined) == [0] * count  # every worker ended by itself
    assert sorted(shared.listed) == sorted(reference.listed)
    assert outcomes(shared) == outcomes(reference)
    fetched = Counter(path for path in server.paths() if path not in NOT_PAGES)
    assert fetched == once  # no URL fetched more often than by one process
    # Published and every worker gone: the crawl is retired from Redis, so nothing can join it or
    # resume it (its seen set would hide the site from a new run), and its keys free the memory.
    with Redis.from_url(redis_url) as redis:
        assert list(redis.scan_iter(match="sitemap-crawler:*")) == []


def test_a_worker_killed_midway_loses_nothing(live_site: SiteServer, redis_url: str, tmp_path: Path) -> None:
    reference = crawl(live_site.url(), tmp_path / "reference", "--no-state")
    live_site.reset()
    doomed = workers(redis_url, 1)[0]
    options = (*FAST, "--set", "SITEMAP_LEASE_SECONDS=1", "--delay", "0.05", "--distributed", redis_url)
    coordinator = subprocess.Popen(
        [str(CLI), "crawl", live_site.url(), "--out", str(tmp_path / "shared"), "--concurrency", "4", "-q", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    live_site.wait_for(len(reference.report) // 3)  # midway
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


def test_workers_killed_at_random_moments_lose_nothing_and_a_late_one_takes_work(
    redis_url: str, tmp_path: Path
) -> None:
    pages = 120
    site = chain_site(tmp_path, pages)
    try:
        options = (*FAST, "--set", "SITEMAP_LEASE_SECONDS=1", "--delay", "0.05", "--concurrency", "2")
        coordinator = subprocess.Popen(
            [str(CLI), "crawl", site.url(), "--out", str(tmp_path / "out"), "-q", *options, "--distributed", redis_url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        doomed = workers(redis_url, 3)
        # The first early, so that the late worker joins with most of the crawl (about 6 s) ahead of it.
        moments = [10, *sorted(random.Random(16).sample(range(30, pages * 3 // 4), 2))]
        late: list[subprocess.Popen[str]] = []
        for number, (worker, moment) in enumerate(zip(doomed, moments, strict=True)):
            site.wait_for(moment)
            worker.send_signal(signal.SIGKILL)
            worker.communicate(timeout=30)
            if number == 0:
                late = workers(redis_url, 1)  # joins a crawl well under way
        _, stderr = coordinator.communicate(timeout=120)
        assert coordinator.returncode == 0, stderr
        _, late_stderr = late[0].communicate(timeout=60)
        assert late[0].returncode == 0, late_stderr
        assert int(late_stderr.split("worker done: ", 1)[1].split()[0]) > 0  # it took work
        origin = site.url().rstrip("/")
        expected = [origin + "/"] + [f"{origin}/p{n}.html" for n in range(1, pages)]
        assert sorted(sitemap_locs(tmp_path / "out", origin)) == sorted(expected)
        fetched = Counter(path for path in site.paths() if path not in NOT_PAGES)
        assert len(fetched) == pages  # nothing lost; a page leased by a killed worker may be fetched again
    finally:
        site.stop()


#: How long a shared crawl may take to end once its Redis stopped or froze: each call's deadline
#: (crawler.distributed.client.CALL_SECONDS, 10 s; a worker's round asks once more, MISSED_ROUNDS)
#: or its retries over a closed port (about 7 s), the worker's and the coordinator's closing calls
#: (each bounded so), the local worker's exit.
#: Measured 26 s (stopped) and 35 s (frozen) on a quiet machine; room for a loaded 2-core one.
FROZEN_BOUND = 75.0


@pytest.mark.parametrize("failure", ["stopped", "frozen"])
def test_a_redis_that_goes_away_ends_the_run_and_keeps_the_previous_set(
    failure: str, redis_server: PrivateRedis, tmp_path: Path
) -> None:
    """A Redis that stops (its port closed) or freezes (SIGSTOP: connections open, no answer):
    the run ends, in bounded time, saying what happened to the Redis; the previous set stays."""
    site = chain_site(tmp_path, 120)
    assert redis_server.process is not None
    try:
        out = tmp_path / "out"
        first = crawl(site.url(), out, "--no-state", "--max-pages", "20")
        assert first.code == 0, first.process.stderr
        before = {path.name: path.read_bytes() for path in out.iterdir()}
        site.reset()
        options = (*FAST, "--delay", "0.02", "--distributed", redis_server.url)
        coordinator = subprocess.Popen(
            [str(CLI), "crawl", site.url(), "--out", str(out), "-q", *options],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        site.wait_for(30)
        if failure == "stopped":
            redis_server.stop()
        else:
            os.kill(redis_server.process.pid, signal.SIGSTOP)
        gone = time.monotonic()
        _, stderr = coordinator.communicate(timeout=180)
        took = time.monotonic() - gone
    finally:
        if failure == "frozen":
            os.kill(redis_server.process.pid, signal.SIGCONT)
        site.stop()
    assert coordinator.returncode == 1, stderr
    words = "Lost the Redis at" if failure == "stopped" else "does not answer (no reply within 10 s)"
    assert "Redis at redis://:***@127.0.0.1" in stderr, stderr
    assert words in stderr and "previous sitemaps kept" in stderr, stderr
    assert redis_server.password not in stderr and "Traceback" not in stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    assert took < FROZEN_BOUND, took


def working_in(folder: Path) -> list[str]:
    """The processes whose working directory is *folder* (redis-server changes into its --dir)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and os.readlink(proc / "cwd").startswith(str(folder)):
                found.append(proc.name)
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def crawled(result: CrawlResult) -> int:
    return int(result.process.stderr.split("Crawled ", 1)[1].split()[0])


def test_workers_option_crawls_with_local_processes_through_a_private_redis(server: SiteServer, tmp_path: Path) -> None:
    if shutil.which("redis-server") is None and not os.environ.get("CI"):
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    reference = crawl(server.url(), tmp_path / "reference", "--no-state")
    once = Counter(server.paths())
    server.reset()
    private = tmp_path / "tmp"  # where the run's own redis-server keeps its folder
    private.mkdir()
    shared = crawl(server.url(), tmp_path / "shared", *FAST, "--workers", "2", env={"TMPDIR": str(private)})
    assert shared.code == 0, shared.process.stderr
    assert sorted(shared.listed) == sorted(reference.listed)
    assert outcomes(shared) == outcomes(reference)
    assert Counter(server.paths()) == once  # robots.txt too: read once, by one of the two
    assert crawled(shared) == crawled(reference)  # the summary counts what the workers fetched
    assert list(private.iterdir()) == []  # its folder removed
    assert working_in(private) == []  # and its redis-server (which works in that folder) stopped


def test_a_second_run_through_the_same_redis_crawls_afresh(
    live_site: SiteServer, redis_url: str, tmp_path: Path
) -> None:
    first = crawl(live_site.url(), tmp_path / "out", *FAST, "--distributed", redis_url)
    assert first.code == 0, first.process.stderr
    live_site.reset()
    again = crawl(live_site.url(), tmp_path / "out", *FAST, "--distributed", redis_url)
    assert again.code == 0, again.process.stderr
    assert sorted(again.listed) == sorted(first.listed) and again.listed
    assert "/" in live_site.paths()  # fetched again, not skipped as seen by the first run
    refused = run_cli("update", live_site.url(), "--out", str(tmp_path / "out"), "--add", live_site.url("/x"),
                      "--distributed", redis_url)  # fmt: skip
    assert refused.returncode == 2 and "without --distributed" in refused.stderr
    refused = run_cli("audit", live_site.url(), "--out", str(tmp_path / "audit"), "--production-url",
                      "https://www.example.com/", "--workers", "2")  # fmt: skip
    assert refused.returncode == 2 and "without --distributed or --workers" in refused.stderr


def test_a_shared_crawl_raises_no_scrapy_deprecation_warning(
    server: SiteServer, redis_url: str, tmp_path: Path
) -> None:
    """Scrapy's deprecation warnings as errors, in the coordinator and in a worker."""
    strict = [sys.executable, "-W", "error::scrapy.exceptions.ScrapyDeprecationWarning", "-m", "crawler.cli"]
    worker = subprocess.Popen([*strict, "worker", redis_url, "--wait", "30", "-v"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    coordinator = subprocess.run(
        [*strict, "crawl", server.url(), "--out", str(tmp_path / "out"), "--delay", "0", "-v", *FAST,
         "--distributed", redis_url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    _, worker_stderr = worker.communicate(timeout=60)
    for code, stderr in ((coordinator.returncode, coordinator.stderr), (worker.returncode, worker_stderr)):
        assert code == 0, stderr
        assert "Deprecat" not in stderr and "Traceback" not in stderr
