"""One exporter per crawl (redis.py, both clients).

The coordinator's exporter holds a key with a short time-to-live, renewed as
it runs. A second coordinator of the same crawl (one started twice, or a
``--resume`` while the first is still alive somewhere) would take the same
items and publish a set of half of them: it waits for the key to lapse (the
first one was killed) for at most that time-to-live, and is refused if it
does not.
"""

from __future__ import annotations

import os
import socket
import time

import redis as sync_redis
from redis.asyncio import Redis

__all__ = ["TTL_SECONDS", "CrawlBusy", "ExporterLock", "claim", "exporter_key"]

#: How long the key outlives an exporter that stopped renewing it (it died).
TTL_SECONDS = 10.0
_TTL_MS = int(TTL_SECONDS * 1000)

# KEYS: the lock. ARGV: the holder's token, the time-to-live (ms; 0: release). Only the holder
# renews or releases it; 1 when it still held it.
_HOLDER = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
"""


def exporter_key(crawl: str) -> str:
    return f"sitemap-crawler:{crawl}:exporter"


class CrawlBusy(Exception):
    """Another coordinator's exporter holds the crawl."""


def process_token() -> str:
    """This process's hold on a crawl: the coordinator claims it, then its exporter renews it."""
    return f"{socket.gethostname()}-{os.getpid()}"


def claim(redis: sync_redis.Redis, crawl: str, timeout: float = TTL_SECONDS + 1) -> None:
    """The crawl is this process's to export, once no other exporter holds it (waiting at most
    *timeout* seconds: a dead one's key lapses by then); :class:`CrawlBusy` if one still does."""
    key, token = exporter_key(crawl), process_token()
    ends = time.monotonic() + timeout
    while not redis.set(key, token, nx=True, px=_TTL_MS):
        held = redis.get(key)
        if held is not None and (held.decode("utf-8", "replace") if isinstance(held, bytes) else str(held)) == token:
            redis.pexpire(key, _TTL_MS)
            return
        if time.monotonic() >= ends:
            raise CrawlBusy(f"another coordinator of this crawl is running (it holds {key})")
        time.sleep(0.1)


class ExporterLock:
    def __init__(self, redis: Redis, crawl: str):
        self.redis = redis
        self.key = exporter_key(crawl)
        self.token = process_token()
        self.renewed_at = 0.0
        self._holder = redis.register_script(_HOLDER)

    async def take(self) -> bool:
        """The crawl's exporter is this one (claimed by this process, or free), unless another holds it."""
        self.renewed_at = time.monotonic()
        if await self.redis.set(self.key, self.token, nx=True, px=_TTL_MS):
            return True
        return bool(await self._holder(keys=[self.key], args=[self.token, _TTL_MS]))

    async def renew(self) -> bool:
        """Still this one's (renewed a few times per time-to-live); False once another took it."""
        if time.monotonic() - self.renewed_at < TTL_SECONDS / 4:
            return True
        self.renewed_at = time.monotonic()
        return bool(await self._holder(keys=[self.key], args=[self.token, _TTL_MS]))

    async def release(self) -> None:
        await self._holder(keys=[self.key], args=[self.token, 0])
