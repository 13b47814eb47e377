"""The coordinator's side of a shared crawl (SPEC S8): the configuration
published for the workers, the local workers of ``--workers N`` (through a
private redis-server when no ``--distributed`` is given), and the workers'
counts added to the coordinator's stats for its summary."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scrapy.settings import SETTINGS_PRIORITIES, Settings

from crawler.distributed.server import PrivateRedis
from settings.distributed import Distributed, masked_url
from settings.environment import env_name

__all__ = ["LocalWorkers", "SharedCrawlError", "private_redis", "publish", "shared_outcome"]

#: How long a local worker may take to end once asked to (it adds its counts to the crawl's).
WORKERS_END_SECONDS = 30.0


class SharedCrawlError(Exception):
    """The shared crawl cannot start: no Redis to reach, or none to start."""


def publish(settings: Settings, shared: Distributed) -> None:
    """The crawl's configuration in Redis for the workers: every setting given (any layer above the defaults)."""
    from redis import Redis  # noqa: PLC0415 - a shared crawl only: a local one never imports redis
    from redis.exceptions import RedisError  # noqa: PLC0415

    from crawler.distributed.config import publish_config  # noqa: PLC0415

    given = {}
    for name in settings.attributes:
        if (settings.getpriority(name) or 0) >= SETTINGS_PRIORITIES["cmdline"] and name not in _OWN:
            value = settings[name]
            given[name] = value.copy_to_dict() if hasattr(value, "copy_to_dict") else value
    given["SITEMAP_CRAWL_ID"] = shared.crawl
    try:
        with Redis.from_url(shared.url, socket_timeout=10) as redis:
            publish_config(redis, shared.crawl, given)
    except (RedisError, OSError) as error:
        raise SharedCrawlError(f"cannot reach the Redis at {masked_url(shared.url)}: {error}") from None


#: The coordinator's own: a worker has its own way to the Redis and starts no workers.
_OWN = ("SITEMAP_DISTRIBUTED", "SITEMAP_WORKERS")


@contextmanager
def private_redis(settings: Settings) -> Iterator[None]:
    """With ``--workers N`` and no ``--distributed``: a redis-server of this run's own, stopped at the end."""
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
            yield
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class LocalWorkers:
    """``sitemap-crawler worker`` processes on this machine beside the coordinator, which
    crawls too: ``--workers N`` is N crawling processes, one per core to use."""

    def __init__(self, shared: Distributed, log_format: str):
        self.shared = shared
        self.log_format = log_format
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        """The workers, given the Redis URL in their environment: a password stays out of ``ps``."""
        command = [sys.executable, "-m", "crawler.cli", "worker", "--wait", "10", "--log-format", self.log_format]
        environment = {**os.environ, env_name("distributed"): self.shared.url}
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
        return [process.wait(timeout=WORKERS_END_SECONDS) for process in self.processes]


def shared_outcome(shared: Distributed, origin: str) -> tuple[dict[str, Any], str | None]:
    """What the workers fetched, summed, and why the site's robots.txt could not be read, if it
    could not (a worker found out; the coordinator's summary says it). Nothing when Redis is gone."""
    from redis import Redis  # noqa: PLC0415 - a shared crawl only
    from redis.exceptions import RedisError  # noqa: PLC0415

    from crawler.distributed.coordination import counts_key  # noqa: PLC0415
    from crawler.distributed.robots import decode, robots_key  # noqa: PLC0415

    try:
        with Redis.from_url(shared.url, socket_timeout=10) as redis:
            raw = redis.hgetall(counts_key(shared.crawl))
            robots = redis.hget(robots_key(shared.crawl), origin)
    except (RedisError, OSError):
        return {}, None
    counts = {key.decode(): int(value) for key, value in raw.items()}
    return counts, decode(robots)[1] if robots is not None else None
