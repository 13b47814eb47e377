"""The item flow: workers push the facts of every URL, one exporter takes them
(redis.asyncio). A consumer group again, so an item taken but not yet fully
handled (the exporter died) is handed out again; items are JSON of
:meth:`PageFacts.to_dict`, and anything else in the stream is refused.
"""

from __future__ import annotations

import json

from redis.asyncio import Redis

from crawler.distributed.stream import LeasedStream
from crawler.items import PageFacts

__all__ = ["ItemChannel"]

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
        self.entries = LeasedStream(redis, self.stream, GROUP, consumer, lease_seconds)

    @property
    def refused(self) -> int:
        """Entries that were not the facts of a URL, removed unread."""
        return self.entries.refused

    async def open(self) -> None:
        await self.entries.open()

    async def push(self, *facts: PageFacts) -> None:
        """The facts into the stream, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for each in facts:
                pipe.xadd(self.stream, {"f": json.dumps(each.to_dict(), ensure_ascii=False, default=str).encode()})
            await pipe.execute()

    async def take(self, count: int = 100, block_ms: int | None = None) -> list[tuple[str, PageFacts]]:
        """Items to export: those left unfinished by an exporter that died, then new ones."""
        return await self.entries.take_ours(count, b"f", _facts, "an item", block_ms)

    async def done(self, entries: list[str]) -> None:
        await self.entries.done(entries)

    async def backlog(self) -> int:
        return await self.entries.length()
