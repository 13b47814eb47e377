"""The item flow: workers push the facts of every URL, one exporter takes them
(redis.asyncio). A consumer group again, so an item taken but not yet fully
handled (the exporter died) is handed out again; items are JSON of
:meth:`PageFacts.to_dict`, and anything else in the stream is refused.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from crawler.items import PageFacts

__all__ = ["ItemChannel"]

logger = logging.getLogger(__name__)

GROUP = "exporter"
MAX_ITEM = 8 * 1024 * 1024


def _facts(raw: object) -> PageFacts:
    if not isinstance(raw, bytes) or len(raw) > MAX_ITEM:
        raise ValueError("not an item entry")
    data = json.loads(raw)
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        raise ValueError("not the facts of a URL")  # noqa: TRY004 - a refused entry, like the others
    return PageFacts.from_dict(data)


class ItemChannel:
    def __init__(self, redis: Redis, crawl: str, consumer: str = "exporter", lease_seconds: float = 120.0):
        self.redis = redis
        self.stream = f"sitemap-crawler:{crawl}:items"
        self.consumer = consumer
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.refused = 0

    async def open(self) -> None:
        try:
            await self.redis.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    async def push(self, facts: PageFacts) -> None:
        data = json.dumps(facts.to_dict(), ensure_ascii=False, default=str).encode()
        await self.redis.xadd(self.stream, {"f": data})

    async def take(self, count: int = 100, block_ms: int | None = None) -> list[tuple[str, PageFacts]]:
        """Items to export: those left unfinished by an exporter that died, then new ones."""
        claimed = await self.redis.xautoclaim(
            self.stream, GROUP, self.consumer, min_idle_time=self.lease_ms, start_id="0-0", count=count
        )
        entries: list[tuple[Any, Any]] = list(claimed[1])
        if len(entries) < count:
            read: Any = await self.redis.xreadgroup(
                GROUP, self.consumer, {self.stream: ">"}, count=count - len(entries), block=block_ms
            )
            for _, stream_entries in read or []:
                entries += list(stream_entries)
        taken, refused = [], []
        for entry_id, fields in entries:
            entry = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
            try:
                taken.append((entry, _facts((fields or {}).get(b"f"))))
            except (ValueError, TypeError, KeyError, AttributeError) as error:
                refused.append(entry)
                logger.warning("Refused an item entry that is not ours (%s): %s", entry, error)
        if refused:
            self.refused += len(refused)
            await self.done(refused)
        return taken

    async def done(self, entries: list[str]) -> None:
        if entries:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.xack(self.stream, GROUP, *entries)
                pipe.xdel(self.stream, *entries)
                await pipe.execute()

    async def backlog(self) -> int:
        return int(await self.redis.xlen(self.stream))
