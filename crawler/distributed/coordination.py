"""What workers agree on through Redis besides the frontier: politeness for the
site as a whole, who is alive, and when the crawl is over (redis.asyncio).

- :class:`SitePace`: one next-allowed time and the grants in flight per
  site, taken atomically (Lua, on Redis's clock) at the moment of each
  download, so ``--delay``, ``Crawl-delay`` and the concurrency limit hold
  across all workers whatever their clocks say; a grant lapses when its
  worker's heartbeat has, or when no download could still hold it.
- :class:`Workers`: heartbeats with a time-to-live, dated on Redis's clock
  (a worker says how long it has been idle, not since when); a worker that
  stops beating is dead (its leases come back through the frontier).
- :func:`crawl_finished`: the crawl started, nothing is queued or leased,
  and every live worker has been idle for a grace period (one that joined
  and never worked does not hold the end back).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.asyncio import Redis

from crawler.distributed.frontier import RedisFrontier

__all__ = [
    "SUMMED", "SitePace", "Workers", "add_counts", "counts_key", "crawl_finished", "parse_counts", "redis_clock",
]  # fmt: skip

logger = logging.getLogger(__name__)

#: The stats every worker adds to the crawl's totals when it ends (the coordinator's summary reads them).
SUMMED = (
    "response_received_count", "downloader/request_count", "downloader/response_bytes", "retry/count",
    "sitemap/shared/refetched",  # crawler.stats.Stat.SHARED_REFETCHED
    # URLs cut by a limit, by kind (crawler.stats.limit of a crawler.reasons.Limit): the summary's "Cut by a limit"
    *(f"sitemap/limit/{kind}" for kind in ("depth", "url_length", "query_variants", "pages", "hosts", "host_pages")),
    "sitemap/not_itemised/past_budget",  # crawler.stats.Stat.PAST_BUDGET
    # --render: the summary's render lines, its page rate and exit status 8 (crawler/cli/render_summary.py)
    "render/rendered", "render/failed", "render/retried", "render/kept", "render/left_out", "render/responses",
)  # fmt: skip

# On Redis's clock (TIME), so workers' clocks need not agree. KEYS: the pace hash, the grants
# (a sorted set: token -> the moment the grant lapses). ARGV: delay (ms), max in flight, how long
# a grant may be held (ms), the longest delay there can be (ms), this grant's token
# ("<worker>|<count>"), the workers' heartbeat key prefix.
# Returns 0 when the slot is taken, else how many ms to wait before asking again.
# Values no worker could have written (a key of another type, a grant held past any download,
# a next-allowed time further than any delay) are repaired here, so a planted or stale key cannot stop the crawl;
# the grant of a worker whose heartbeat lapsed (it died mid-download) is given back at once.
_ACQUIRE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local delay, limit, hold, longest = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for i, kind in ipairs({'hash', 'zset'}) do
  local found = redis.call('TYPE', KEYS[i])['ok']
  if found ~= kind and found ~= 'none' then
    redis.call('DEL', KEYS[i])  -- a pace or grants key of another type is not ours
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + hold), '+inf')
for _, token in ipairs(redis.call('ZRANGE', KEYS[2], 0, 63)) do
  local holder = string.match(token, '^(.+)|%d+$')
  if holder == nil or redis.call('EXISTS', ARGV[6] .. holder) == 0 then
    redis.call('ZREM', KEYS[2], token)
  end
end
if redis.call('ZSCORE', KEYS[2], ARGV[5]) then
  return 0  -- granted already (a retried call whose answer was lost)
end
if redis.call('ZCARD', KEYS[2]) >= limit then
  return math.max(5, math.min(delay, 50))
end
local next_at = tonumber(redis.call('HGET', KEYS[1], 'next') or '0') or 0
if next_at > now + math.max(delay, longest) then
  next_at = now + delay
  redis.call('HSET', KEYS[1], 'next', next_at)
end
-- The delay known now counts from the last grant too: one taken before robots.txt's Crawl-delay
-- was read (robots.txt itself) is as far from the next as the delay asks.
local last = math.min(tonumber(redis.call('HGET', KEYS[1], 'last') or '0') or 0, now)
next_at = math.max(next_at, last + delay)
if now < next_at then
  return next_at - now
end
redis.call('HSET', KEYS[1], 'next', now + delay, 'last', now)
redis.call('ZADD', KEYS[2], now + hold, ARGV[5])
return 0
"""


# KEYS: the pace. ARGV: how long to hold the site (ms), the longest hold kept (ms).
_HOLD = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then
  redis.call('DEL', KEYS[1])
end
local held = tonumber(redis.call('HGET', KEYS[1], 'held') or '0') or 0
local wanted = now + math.min(tonumber(ARGV[1]), tonumber(ARGV[2]))
if wanted > held or held > now + tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'held', wanted)
  held = wanted
end
return held - now
"""


class SitePace:
    """Politeness for one site, shared by every worker of a crawl."""

    def __init__(self, redis: Redis, crawl: str, site: str, hold: float = 120.0, longest_delay: float = 60.0):
        self.key = f"sitemap-crawler:{crawl}:pace:{site}"
        self.grants = self.key + ":grants"
        self.heartbeats = Workers.prefix_of(crawl)
        self.redis = redis
        self.hold_ms = int(hold * 1000)  # a grant outlives no download: its holder died
        self.longest_ms = int(longest_delay * 1000)
        self._acquire = redis.register_script(_ACQUIRE)
        self._hold = redis.register_script(_HOLD)

    @staticmethod
    def token(worker: str, count: int) -> str:
        """A grant's name: the worker's, whose heartbeat keeps it, and a count of its own."""
        return f"{worker}|{count}"

    async def try_acquire(self, delay: float, concurrency: int, token: str) -> float:
        """0.0 when a download may start now (and counts as in flight under *token*), else seconds to
        wait: a span of Redis's clock, so no worker's own clock is read."""
        args: list[int | str] = [
            int(delay * 1000), max(1, concurrency), self.hold_ms, self.longest_ms, token, self.heartbeats,
        ]  # fmt: skip
        wait: int = await self._acquire(keys=[self.key, self.grants], args=args)
        return wait / 1000

    async def hold(self, seconds: float) -> float:
        """Hold the site for every worker for *seconds* (a Retry-After, capped at the longest delay);
        the seconds it is now held for."""
        left: int = await self._hold(keys=[self.key], args=[int(seconds * 1000), self.longest_ms])
        return left / 1000

    async def held_for(self) -> float:
        """Seconds the site is still held for (0.0 when it is not), on Redis's clock."""
        return await self.hold(0)

    async def release(self, token: str) -> None:
        """The download of *token* is over (answered or failed)."""
        await self.redis.zrem(self.grants, token)


@dataclass(frozen=True, slots=True)
class WorkerState:
    name: str
    idle_since: float | None  # seconds on Redis's clock; None while busy


# KEYS: the heartbeat. ARGV: 'busy' or how long the worker has been idle (ms), the time-to-live (ms).
# An idle worker's heartbeat holds the moment it became idle, on Redis's clock.
_BEAT = """
local value = ARGV[1]
if value ~= 'busy' then
  local clock = redis.call('TIME')
  value = tostring(tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) - tonumber(ARGV[1]))
end
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
"""


async def redis_clock(redis: Redis) -> float:
    """Now on Redis's clock, in seconds: the one clock every worker of the crawl reads."""
    seconds, micros = await redis.time()
    return int(seconds) + int(micros) / 1e6


class Workers:
    """Heartbeats: each worker refreshes its key; a key that expires is a dead worker. A key no
    worker could have written (no time-to-live, one longer than any heartbeat's, a value that is
    neither ``busy`` nor a moment of Redis's clock already past) is removed and does not hold back
    the end."""

    #: No heartbeat of ours lives longer than this.
    MAX_TTL = 600.0
    #: Idle for longer than this is idle for good (a worker that never worked).
    FOREVER = 10 * 365 * 86400.0

    def __init__(self, redis: Redis, crawl: str, ttl: float = 15.0):
        self.redis = redis
        self.prefix = self.prefix_of(crawl)
        self.ttl_ms = int(min(ttl, self.MAX_TTL) * 1000)
        self.removed = 0  # heartbeats that were not ours
        self._beat = redis.register_script(_BEAT)

    @staticmethod
    def prefix_of(crawl: str) -> str:
        return f"sitemap-crawler:{crawl}:worker:"

    async def beat(self, name: str, idle_for: float | None) -> None:
        """*name* is alive: busy (``None``), or idle for *idle_for* seconds (its own span, no date)."""
        value = "busy" if idle_for is None else str(int(min(max(idle_for, 0.0), self.FOREVER) * 1000))
        await self._beat(keys=[self.prefix + name], args=[value, self.ttl_ms])

    async def leave(self, name: str) -> None:
        await self.redis.delete(self.prefix + name)

    async def alive(self) -> list[WorkerState]:
        states, bad = [], []
        now = await redis_clock(self.redis)
        async for key in self.redis.scan_iter(match=self.prefix + "*", count=100):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(key)
                pipe.pttl(key)
                value, ttl = await pipe.execute()
            if value is None:
                continue  # expired between the scan and the read
            name = (key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key))[len(self.prefix) :]
            state = _heartbeat(name, value, ttl, now)
            if state is None:
                bad.append(key)
            else:
                states.append(state)
        if bad:
            self.removed += len(bad)
            logger.warning("Removed %d heartbeat(s) in Redis that no worker of ours wrote", len(bad))
            await self.redis.delete(*bad)
        return states


def _heartbeat(name: str, value: object, ttl: object, now: float) -> WorkerState | None:
    """The state a heartbeat says, or ``None`` when it cannot be one of ours (*now*: Redis's clock)."""
    if not isinstance(ttl, int) or not 0 < ttl <= Workers.MAX_TTL * 1000:
        return None
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
    if text == "busy":
        return WorkerState(name, None)
    try:
        since = int(text) / 1000
    except ValueError:
        return None
    if since > now + 1.0:  # written by our script, on this clock: never ahead of it
        return None
    return WorkerState(name, since)


async def crawl_finished(frontier: RedisFrontier, workers: Workers, grace: float) -> bool:
    """True when the crawl has started (a URL was seen), nothing is queued or leased, and every
    live worker has been idle for *grace* seconds (of Redis's clock)."""
    if await frontier.seen_count() == 0:
        return False  # not seeded yet: a worker that joins before the first offer waits for it
    queued, leased = await frontier.counts()
    if queued or leased:
        return False
    states = await workers.alive()
    now = await redis_clock(workers.redis)
    return all(state.idle_since is not None and now - state.idle_since >= grace for state in states)


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
