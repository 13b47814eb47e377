"""The item flow: workers push the facts of every URL, one exporter takes them
(redis.asyncio). A consumer group again, so an item taken but not yet fully
handled (the exporter died) is handed out again; items are JSON of
:meth:`PageFacts.to_dict`, and anything else in the stream is refused.
"""

from __future__ import annotations

import json

from redis.asyncio import Redis

from crawler.distributed.signing import seal, sealed
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
    status = data.get("status")
    if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
        raise ValueError("status is not a whole number")
    data["url"].encode("utf-8")  # a lone surrogate from a JSON escape is no URL
    return PageFacts.from_dict(data)


class ItemChannel:
    def __init__(
        self, redis: Redis, crawl: str, consumer: str = "exporter", lease_seconds: float = 120.0,
        secret: bytes | None = None,
    ) -> None:  # fmt: skip
        self.redis = redis
        self.stream = f"sitemap-crawler:{crawl}:items"
        self.entries = LeasedStream(redis, self.stream, GROUP, consumer, lease_seconds)
        self.secret = secret  # items are sealed under it, and an item without its seal is refused
        self.context = f"item {crawl}"
        self.consumer = consumer
        # Resumed: where this consumer's own leased entries (taken by the exporter that died) are read from.
        self.unfinished: str | None = None

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
                data = json.dumps(each.to_dict(), ensure_ascii=False, default=str).encode()
                fields = {"f": data} if self.secret is None else {"f": data, "s": seal(self.secret, self.context, data)}
                pipe.xadd(self.stream, fields)  # type: ignore[arg-type]
            await pipe.execute()

    def resume(self) -> None:
        """Take first what an exporter of this crawl that died had taken and not acknowledged: its
        consumer is this one, so they are read back at once, without waiting for their lease to lapse."""
        self.unfinished = "0"

    async def take(self, count: int = 100, block_ms: int | None = None) -> list[tuple[str, PageFacts]]:
        """Items to export: those left unfinished by an exporter that died, then new ones."""
        if self.unfinished is not None:
            taken = await self.entries.take_ours(count, None, self._read, "an item", after=self.unfinished)
            self.unfinished = self.entries.last_read  # None: its history is all read, new items next
            if self.unfinished is not None:
                return taken
        return await self.entries.take_ours(count, None, self._read, "an item", block_ms=block_ms)

    def _read(self, fields: object) -> PageFacts:
        """The facts in an entry's *fields*, sealed under the crawl's secret (when it has one)."""
        if not isinstance(fields, dict):
            raise TypeError("not an item entry")
        data = fields.get(b"f")
        if self.secret is not None and not sealed(self.secret, self.context, data or b"", fields.get(b"s")):
            raise ValueError("not sealed by a worker of this crawl")
        return _facts(data)

    async def done(self, entries: list[str]) -> None:
        await self.entries.done(entries)

    async def backlog(self) -> int:
        return await self.entries.length()
