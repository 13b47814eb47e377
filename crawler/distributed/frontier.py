"""The shared frontier: a Redis stream read by a consumer group, so a request
handed to a worker is leased, not removed (redis.asyncio: never blocking).

- ``offer`` adds requests whose fingerprint the seen set did not hold, in
  one Lua script: two workers offering one URL enqueue it once. The page
  budget (``--max-pages``), each host's (``--max-pages-per-host``) and the
  hosts taken in (``--max-hosts``) are counted there too, for all workers at
  once: pages past them are handed back, not queued.
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
# KEYS: seen set, stream, pages counted, pages counted by host (a hash), hosts taken in (a set).
# ARGV: the page budget, each host's, the most hosts (0: none), then fingerprint, entry, is-a-page
# ('1'/'0'), seal ('' without a secret), host for each request.
# Returns {how many were queued, the 0-based positions of pages over a limit, each one's limit}.
_OFFER = """
local budget, per_host, max_hosts = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local added, over, limits = 0, {}, {}
local function count(call, ...)
  local counted = redis.pcall(call, ...)
  if type(counted) == 'table' then  -- not a counter of ours (another type, not a number): repaired
    redis.call('DEL', (...))
    counted = redis.call(call, ...)
  end
  return counted
end
for i, kind in ipairs({'set', 'none', 'none', 'hash', 'set'}) do
  local found = redis.call('TYPE', KEYS[i])['ok']
  if kind ~= 'none' and found ~= kind and found ~= 'none' then
    redis.call('DEL', KEYS[i])  -- a seen "set", or a count by host, of another type is not ours
  end
end
local function limit(host)
  if max_hosts > 0 and redis.call('SISMEMBER', KEYS[5], host) == 0 then
    if redis.call('SCARD', KEYS[5]) >= max_hosts then
      return 'hosts'
    end
    redis.call('SADD', KEYS[5], host)
  end
  if per_host > 0 and count('HINCRBY', KEYS[4], host, 1) > per_host then
    return 'host_pages'
  end
  if budget > 0 and count('INCR', KEYS[3]) > budget then
    return 'pages'
  end
  return nil
end
for i = 4, #ARGV, 5 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    local over_by = nil
    if ARGV[i + 2] == '1' then
      over_by = limit(ARGV[i + 4])
    end
    if over_by then
      over[#over + 1] = (i - 4) / 5
      limits[#limits + 1] = over_by
    elseif ARGV[i + 3] == '' then
      redis.call('XADD', KEYS[2], '*', 'r', ARGV[i + 1])
      added = added + 1
    else
      redis.call('XADD', KEYS[2], '*', 'r', ARGV[i + 1], 's', ARGV[i + 3])
      added = added + 1
    end
  end
end
return {added, over, limits}
"""


@dataclass(frozen=True, slots=True)
class Offered:
    added: int  # requests queued
    # New pages refused, each with the limit it is over: a crawler.reasons.Limit's value (pages,
    # host_pages, hosts).
    over: list[tuple[QueuedRequest, str]]

    @property
    def over_budget(self) -> list[QueuedRequest]:
        """The pages refused because the crawl's page budget is spent."""
        return [queued for queued, limit in self.over if limit == "pages"]


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
        self.hosts = prefix + "hosts"  # the hosts pages were queued of (--max-hosts)
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

    async def offer(
        self,
        requests: list[tuple[bytes, QueuedRequest]],
        max_pages: int = 0,
        *,
        max_pages_per_host: int = 0,
        max_hosts: int = 0,
    ) -> Offered:
        """Queue the requests whose fingerprint was never seen, pages while the budget lasts: the
        crawl's *max_pages*, each host's *max_pages_per_host*, in *max_hosts* hosts at most."""
        if not requests:
            return Offered(0, [])
        arguments: list[bytes | int | str] = [max_pages, max_pages_per_host, max_hosts]
        for fingerprint, request in requests:
            entry = encode(request)
            sealing = seal(self.secret, self.context, entry).encode() if self.secret is not None else b""
            host = request.url[: request.url.find("/", 8)]  # scheme://host[:port], as the local frontier counts
            arguments += [fingerprint, entry, int(request.callback == PAGE_CALLBACK), sealing, host]
        keys = [self.seen, self.stream, self.pages, self.pages + ":by-host", self.hosts]
        added, over, limits = await self._offer(keys=keys, args=arguments)
        refused = [(requests[int(at)][1], _text(kind)) for at, kind in zip(over, limits, strict=True)]
        return Offered(int(added), refused)

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


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
