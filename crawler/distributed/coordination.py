"""What workers agree on through Redis besides the frontier: politeness for the
site as a whole, who is alive, and when the crawl is over (redis.asyncio).

- :class:`SitePace`: one next-allowed time and one in-flight count per site,
  taken atomically (Lua) before each download, so ``--delay``,
  ``Crawl-delay`` and the concurrency limit hold across all workers.
- :class:`Workers`: heartbeats with a time-to-live; a worker that stops
  beating is dead (its leases come back through the frontier).
- :func:`crawl_finished`: the crawl started, nothing is queued or leased,
  and every live worker has been idle for a grace period (one that joined
  and never worked does not hold the end back).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from redis.asyncio import Redis

from crawler.distributed.frontier import RedisFrontier

__all__ = ["SUMMED", "SitePace", "Workers", "add_counts", "counts_key", "crawl_finished"]

#: The stats every worker adds to the crawl's totals when it ends (the coordinator's summary reads them).
SUMMED = ("response_received_count", "downloader/request_count", "downloader/response_bytes", "retry/count")

# KEYS: pace hash. ARGV: now (ms), delay (ms), max in flight.
# Returns 0 when the slot is taken, else how many ms to wait before asking again.
_ACQUIRE = """
local now = tonumber(ARGV[1])
local delay = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local next_at = tonumber(redis.call('HGET', KEYS[1], 'next') or '0')
local inflight = tonumber(redis.call('HGET', KEYS[1], 'inflight') or '0')
if inflight >= limit then
  return math.max(5, math.min(delay, 50))
end
if now < next_at then
  return next_at - now
end
redis.call('HSET', KEYS[1], 'next', now + delay, 'inflight', inflight + 1)
return 0
"""
_RELEASE = """
local inflight = tonumber(redis.call('HGET', KEYS[1], 'inflight') or '0')
if inflight > 0 then
  redis.call('HSET', KEYS[1], 'inflight', inflight - 1)
end
return inflight
"""


def _ms() -> int:
    return int(time.time() * 1000)


class SitePace:
    """Politeness for one site, shared by every worker of a crawl."""

    def __init__(self, redis: Redis, crawl: str, site: str):
        self.key = f"sitemap-crawler:{crawl}:pace:{site}"
        self._acquire = redis.register_script(_ACQUIRE)
        self._release = redis.register_script(_RELEASE)

    async def try_acquire(self, delay: float, concurrency: int) -> float:
        """0.0 when a download may start now (and counts as in flight), else seconds to wait."""
        wait: int = await self._acquire(keys=[self.key], args=[_ms(), int(delay * 1000), max(1, concurrency)])
        return wait / 1000

    async def release(self) -> None:
        """A download is over (answered or failed)."""
        await self._release(keys=[self.key])


@dataclass(frozen=True, slots=True)
class WorkerState:
    name: str
    idle_since: float | None  # seconds since the epoch; None while busy


class Workers:
    """Heartbeats: each worker refreshes its key; a key that expires is a dead worker."""

    def __init__(self, redis: Redis, crawl: str, ttl: float = 15.0):
        self.redis = redis
        self.prefix = f"sitemap-crawler:{crawl}:worker:"
        self.ttl_ms = int(ttl * 1000)

    async def beat(self, name: str, idle_since: float | None) -> None:
        value = "busy" if idle_since is None else f"{idle_since:.3f}"
        await self.redis.set(self.prefix + name, value, px=self.ttl_ms)

    async def leave(self, name: str) -> None:
        await self.redis.delete(self.prefix + name)

    async def alive(self) -> list[WorkerState]:
        states = []
        async for key in self.redis.scan_iter(match=self.prefix + "*", count=100):
            value = await self.redis.get(key)
            if value is None:
                continue  # expired between the scan and the read
            name = (key.decode() if isinstance(key, bytes) else str(key))[len(self.prefix) :]
            text = value.decode() if isinstance(value, bytes) else str(value)
            states.append(WorkerState(name, None if text == "busy" else float(text)))
        return states


async def crawl_finished(frontier: RedisFrontier, workers: Workers, grace: float, now: float | None = None) -> bool:
    """True when the crawl has started (a URL was seen), nothing is queued or leased, and every
    live worker has been idle for *grace* seconds."""
    if await frontier.seen_count() == 0:
        return False  # not seeded yet: a worker that joins before the first offer waits for it
    queued, leased = await frontier.counts()
    if queued or leased:
        return False
    moment = time.time() if now is None else now
    return all(state.idle_since is not None and moment - state.idle_since >= grace for state in await workers.alive())


def counts_key(crawl: str) -> str:
    return f"sitemap-crawler:{crawl}:counts"


async def add_counts(redis: Redis, crawl: str, counts: dict[str, int]) -> None:
    """A worker's share of the crawl's totals, added once as it ends."""
    async with redis.pipeline(transaction=True) as pipe:
        for name, value in counts.items():
            pipe.hincrby(counts_key(crawl), name, value)
        await pipe.execute()
