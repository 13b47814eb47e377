"""robots.txt read once for a whole shared crawl (redis.asyncio).

The first worker to need an origin's rules takes a short lock and fetches
them; every other worker waits for the body it stores. A fetcher that dies
holding the lock lets it expire, and the next worker fetches instead. What
is stored is the body that decides (RFC 9309: a 5xx gives ``Disallow: /``)
and why, when the file could not be read, so every worker reports the same.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from crawler.distributed.signing import seal, sealed

__all__ = ["SharedRobots", "decode", "encode", "robots_key"]

logger = logging.getLogger(__name__)

# KEYS: the lock. ARGV: its holder's name. A lock that expired and was taken by another is left alone.
_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

#: (the body that decides, why the file could not be read or None)
Decided = tuple[bytes, str | None]


def robots_key(crawl: str) -> str:
    """The hash of origin -> the decided robots.txt of that origin."""
    return f"sitemap-crawler:{crawl}:robots"


def encode(decided: Decided, secret: bytes | None, crawl: str, origin: str) -> str:
    """The stored form of a decision, sealed under the crawl's secret (when it has one)."""
    body, why = decided
    data: dict[str, object] = {"body": body.decode("latin-1"), "why": why}
    if secret is not None:
        data["sig"] = seal(secret, f"robots {crawl} {origin}", body + b"\0" + (why or "").encode())
    return json.dumps(data)


class SharedRobots:
    def __init__(self, redis: Redis, crawl: str, name: str, lock_seconds: float = 60.0, secret: bytes | None = None):
        self.redis = redis
        self.crawl = crawl
        self.secret = secret
        self.key = robots_key(crawl)
        self.lock_prefix = f"sitemap-crawler:{crawl}:robots-lock:"
        self.name = name
        self.lock_ms = int(lock_seconds * 1000)
        self._unlock = redis.register_script(_UNLOCK)

    async def decided(self, origin: str, fetch: Callable[[], Awaitable[Decided]]) -> Decided:
        """The stored rules of *origin*; fetched here with *fetch* when no other worker is at it."""
        while True:  # each turn either returns or waits while a live fetcher holds the lock
            stored = await self.redis.hget(self.key, origin)
            if stored is not None:
                try:
                    return decode(stored, self.secret, self.crawl, origin)
                except (ValueError, RecursionError):  # not what a worker stores: removed, and fetched again
                    logger.warning("The robots.txt stored in Redis for %s is not ours: fetched again", origin)
                    await self.redis.hdel(self.key, origin)
                    continue
            lock = self.lock_prefix + origin
            ttl = await self.redis.pttl(lock)
            if ttl == -1 or ttl > self.lock_ms:
                await self.redis.delete(lock)  # a lock no worker of ours took (no time-to-live, or too long)
            if await self.redis.set(lock, self.name, nx=True, px=self.lock_ms):
                try:
                    body, why = await fetch()
                    await self.redis.hset(self.key, origin, encode((body, why), self.secret, self.crawl, origin))
                finally:
                    await self._unlock(keys=[lock], args=[self.name])  # only if still ours: it may have expired
                return body, why
            await asyncio.sleep(0.05)


def decode(raw: bytes | str, secret: bytes | None, crawl: str, origin: str) -> Decided:
    """The stored decision; ``ValueError`` when *raw* is not what a worker of this crawl stored
    (with a *secret*: not sealed under it for this crawl and origin)."""
    try:
        data = json.loads(raw)  # JSONDecodeError is a ValueError
    except RecursionError:
        raise ValueError("the stored robots.txt is not ours") from None
    if not isinstance(data, dict) or not isinstance(data.get("body"), str):
        raise ValueError("the stored robots.txt is not ours")  # noqa: TRY004 - bad data, not a bug
    why = data.get("why")
    why = why if isinstance(why, str) else None
    try:
        body = data["body"].encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError("the stored robots.txt is not ours") from None
    context = f"robots {crawl} {origin}"
    if secret is not None and not sealed(secret, context, body + b"\0" + (why or "").encode(), data.get("sig")):
        raise ValueError("the stored robots.txt is not sealed by a worker of this crawl")
    return body, why
