"""A Redis stream read by one consumer group: what the frontier and the item
flow share (redis.asyncio).

An entry handed to a consumer is leased, not removed; it leaves the stream
when it is done with. A live consumer renews what it holds (:meth:`renew`),
so only a lease left idle longer than the lease time (its consumer died) is
handed out again, and counted (:attr:`reclaimed`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.exceptions import ResponseError

__all__ = ["LeasedStream"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# KEYS: the stream. ARGV: the group, the consumer, the idle time to set (ms), then entry ids. Each
# entry still leased to this consumer gets that idle time (XCLAIM JUSTID: no delivery counted): 0
# renews its lease, one past the lease hands it back to whoever asks next. One another consumer
# took meanwhile is left to it. Returns the ids that were still this consumer's.
_RENEW = """
local kept = {}
for i = 4, #ARGV do
  local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if pending[1] and pending[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'IDLE', ARGV[3], 'JUSTID')
    kept[#kept + 1] = ARGV[i]
  end
end
return kept
"""


class LeasedStream:
    def __init__(self, redis: Redis, key: str, group: str, consumer: str, lease_seconds: float):
        self.redis = redis
        self.key = key
        self.group = group
        self.consumer = consumer
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.refused = 0  # entries that were not ours, removed unread
        self.reclaimed = 0  # entries taken back from a consumer that stopped renewing them
        self.last_read: str | None = None  # the last entry the latest take read (None: it read none)
        self._renew = redis.register_script(_RENEW)

    async def open(self) -> None:
        """The consumer group, created with the stream if need be."""
        try:
            await self.redis.xgroup_create(self.key, self.group, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    async def take(
        self, count: int, block_ms: int | None = None, after: str | None = None, living: set[str] | None = None
    ) -> list[tuple[str, dict[Any, Any]]]:
        """Up to *count* (entry id, fields): expired leases first, then new entries; or with
        *after*, the entries this consumer itself holds past that id (its own history: what it
        had taken when it died, read back at once under the same name). With *living* (the
        consumers known alive), the leases of the others are taken too once they have gone
        unrenewed for a quarter of the lease: a dead consumer's, without waiting a whole lease."""
        entries: list[tuple[Any, Any]] = []
        if after is None:
            claimed = await self.redis.xautoclaim(
                self.key, self.group, self.consumer, min_idle_time=self.lease_ms, start_id="0-0", count=count
            )
            entries = list(claimed[1])
            if living is not None and len(entries) < count:
                entries += await self._adopt(living, count - len(entries))
            self.reclaimed += len(entries)
        else:
            read_own: Any = await self.redis.xreadgroup(self.group, self.consumer, {self.key: after}, count=count)
            entries = [entry for _, stream_entries in read_own or [] for entry in stream_entries]
        if after is None and len(entries) < count:
            read: Any = await self.redis.xreadgroup(
                self.group, self.consumer, {self.key: ">"}, count=count - len(entries), block=block_ms
            )
            for _, stream_entries in read or []:
                entries += list(stream_entries)
        taken = [
            (entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id), fields or {})
            for entry_id, fields in entries
        ]
        self.last_read = taken[-1][0] if taken else None
        return taken

    async def _adopt(self, living: set[str], count: int) -> list[tuple[Any, Any]]:
        """Up to *count* entries of consumers not in *living*, idle for a quarter of the lease
        (a live one renews more often), claimed by this one (XCLAIM checks the idle time again,
        so two consumers adopting at once never both get an entry)."""
        idle, adopted = self.lease_ms // 4, list[tuple[Any, Any]]()
        for consumer in await self.redis.xinfo_consumers(self.key, self.group):
            raw = consumer.get("name")
            name = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            if name == self.consumer or name in living or not consumer.get("pending"):
                continue
            pending = await self.redis.xpending_range(
                self.key, self.group, min="-", max="+", count=count - len(adopted), consumername=name, idle=idle
            )
            ids: list[Any] = [entry["message_id"] for entry in pending]
            if ids:
                claimed: Any = await self.redis.xclaim(
                    self.key, self.group, self.consumer, min_idle_time=idle, message_ids=ids
                )
                adopted += [entry for entry in claimed if entry[1] is not None]
            if len(adopted) >= count:
                break
        return adopted

    async def take_ours(
        self, count: int, field: bytes | None, read: Callable[[object], T], kind: str, *,
        block_ms: int | None = None, after: str | None = None, living: set[str] | None = None,
    ) -> list[tuple[str, T]]:  # fmt: skip
        """Up to *count* (entry id, *read* of its *field*, or of all its fields when *field* is
        ``None``), as :meth:`take` gives them. An entry *read* refuses (not ours: whatever it
        raises) is removed from the stream, never used."""
        taken, refused = [], []
        for entry, fields in await self.take(count, block_ms, after, living):
            try:
                taken.append((entry, read(fields if field is None else fields.get(field))))
            except Exception as error:  # noqa: BLE001 - whatever an entry makes *read* raise, it is not ours
                refused.append(entry)
                logger.warning("Refused %s entry that is not ours (%s): %s", kind, entry, error)
        if refused:
            self.refused += len(refused)
            await self.done(refused)
        return taken

    async def renew(self, entries: list[str]) -> set[str]:
        """The leases of *entries* start again, as this consumer is alive; the ids still its own."""
        if not entries:
            return set()
        kept = await self._renew(keys=[self.key], args=[self.group, self.consumer, 0, *entries])
        return {entry.decode() if isinstance(entry, bytes) else str(entry) for entry in kept}

    async def hand_back(self, entries: list[str]) -> None:
        """This consumer stops: its leases of *entries* lapse now, for the next consumer that asks."""
        if entries:
            await self._renew(keys=[self.key], args=[self.group, self.consumer, self.lease_ms * 10, *entries])

    async def done(self, entries: list[str]) -> None:
        """The entries are done with: acknowledged, and out of the stream."""
        if entries:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.xack(self.key, self.group, *entries)
                pipe.xdel(self.key, *entries)
                await pipe.execute()

    async def length(self) -> int:
        return int(await self.redis.xlen(self.key))

    async def leased(self) -> int:
        pending = await self.redis.xpending(self.key, self.group)
        return int(pending["pending"])
