"""The coordinator's side of a shared crawl (SPEC S8): the configuration
published for the workers, the local workers of ``--workers N`` (through a
private redis-server when no ``--distributed`` is given), and the workers'
counts added to the coordinator's stats for its summary."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.settings import SETTINGS_PRIORITIES, Settings

from crawler.addresses import Pinned
from crawler.cli.parser import UsageError
from crawler.distributed.server import PrivateRedis
from settings.config import SitemapConfig
from settings.distributed import SECRET_VARIABLE, Distributed, check_auth, masked_url
from settings.environment import env_name
from settings.staging import ACCESS_VARIABLE, StagingAccess

__all__ = [
    "LocalWorkers",
    "SharedCrawlError",
    "check_shared",
    "private_redis",
    "publish",
    "shared_outcome",
    "stop_with_own_worker",
]

logger = logging.getLogger(__name__)

#: How long a local worker may take to end once asked to (it adds its counts to the crawl's).
WORKERS_END_SECONDS = 30.0


class SharedCrawlError(Exception):
    """The shared crawl cannot start: no Redis to reach, or none to start."""


def check_shared(config: SitemapConfig, settings: Settings) -> None:
    """Before a crawl shared through ``--distributed``: a Redis that asks for a password, and a
    shared secret (its workers are given it too) to sign the configuration and seal what they write.
    ``--resume`` of a shared crawl needs the Redis that kept its keys and the exporter's state store."""
    shared = config.distributed
    if config.resume and (shared is not None or settings.getint("SITEMAP_WORKERS")):
        if shared is None:
            raise UsageError(
                "--resume of a --workers run needs the Redis it ran through: its private Redis ended with it, "
                "so there is nothing to resume; run without --resume (or share a Redis with --distributed)"
            )
        if config.state_path is None:
            raise UsageError(
                "--resume of a shared crawl continues the exporter's run in the state store: it cannot be used "
                "with --no-state"
            )
    if shared is None:
        return
    try:
        check_auth(shared.url, shared.insecure)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if shared.secret is None:
        raise UsageError(
            f"a crawl shared through --distributed signs its configuration: set ${SECRET_VARIABLE} "
            "(or --shared-secret-file FILE) to a secret of 16 characters or more, the same for every worker"
        )


def publish(settings: Settings, shared: Distributed, secret: bytes) -> str:
    """The crawl's options in Redis for the workers, signed with *secret*: the crawl options the
    user gave (any layer above the defaults) and a new run. A Scrapy setting is this process's own:
    a worker never takes one from Redis, and the user is told which were not shared. With
    ``--resume`` the crawl already in Redis is re-attached to instead, its configuration checked,
    its keys kept. Returns the run (what is sealed in it is bound to it)."""
    from redis.exceptions import RedisError  # noqa: PLC0415 - a shared crawl only: a local one never imports redis

    from crawler.distributed.client import connect_sync, eviction_policy, redis_failure  # noqa: PLC0415
    from crawler.distributed.config import (  # noqa: PLC0415
        SHARED_OPTIONS,
        ConfigRefused,
        NothingToResume,
        publish_config,
        resume_config,
        shared_options,
    )
    from crawler.distributed.exporter_lock import CrawlBusy  # noqa: PLC0415

    given = {
        name
        for name in settings.attributes
        if (settings.getpriority(name) or 0) >= SETTINGS_PRIORITIES["cmdline"] and name not in _OWN
    }
    options = shared_options(settings, given)
    options["SITEMAP_CRAWL_ID"] = shared.crawl
    options["SITEMAP_RUN"] = run = secrets.token_hex(8)
    kept = sorted(name for name in given - set(SHARED_OPTIONS) if not name.startswith(("SITEMAP_", "LOG_")))
    if kept:
        logger.warning("Not shared with the workers (a worker takes crawl options only): %s", ", ".join(kept))
    try:
        with connect_sync(shared.url, shared.ca_file) as redis:
            if settings.getbool("SITEMAP_RESUME"):
                run = resume_config(redis, shared.crawl, options, secret)
            else:
                publish_config(redis, shared.crawl, options, secret)
            policy = eviction_policy(redis)
    except (RedisError, OSError) as error:
        raise SharedCrawlError(redis_failure(masked_url(shared.url), error)) from None
    except CrawlBusy as error:
        raise SharedCrawlError(f"not started: {error} at {masked_url(shared.url)}") from None
    except NothingToResume as error:
        where = masked_url(shared.url)
        raise SharedCrawlError(f"nothing to resume at {where}: {error}; run without --resume") from None
    except ConfigRefused as error:
        raise SharedCrawlError(f"cannot resume the crawl at {masked_url(shared.url)}: {error}") from None
    if policy not in (None, "noeviction"):
        logger.warning(
            "The Redis at %s has maxmemory-policy %s: it may evict the crawl's keys, and then pages are lost or "
            "fetched again; set maxmemory-policy noeviction", masked_url(shared.url), policy,
        )  # fmt: skip
    return run


#: The coordinator's own: a worker has its own way to the Redis and starts no workers.
_OWN = ("SITEMAP_DISTRIBUTED", "SITEMAP_WORKERS", "SITEMAP_REDIS_CA_FILE")


@contextmanager
def private_redis(settings: Settings) -> Iterator[None]:
    """With ``--workers N`` and no ``--distributed``: a redis-server of this run's own (with a
    password), stopped at the end, and a secret for this run where none is given."""
    if not settings.getint("SITEMAP_WORKERS") or settings.get("SITEMAP_DISTRIBUTED"):
        yield
        return
    folder = Path(tempfile.mkdtemp(prefix="sitemap-crawler-redis-"))
    try:
        try:
            server = PrivateRedis(folder).start()
        except OSError as error:
            raise SharedCrawlError(f"--workers needs a Redis: {error}") from None
        try:
            settings.set("SITEMAP_DISTRIBUTED", server.url, priority="cmdline")
            # This run's own secret, where every process of it reads one (its workers inherit it).
            os.environ.setdefault(SECRET_VARIABLE, secrets.token_hex(32))
            yield
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class LocalWorkers:
    """``sitemap-crawler worker`` processes on this machine beside the coordinator, which
    crawls too: ``--workers N`` is N crawling processes, one per core to use. A context:
    however the coordinator's run ends (an error included), its workers end with it."""

    def __init__(self, shared: Distributed, log_format: str, secret: bytes, *, end_seconds: float = WORKERS_END_SECONDS,
                 pinned: tuple[Pinned, ...] = (), access: StagingAccess | None = None):  # fmt: skip
        self.shared = shared
        self.log_format = log_format
        self.secret = secret
        self.pinned = pinned  # the coordinator's --resolve: this machine's, so its workers' too
        self.access = access  # the coordinator's staging credentials, however they were given
        self.end_seconds = end_seconds
        self.processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.finish()

    def start(self) -> None:
        """The workers, given the Redis URL, the secret and the staging credentials in their
        environment: out of ``ps``."""
        command = [sys.executable, "-m", "crawler.cli", "worker", "--wait", "10", "--log-format", self.log_format]
        if self.shared.insecure:
            command.append("--insecure-redis")
        for rule in self.pinned:
            command += ["--resolve", str(rule)]
        environment = {**os.environ, env_name("distributed"): self.shared.url, SECRET_VARIABLE: self.secret.decode()}
        if self.shared.ca_file:
            environment[env_name("redis_ca_file")] = self.shared.ca_file
        if self.access is not None:
            environment[ACCESS_VARIABLE] = self.access.to_json()
        for _ in range(self.shared.workers - 1):  # the coordinator is one of them
            worker = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=environment)  # noqa: S603 - our own CLI
            self.processes.append(worker)

    def finish(self) -> list[int]:
        """Their exit statuses, once the coordinator's run is over. The crawl is then over too
        (or was stopped): a worker that crawled is ending by itself, one still starting up has
        nothing to do; each is asked to stop (SIGTERM) and adds its counts as it ends."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        ends = time.monotonic() + self.end_seconds
        statuses = []
        for process in self.processes:
            try:
                statuses.append(process.wait(timeout=max(0.0, ends - time.monotonic())))
            except subprocess.TimeoutExpired:  # it did not end when asked: stopped for good
                logger.warning("Local worker %d did not end within %.1f s of the crawl: killed", process.pid,
                               self.end_seconds)  # fmt: skip
                process.kill()
                statuses.append(process.wait())
        return statuses


def stop_with_own_worker(exporter: Crawler, worker: Crawler) -> Crawler:
    """*worker*, the coordinator's own, watched: it does everything a worker does with the Redis, so
    when it stops because of the Redis (gone, out of memory, a command its user may not run), every
    worker meets the same, and the exporter stops too: nothing published (the previous set kept),
    not a part of the site, and no wait for work no one can lease."""
    stopping: list[asyncio.Task[None]] = []

    def closed(spider: Spider, reason: str) -> None:
        engine = exporter.engine
        if reason == "redis-lost" and engine is not None and engine.spider is not None:
            stopping.append(asyncio.get_event_loop().create_task(engine.close_spider_async(reason="redis-lost")))

    worker.signals.connect(closed, signal=signals.spider_closed, weak=False)
    return worker


def shared_outcome(shared: Distributed, origin: str, published: bool) -> tuple[dict[str, Any], str | None]:
    """What the workers fetched, summed (once the last has ended, or for at most 10 s), and why
    the site's robots.txt could not be read, if it could not (a worker found out; the
    coordinator's summary says it). Nothing when Redis is gone. A *published* crawl is then
    retired from Redis (:func:`~crawler.distributed.config.retire_config`)."""
    from redis.exceptions import RedisError  # noqa: PLC0415 - a shared crawl only

    from crawler.distributed.client import connect_sync  # noqa: PLC0415
    from crawler.distributed.config import retire_config  # noqa: PLC0415
    from crawler.distributed.coordination import Workers, counts_key, parse_counts  # noqa: PLC0415
    from crawler.distributed.robots import decode, robots_key  # noqa: PLC0415

    try:
        with connect_sync(shared.url, shared.ca_file) as redis:
            # A worker adds its counts as it ends, then its heartbeat goes: wait for the last (bounded).
            ends = time.monotonic() + WORKERS_END_SECONDS / 3
            while alive := next(redis.scan_iter(match=Workers.prefix_of(shared.crawl) + "*", count=100), None):
                if time.monotonic() >= ends:
                    break
                time.sleep(0.05)
            raw = redis.hgetall(counts_key(shared.crawl))
            robots = redis.hget(robots_key(shared.crawl), origin)
            if published:
                retire_config(redis, shared.crawl, everything=alive is None)
    except (RedisError, OSError):
        return {}, None
    try:
        why = decode(robots, shared.sealing_key, shared.crawl, origin)[1] if robots is not None else None
    except ValueError:
        why = None  # not ours: the workers refetched it
    return dict(parse_counts(raw)), why
