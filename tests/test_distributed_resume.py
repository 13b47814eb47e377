"""A coordinator of a shared crawl that can resume (``crawl --distributed URL --resume``),
through a real redis-server: killed mid-crawl with SIGKILL, restarted, it ends with the set
and the report of an uninterrupted run, the previous set published until then; and the
resumes that cannot work are refused in one line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

from redis import Redis

from crawler.distributed.server import PrivateRedis
from tests.conftest import CLI, TEST_SECRET, crawl, read_report, run_cli, sitemap_locs
from tests.shared_crawl import chain_site, fan_site

PAGES = 60
#: Leases a coordinator's own worker holds at most (twice --concurrency): what it may leave to be fetched again.
ROOM = 4


def recorded(store: Path) -> int:
    """URLs the state store's open run has recorded (read-only: the exporter holds the store)."""
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as db:
            row = db.execute(
                "SELECT count(*) FROM page WHERE last_run = (SELECT max(id) FROM run WHERE status = 'running')"
            ).fetchone()
    except sqlite3.Error:
        return 0  # not created yet, or busy for a moment
    return int(row[0])


def runs(store: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return [(int(row[0]), str(row[1])) for row in db.execute("SELECT id, status FROM run ORDER BY id")]


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}


def test_a_coordinator_killed_midway_resumes_to_the_set_and_report_of_one_run(
    redis_server: PrivateRedis, tmp_path: Path
) -> None:
    site = chain_site(tmp_path, PAGES)
    joined: subprocess.Popen[str] | None = None
    try:
        reference = crawl(site.url(), tmp_path / "reference", "--no-state")
        assert reference.code == 0 and len(reference.listed) == PAGES, reference.process.stderr
        out, store = tmp_path / "out", tmp_path / "out.state.sqlite"
        previous = crawl(site.url(), out, "--max-pages", "10")  # the set published before: run 1
        assert previous.code == 0 and len(previous.listed) == 10, previous.process.stderr
        before = files(out)
        site.reset()
        # Paced (10 pages/s for the site), so the crawl takes about 6 s: long enough to interrupt.
        options = ["--delay", "0.1", "--concurrency", "2", "--set", "SITEMAP_LEASE_SECONDS=2"]
        command = ["crawl", site.url(), "--out", str(out), "-q", *options]
        shared = {"SITEMAP_CRAWLER_DISTRIBUTED": redis_server.url}  # in the environment: the password stays out of argv
        joined = subprocess.Popen([str(CLI), "worker", "--wait", "30"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env={**os.environ, **shared})  # fmt: skip
        coordinator = subprocess.Popen([str(CLI), *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, start_new_session=True, env={**os.environ, **shared})  # fmt: skip
        ends = time.monotonic() + 60
        while recorded(store) < 10 and time.monotonic() < ends and coordinator.poll() is None:  # bounded
            site.wait_for(len(site.hits) + 1, timeout=10)  # the next request, not a blind sleep
        assert coordinator.poll() is None and recorded(store) >= 10, "the crawl ended before it could be interrupted"
        os.killpg(coordinator.pid, signal.SIGKILL)  # the coordinator and any child of it
        coordinator.communicate(timeout=30)
        exported_before_kill = recorded(store)
        assert exported_before_kill < PAGES
        assert files(out) == before  # the previous set, untouched

        with Redis.from_url(redis_server.url) as redis:
            crawl_id = redis.get("sitemap-crawler:current")
            assert crawl_id is not None
            items = f"sitemap-crawler:{crawl_id.decode()}:items"
            # The exporter that died had taken a batch it never acknowledged: made certain here by
            # taking, as it would, the next items the worker (still crawling) pushes.
            redis.xreadgroup("exporter", "exporter", {items: ">"}, count=3, block=20_000)
            unfinished = redis.xpending(items, "exporter")["pending"]
        assert unfinished > 0

        # Resumes that cannot work are refused in one line, before anything is touched.
        empty = redis_server.url.rsplit("/", 1)[0] + "/1"  # the same server, a database without the crawl
        nothing = run_cli(*command, "--resume", env={"SITEMAP_CRAWLER_DISTRIBUTED": empty})
        assert nothing.returncode == 1, nothing.stderr
        assert f"nothing to resume at redis://:***@127.0.0.1:{redis_server.port}/1" in nothing.stderr
        assert "run without --resume" in nothing.stderr and redis_server.password not in nothing.stderr
        other = run_cli(*command, "--resume", "--delay", "0.2", env=shared)
        assert other.returncode == 1 and "other values of DOWNLOAD_DELAY" in other.stderr, other.stderr
        assert files(out) == before

        started = time.monotonic()
        resumed = run_cli(*command, "--resume", timeout=90, env=shared)
        took = time.monotonic() - started
        joined.communicate(timeout=60)
    finally:
        site.stop()
        if joined is not None and joined.poll() is None:  # the test failed before the worker ended
            joined.kill()
            joined.communicate()
    assert resumed.returncode == 0, resumed.stderr
    assert joined is not None and joined.returncode == 0  # the worker crawled on and ended by itself
    assert "Run 2 (resumed)" in resumed.stderr
    assert runs(store) == [(1, "published"), (2, "published")]  # the interrupted run went on: no new one
    origin = site.url().rstrip("/")
    listed = sitemap_locs(out, origin)  # every file valid
    assert len(listed) == len(set(listed)) and sorted(listed) == sorted(reference.listed)
    report = read_report(tmp_path / "out.crawl-report.jsonl")  # no URL twice
    outcome = {url: (line["outcome"], line["reason"]) for url, line in report.items()}
    assert outcome == {url: (line["outcome"], line["reason"]) for url, line in reference.report.items()}
    # The frontier and seen set were kept: only the leases of the killed coordinator's worker are
    # fetched again (a crawl from clean keys would fetch every page and robots.txt twice).
    again = sum(count - 1 for count in Counter(site.paths()).values())
    assert again <= ROOM, Counter(site.paths()).most_common(8)
    # The dead exporter's batch was taken at once, not after its items' lease (120 s) lapsed.
    assert took < 60
    # Every item exported, and the published crawl retired from Redis with every key of it.
    with Redis.from_url(redis_server.url) as redis:
        assert list(redis.scan_iter(match=items.rsplit(":", 1)[0] + ":*")) == []


def test_resumes_that_cannot_work_are_refused_before_connecting(tmp_path: Path) -> None:
    unreachable = "redis://:pw-s3cret-0@127.0.0.1:1/0"  # never reached: each is refused first
    url = "http://127.0.0.1:1/"
    out = str(tmp_path / "out")
    for options, message in (
        (("--distributed", unreachable, "--no-state"), "cannot be used with --no-state"),
        (("--workers", "2"), "its private Redis ended with it"),
        (("--distributed", unreachable), "has none: run without --resume"),  # no interrupted run in the store
    ):
        refused = run_cli("crawl", url, "--out", out, "--resume", *options)
        assert refused.returncode == 2, refused.stderr
        assert message in refused.stderr and "pw-s3cret-0" not in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert not (tmp_path / "out" / "sitemap.xml").exists()


def test_a_second_coordinator_of_a_running_crawl_is_refused(redis_url: str, tmp_path: Path) -> None:
    """Started twice (or resumed while the first still runs somewhere): the second would wipe or
    share the crawl's keys and publish half a set. It waits for the first's hold to lapse (it
    does not: that one is alive), then stops in one line; the first finishes the whole crawl."""
    site = fan_site(tmp_path, 60, "User-agent: *\nCrawl-delay: 0.3\nAllow: /\n")
    shared = {"SITEMAP_CRAWLER_DISTRIBUTED": redis_url}
    # One crawl id, two output folders: as two machines would run it (one folder is locked on one).
    command = ["crawl", site.url(), "-q", "--no-state", "--set", "SITEMAP_CRAWL_ID=one-crawl"]
    try:
        first = subprocess.Popen([str(CLI), *command, "--out", str(tmp_path / "out")], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env={**os.environ, **shared})  # fmt: skip
        site.wait_for(5, timeout=60)  # crawling
        second = run_cli(*command, "--out", str(tmp_path / "elsewhere"), env=shared)
        _, stderr = first.communicate(timeout=120)
    finally:
        site.stop()
    assert second.returncode == 1, second.stderr
    assert "another coordinator of this crawl is running" in second.stderr, second.stderr
    assert first.returncode == 0, stderr
    assert len(sitemap_locs(tmp_path / "out", site.url().rstrip("/"))) == 60
    assert Counter(site.paths()).most_common(1)[0][1] == 1  # nothing fetched twice: the keys were kept


def test_a_worker_does_not_join_a_crawl_whose_coordinator_is_not_running(redis_url: str) -> None:
    """A coordinator that failed or was killed leaves its configuration for --resume; a worker
    that finds it waits for a coordinator (--wait), then says so, rather than fetch for nobody."""
    from crawler.distributed.config import publish_config
    from crawler.distributed.exporter_lock import exporter_key

    with Redis.from_url(redis_url) as redis:
        publish_config(redis, "orphan", {"SITEMAP_START_URL": "http://127.0.0.1:9/"}, TEST_SECRET.encode())
        redis.delete(exporter_key("orphan"))  # its coordinator is gone
    joined = run_cli("worker", "--wait", "1", env={"SITEMAP_CRAWLER_DISTRIBUTED": redis_url})
    assert joined.returncode == 1, joined.stderr
    assert "has no coordinator running" in joined.stderr and "--resume" in joined.stderr
