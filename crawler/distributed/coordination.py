"""What workers agree on through Redis besides the frontier: politeness for the
site as a whole, who is alive, and when the crawl is over (redis.asyncio).

- :class:`SitePace`: one next-allowed time and the grants in flight per
  site, taken atomically (Lua, on Redis's clock) before each download, so
  ``--delay``, ``Crawl-delay`` and the concurrency limit hold across all
  workers; a grant lapses when no download could still hold it.
- :class:`Workers`: heartbeats with a time-to-live; a worker that stops
  beating is dead (its leases come back through the frontier).
- :func:`crawl_finished`: the crawl started, nothing is queued or leased,
  and every live worker has been idle for a grace period (one that joined
  and never worked does not hold the end back).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from redis.asyncio import Redis

from crawler.distributed.frontier import RedisFrontier

__all__ = ["SUMMED", "SitePace", "Workers", "add_counts", "counts_key", "crawl_finished", "parse_counts"]

logger = logging.getLogger(__name__)

#: The stats every worker adds to the crawl's totals when it ends (the coordinator's summary reads them).
SUMMED = ("response_received_count", "downloader/request_count", "downloader/response_bytes", "retry/count")

# On Redis's clock (TIME), so workers' clocks need not agree. KEYS: the pace hash, the grants
# (a sorted set: token -> the moment the grant lapses). ARGV: delay (ms), max in flight, how long
# a grant may be held (ms), the longest delay there can be (ms), this grant's token.
# Returns 0 when the slot is taken, else how many ms to wait before asking again.
# Values no worker could have written (a grant held past any download, a next-allowed time
# further than any delay) are repaired here, so a planted or stale key cannot stop the crawl.
_ACQUIRE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local delay, limit, hold, longest = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + hold), '+inf')
if redis.call('ZCARD', KEYS[2]) >= limit then
  return math.max(5, math.min(delay, 50))
end
local next_at = tonumber(redis.call('HGET', KEYS[1], 'next') or '0') or 0
if next_at > now + math.max(delay, longest) then
  next_at = now + delay
  redis.call('HSET', KEYS[1], 'next', next_at)
end
if now < next_at then
  return next_at - now
end
redis.call('HSET', KEYS[1], 'next', now + delay)
redis.call('ZADD', KEYS[2], now + hold, ARGV[5])
return 0
"""


class SitePace:
    """Politeness for one site, shared by every worker of a crawl."""

    def __init__(self, redis: Redis, crawl: str, site: str, hold: float = 120.0, longest_delay: float = 60.0):
        self.key = f"sitemap-crawler:{crawl}:pace:{site}"
        self.grants = self.key + ":grants"
        self.redis = redis
        self.hold_ms = int(hold * 1000)  # a grant outlives no download: its holder died
        self.longest_ms = int(longest_delay * 1000)
        self._acquire = redis.register_script(_ACQUIRE)

    async def try_acquire(self, delay: float, concurrency: int, token: str) -> float:
        """0.0 when a download may start now (and counts as in flight under *token*), else seconds to wait."""
        args: list[int | str] = [int(delay * 1000), max(1, concurrency), self.hold_ms, self.longest_ms, token]
        wait: int = await self._acquire(keys=[self.key, self.grants], args=args)
        return wait / 1000

    async def release(self, token: str) -> None:
        """The download of *token* is over (answered or failed)."""
        await self.redis.zrem(self.grants, token)


@dataclass(frozen=True, slots=True)
class WorkerState:
    name: str
    idle_since: float | None  # seconds since the epoch; None while busy


class Workers:
    """Heartbeats: each worker refreshes its key; a key that expires is a dead worker. A key no
    worker could have written (no time-to-live, one longer than any heartbeat's, a value that is
    neither ``busy`` nor a moment not yet to come) is removed and does not hold back the end."""

    #: No heartbeat of ours lives longer than this.
    MAX_TTL = 600.0
    #: A worker's clock may run this far ahead of ours.
    SKEW = 60.0

    def __init__(self, redis: Redis, crawl: str, ttl: float = 15.0):
        self.redis = redis
        self.prefix = f"sitemap-crawler:{crawl}:worker:"
        self.ttl_ms = int(min(ttl, self.MAX_TTL) * 1000)
        self.removed = 0  # heartbeats that were not ours

    async def beat(self, name: str, idle_since: float | None) -> None:
        value = "busy" if idle_since is None else f"{idle_since:.3f}"
        await self.redis.set(self.prefix + name, value, px=self.ttl_ms)

    async def leave(self, name: str) -> None:
        await self.redis.delete(self.prefix + name)

    async def alive(self) -> list[WorkerState]:
        states, bad = [], []
        async for key in self.redis.scan_iter(match=self.prefix + "*", count=100):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(key)
                pipe.pttl(key)
                value, ttl = await pipe.execute()
            if value is None:
                continue  # expired between the scan and the read
            name = (key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key))[len(self.prefix) :]
            state = _heartbeat(name, value, ttl)
            if state is None:
                bad.append(key)
            else:
                states.append(state)
        if bad:
            self.removed += len(bad)
            logger.warning("Removed %d heartbeat(s) in Redis that no worker of ours wrote", len(bad))
            await self.redis.delete(*bad)
        return states


def _heartbeat(name: str, value: object, ttl: object) -> WorkerState | None:
    """The state a heartbeat says, or ``None`` when it cannot be one of ours."""
    if not isinstance(ttl, int) or not 0 < ttl <= Workers.MAX_TTL * 1000:
        return None
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
    if text == "busy":
        return WorkerState(name, None)
    try:
        since = float(text)
    except ValueError:
        return None
    if not math.isfinite(since) or since > time.time() + Workers.SKEW:
        return None
    return WorkerState(name, since)


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


def parse_counts(raw: dict[bytes, bytes]) -> dict[str, int]:
    """The crawl's totals as stored, whole numbers of ours only (anything else there is not ours)."""
    counts = {}
    for name, value in raw.items():
        text = name.decode("utf-8", "replace")
        if text in SUMMED and value.isdigit() and len(value) < 19:
            counts[text] = int(value)
    return counts


async def add_counts(redis: Redis, crawl: str, counts: dict[str, int]) -> None:
    """A worker's share of the crawl's totals, added once as it ends."""
    async with redis.pipeline(transaction=True) as pipe:
        for name, value in counts.items():
            pipe.hincrby(counts_key(crawl), name, value)
        await pipe.execute()
