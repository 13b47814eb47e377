"""A Redis stream read by one consumer group: what the frontier and the item
flow share (redis.asyncio).

An entry handed to a consumer is leased, not removed; it leaves the stream
when it is done with, and one leased longer than the lease time by anyone
(a consumer that died) is handed out again.
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


class LeasedStream:
    def __init__(self, redis: Redis, key: str, group: str, consumer: str, lease_seconds: float):
        self.redis = redis
        self.key = key
        self.group = group
        self.consumer = consumer
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.refused = 0  # entries that were not ours, removed unread

    async def open(self) -> None:
        """The consumer group, created with the stream if need be."""
        try:
            await self.redis.xgroup_create(self.key, self.group, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    async def take(self, count: int, block_ms: int | None = None) -> list[tuple[str, dict[Any, Any]]]:
        """Up to *count* (entry id, fields): expired leases first, then new entries."""
        claimed = await self.redis.xautoclaim(
            self.key, self.group, self.consumer, min_idle_time=self.lease_ms, start_id="0-0", count=count
        )
        entries: list[tuple[Any, Any]] = list(claimed[1])
        if len(entries) < count:
            read: Any = await self.redis.xreadgroup(
                self.group, self.consumer, {self.key: ">"}, count=count - len(entries), block=block_ms
            )
            for _, stream_entries in read or []:
                entries += list(stream_entries)
        return [
            (entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id), fields or {})
            for entry_id, fields in entries
        ]

    async def take_ours(
        self, count: int, field: bytes | None, read: Callable[[object], T], kind: str, block_ms: int | None = None
    ) -> list[tuple[str, T]]:
        """Up to *count* (entry id, *read* of its *field*, or of all its fields when *field* is
        ``None``). An entry *read* refuses (not ours: whatever it raises) is removed from the
        stream, never used."""
        taken, refused = [], []
        for entry, fields in await self.take(count, block_ms):
            try:
                taken.append((entry, read(fields if field is None else fields.get(field))))
            except Exception as error:  # noqa: BLE001 - whatever an entry makes *read* raise, it is not ours
                refused.append(entry)
                logger.warning("Refused %s entry that is not ours (%s): %s", kind, entry, error)
        if refused:
            self.refused += len(refused)
            await self.done(refused)
        return taken

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
