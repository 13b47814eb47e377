"""The shared frontier: a Redis stream read by a consumer group, so a request
handed to a worker is leased, not removed (redis.asyncio: never blocking).

- ``offer`` adds requests whose fingerprint the seen set did not hold, in
  one Lua script: two workers offering one URL enqueue it once.
- ``lease`` first takes back entries leased longer than the lease time by
  anyone (``XAUTOCLAIM``: a worker that died, even by SIGKILL, loses
  nothing), then reads new ones (``XREADGROUP``). Entries that are not ours
  are refused and removed, never decoded into a request.
- ``ack`` ends a lease once the response (or failure) is fully handled.

Keys live under ``sitemap-crawler:<crawl>:``. The seen set holds the
project's 16-byte request fingerprints.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.asyncio import Redis

from crawler.distributed.codec import PoisonedEntry, QueuedRequest, decode, encode
from crawler.distributed.stream import LeasedStream

__all__ = ["Lease", "RedisFrontier"]

logger = logging.getLogger(__name__)

GROUP = "workers"
# KEYS: seen set, stream. ARGV: fingerprint, entry, fingerprint, entry, ... Returns how many were added.
_OFFER = """
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[2], '*', 'r', ARGV[i + 1])
    added = added + 1
  end
end
return added
"""


@dataclass(frozen=True, slots=True)
class Lease:
    entry: str  # the stream entry id, to acknowledge
    request: QueuedRequest


class RedisFrontier:
    def __init__(self, redis: Redis, crawl: str, consumer: str, lease_seconds: float = 60.0):
        prefix = f"sitemap-crawler:{crawl}:"
        self.stream = prefix + "frontier"
        self.seen = prefix + "seen"
        self.redis = redis
        self.entries = LeasedStream(redis, self.stream, GROUP, consumer, lease_seconds)
        self.refused = 0  # poisoned entries met by this worker
        self._offer = redis.register_script(_OFFER)

    async def open(self) -> None:
        await self.entries.open()

    async def offer(self, requests: list[tuple[bytes, QueuedRequest]]) -> int:
        """Queue the requests whose fingerprint was never seen; how many were."""
        if not requests:
            return 0
        arguments: list[bytes] = []
        for fingerprint, request in requests:
            arguments += [fingerprint, encode(request)]
        added: int = await self._offer(keys=[self.seen, self.stream], args=arguments)
        return added

    async def lease(self, count: int = 16, block_ms: int | None = None) -> list[Lease]:
        """Up to *count* requests for this worker: expired leases first, then new entries."""
        leases, poisoned = [], []
        for entry, fields in await self.entries.take(count, block_ms):
            raw = fields.get(b"r")
            try:
                if not isinstance(raw, bytes):
                    raise PoisonedEntry("no request field")
                leases.append(Lease(entry, decode(raw)))
            except PoisonedEntry as error:
                poisoned.append(entry)
                logger.warning("Refused a frontier entry that is not ours (%s): %s", entry, error)
        if poisoned:
            self.refused += len(poisoned)
            await self.ack(poisoned)
        return leases

    async def ack(self, entries: list[str]) -> None:
        """The leases are done with: the entries leave the stream."""
        await self.entries.done(entries)

    async def counts(self) -> tuple[int, int]:
        """(entries in the stream, entries leased and not yet acknowledged)."""
        return await self.entries.length(), await self.entries.leased()

    async def seen_count(self) -> int:
        return int(await self.redis.scard(self.seen))
