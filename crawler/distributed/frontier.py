"""The shared frontier: a Redis stream read by a consumer group, so a request
handed to a worker is leased, not removed (redis.asyncio: never blocking).

- ``offer`` adds requests whose fingerprint the seen set did not hold, in
  one Lua script: two workers offering one URL enqueue it once. The page
  budget (``--max-pages``) is counted there too, for all workers at once:
  pages past it are handed back, not queued.
- ``lease`` first takes back entries left unrenewed longer than the lease
  time (``XAUTOCLAIM``: a worker that died, even by SIGKILL, loses nothing;
  a live one renews what it holds with ``renew``), then reads new ones
  (``XREADGROUP``). Entries that are not ours (without this crawl's seal,
  when it has a shared secret, or not a queued request) are refused and
  removed, never decoded into a request.
- ``ack`` ends a lease once the response (or failure) is fully handled.

Keys live under ``sitemap-crawler:<crawl>:``. The seen set holds the
project's 16-byte request fingerprints.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from crawler.distributed.codec import PAGE_CALLBACK, PoisonedEntry, QueuedRequest, decode, encode
from crawler.distributed.signing import seal, sealed
from crawler.distributed.stream import LeasedStream

__all__ = ["Lease", "Offered", "RedisFrontier"]

GROUP = "workers"
# KEYS: seen set, stream, pages counted. ARGV: the page budget (0: none), then
# fingerprint, entry, is-a-page ('1'/'0'), seal ('' without a secret) for each request.
# Returns {how many were queued, the 0-based positions of pages over the budget}.
_OFFER = """
local budget = tonumber(ARGV[1])
local added, over = 0, {}
local function count()
  local counted = redis.pcall('INCR', KEYS[3])
  if type(counted) == 'table' then  -- not a counter of ours (another type, not a number): repaired
    redis.call('DEL', KEYS[3])
    counted = redis.call('INCR', KEYS[3])
  end
  return counted
end
if redis.call('TYPE', KEYS[1])['ok'] ~= 'set' and redis.call('TYPE', KEYS[1])['ok'] ~= 'none' then
  redis.call('DEL', KEYS[1])  -- a seen "set" of another type is not ours
end
for i = 2, #ARGV, 4 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    if budget > 0 and ARGV[i + 2] == '1' and count() > budget then
      over[#over + 1] = (i - 2) / 4
    elseif ARGV[i + 3] == '' then
      redis.call('XADD', KEYS[2], '*', 'r', ARGV[i + 1])
      added = added + 1
    else
      redis.call('XADD', KEYS[2], '*', 'r', ARGV[i + 1], 's', ARGV[i + 3])
      added = added + 1
    end
  end
end
return {added, over}
"""


@dataclass(frozen=True, slots=True)
class Offered:
    added: int  # requests queued
    over_budget: list[QueuedRequest]  # new pages refused: the page budget is spent


@dataclass(frozen=True, slots=True)
class Lease:
    entry: str  # the stream entry id, to acknowledge
    request: QueuedRequest


class RedisFrontier:
    def __init__(
        self, redis: Redis, crawl: str, consumer: str, lease_seconds: float = 60.0, secret: bytes | None = None
    ) -> None:
        prefix = f"sitemap-crawler:{crawl}:"
        self.secret = secret  # entries are sealed under it, and one without its seal is refused
        self.context = f"frontier {crawl}"
        self.stream = prefix + "frontier"
        self.seen = prefix + "seen"
        self.pages = prefix + "pages"  # pages queued against the budget
        self.redis = redis
        self.entries = LeasedStream(redis, self.stream, GROUP, consumer, lease_seconds)
        self._offer = redis.register_script(_OFFER)

    @property
    def refused(self) -> int:
        """Poisoned entries met by this worker."""
        return self.entries.refused

    @property
    def reclaimed(self) -> int:
        """Requests this worker took back from a worker that stopped: fetched again."""
        return self.entries.reclaimed

    async def open(self) -> None:
        await self.entries.open()

    async def offer(self, requests: list[tuple[bytes, QueuedRequest]], max_pages: int = 0) -> Offered:
        """Queue the requests whose fingerprint was never seen, pages while the budget lasts."""
        if not requests:
            return Offered(0, [])
        arguments: list[bytes | int] = [max_pages]
        for fingerprint, request in requests:
            entry = encode(request)
            sealing = seal(self.secret, self.context, entry).encode() if self.secret is not None else b""
            arguments += [fingerprint, entry, int(request.callback == PAGE_CALLBACK), sealing]
        added, over = await self._offer(keys=[self.seen, self.stream, self.pages], args=arguments)
        return Offered(int(added), [requests[int(position)][1] for position in over])

    async def lease(self, count: int = 16, block_ms: int | None = None, living: set[str] | None = None) -> list[Lease]:
        """Up to *count* requests for this worker: expired leases first (with *living*, the workers
        alive, those of dead workers too), then new entries."""
        taken = await self.entries.take_ours(count, None, self._read, "a frontier", block_ms=block_ms, living=living)
        return [Lease(entry, request) for entry, request in taken]

    def _read(self, fields: object) -> QueuedRequest:
        """The request in an entry's *fields*, sealed under the crawl's secret (when it has one)."""
        if not isinstance(fields, dict) or not isinstance(raw := fields.get(b"r"), bytes):
            raise PoisonedEntry("no request field")
        if self.secret is not None and not sealed(self.secret, self.context, raw, fields.get(b"s")):
            raise PoisonedEntry("not sealed by a worker of this crawl")
        return decode(raw)

    async def renew(self, entries: list[str]) -> set[str]:
        """This worker is alive: its leases of *entries* start again; those still its own."""
        return await self.entries.renew(entries)

    async def hand_back(self, entries: list[str]) -> None:
        """This worker stops (asked to): its leases of *entries* go to the next worker at once."""
        await self.entries.hand_back(entries)

    async def ack(self, entries: list[str]) -> None:
        """The leases are done with: the entries leave the stream."""
        await self.entries.done(entries)

    async def counts(self) -> tuple[int, int]:
        """(entries in the stream, entries leased and not yet acknowledged)."""
        return await self.entries.length(), await self.entries.leased()

    async def seen_count(self) -> int:
        return int(await self.redis.scard(self.seen))
