"""The coordinator's side of a shared crawl when a step fails, hangs or is overtaken: local
workers end with the run, a worker that will not end is stopped, a robots.txt lock that
expired and passed to another worker is left to it (real processes, a real redis-server)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis
from scrapy.settings import Settings

from crawler.addresses import read_pinned
from crawler.cli.shared import LocalWorkers
from crawler.distributed.robots import SharedRobots
from settings.distributed import Distributed
from settings.staging import ACCESS_VARIABLE, StagingAccess, read_audit

STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"
)


def shared(redis_url: str, workers: int = 3) -> Distributed:
    return Distributed(redis_url, "c", lease_seconds=60, grace=0.5, workers=workers)


def test_local_workers_end_with_a_run_that_fails(redis_url: str) -> None:
    local = LocalWorkers(shared(redis_url), "text", b"a-secret-of-sixteen-chars")
    started = time.monotonic()
    with pytest.raises(RuntimeError), local:
        assert len(local.processes) == 2  # the coordinator is the third
        raise RuntimeError("the crawl failed between the workers' start and their end")
    assert [process.poll() is not None for process in local.processes] == [True, True]
    # Asked to stop, not waited out: they would wait 10 s for a crawl to join.
    assert time.monotonic() - started < 9


def test_local_workers_connect_where_the_coordinators_resolve_says(redis_url: str) -> None:
    """--resolve is this machine's, never read from the Redis: each local worker is given it."""
    pinned = (read_pinned("www.x.test:80:127.0.0.1"), read_pinned("blog.x.test:80:127.0.0.2"))
    with LocalWorkers(shared(redis_url, 2), "text", b"a-secret-of-sixteen-chars", pinned=pinned) as local:
        # What was executed, not /proc/PID/cmdline: right after exec a loaded kernel may not
        # have laid out the new argv yet, and the file reads empty (CI, stop 48).
        arguments = list(local.processes[0].args)
    given = [arguments[n + 1] for n, argument in enumerate(arguments) if argument == "--resolve"]
    assert given == ["www.x.test:80:127.0.0.1", "blog.x.test:80:127.0.0.2"]


def environment_of(pid: int) -> dict[str, str]:
    """A child's environment, once the kernel has laid it out after exec (bounded wait)."""
    ends = time.monotonic() + 10
    while not (raw := Path(f"/proc/{pid}/environ").read_bytes()) and time.monotonic() < ends:
        time.sleep(0.01)
    return dict(entry.decode().partition("=")[::2] for entry in raw.split(b"\0") if entry)


def test_local_workers_crawl_with_the_coordinators_staging_credentials(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However the coordinator was given them (a config file's, say), its credentials reach its
    local workers in their environment, each origin's own; never on their command line."""
    access = StagingAccess((
        ("http://www.x.test/", (("Authorization", "Basic cHJldmlldzpzM2NyZXQ="), ("Cookie", "w=www-c00kie"))),
        ("http://blog.x.test/", (("Authorization", "Basic cHJldmlldzpzM2NyZXQ="),)),
    ))  # fmt: skip
    with LocalWorkers(shared(redis_url, 2), "text", b"a-secret-of-sixteen-chars", access=access) as local:
        environment = environment_of(local.processes[0].pid)
        arguments = " ".join(local.processes[0].args)
    assert StagingAccess.from_json(environment[ACCESS_VARIABLE]) == access
    assert "c00kie" not in arguments and "cHJldmlldzpzM2NyZXQ=" not in arguments
    # A worker takes them as its own; any other process reads its own options.
    monkeypatch.setenv(ACCESS_VARIABLE, environment[ACCESS_VARIABLE])
    for variable in ("SITEMAP_STAGING_USER", "SITEMAP_STAGING_PASSWORD", "SITEMAP_STAGING_COOKIE"):
        monkeypatch.delenv(variable, raising=False)
    worker, other = Settings(), Settings()
    for settings in (worker, other):
        settings.setmodule("settings", priority="project")
    worker.set("SITEMAP_ROLE", "worker")
    assert read_audit(worker, "http://www.x.test/").access == access
    assert read_audit(other, "http://www.x.test/").access is None


def test_a_worker_that_will_not_end_is_stopped(redis_url: str) -> None:
    local = LocalWorkers(shared(redis_url, 2), "text", b"a-secret-of-sixteen-chars", end_seconds=0.5)
    stubborn = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout is not None and stubborn.stdout.readline() == "ready\n"  # SIGTERM ignored from now on
    local.processes.append(stubborn)
    started = time.monotonic()
    assert local.finish() == [-9]  # killed after end_seconds, no TimeoutExpired
    assert time.monotonic() - started < 30
    stubborn.stdout.close()


def test_a_robots_lock_that_passed_to_another_worker_is_left_to_it(redis_url: str) -> None:
    async def body() -> bytes | None:
        redis = Redis.from_url(redis_url)
        try:
            slow = SharedRobots(redis, "c", "slow", lock_seconds=0.2)
            lock = slow.lock_prefix + "https://e.com"

            async def fetch() -> tuple[bytes, str | None]:
                # Our lock expires while we fetch, and another worker takes it (the events, awaited).
                for _ in range(200):  # bounded: 10 s
                    if await redis.set(lock, "other", nx=True, px=60_000):
                        return b"User-agent: *\nAllow: /\n", None
                    await asyncio.sleep(0.05)
                raise AssertionError("the lock never expired")

            await slow.decided("https://e.com", fetch)
            value: bytes | None = await redis.get(lock)
            return value
        finally:
            await redis.aclose()

    assert asyncio.run(body()) == b"other"
