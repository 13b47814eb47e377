"""One worker's link to a shared crawl (pure of Scrapy, redis.asyncio).

A background loop moves work both ways: requests the spider found are
offered to the frontier in batches; leases are taken when the worker has
room and handed to Scrapy (``wake``). A lease is acknowledged only when
everything its response produced is safe in Redis: its new requests
offered, its items pushed to the exporter. A worker that dies at any
moment loses nothing; what it had leased comes back to another. Pages
offered past the crawl's page budget come back refused; their facts go to
the exporter with the reason a local crawl gives.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis

from crawler.distributed.codec import QueuedRequest
from crawler.distributed.coordination import Workers, crawl_finished
from crawler.distributed.frontier import Lease, RedisFrontier
from crawler.distributed.items import ItemChannel
from crawler.items import PageFacts

__all__ = ["WorkerLink"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Leased:
    items: int = 0  # items produced and not yet pushed
    output_done: bool = False
    outbox_mark: int = 0  # the offers this lease's output made, by outbox count


@dataclass(slots=True)
class WorkerLink:
    redis: Redis
    crawl: str
    name: str
    lease_seconds: float = 60.0
    grace: float = 2.0
    room: int = 16  # leases held at once
    max_pages: int = 0  # the crawl's page budget, for all workers together (0: none)
    # The facts of a page refused because the budget is spent (the adapter words them as a local crawl does).
    over_budget: Callable[[QueuedRequest], PageFacts] | None = None
    spent: bool = False  # the page budget is used up: this worker's spider stops offering pages
    secret: bytes | None = None  # the crawl's: seals the items this worker pushes
    frontier: RedisFrontier = field(init=False)
    channel: ItemChannel = field(init=False)
    workers: Workers = field(init=False)
    outbox: list[tuple[bytes, QueuedRequest]] = field(default_factory=list)
    offered: int = 0  # requests offered so far (flushed)
    queued: int = 0  # requests put in the outbox so far
    leases: dict[str, _Leased] = field(default_factory=dict)
    pending_items: list[tuple[str | None, PageFacts]] = field(default_factory=list)
    idle_since: float | None = 0.0  # None while busy; a worker that never worked does not hold back the end
    stopping: bool = False

    def __post_init__(self) -> None:
        self.frontier = RedisFrontier(self.redis, self.crawl, self.name, self.lease_seconds)
        self.channel = ItemChannel(self.redis, self.crawl, secret=self.secret)
        self.workers = Workers(self.redis, self.crawl, ttl=max(3.0, self.lease_seconds / 4))

    async def open(self) -> None:
        await self.frontier.open()
        await self.channel.open()

    # --- called by the Scrapy side, never blocking ---
    def offer(self, fingerprint: bytes, request: QueuedRequest) -> None:
        self.outbox.append((fingerprint, request))
        self.queued += 1

    def item(self, lease: str | None, facts: PageFacts) -> None:
        if lease in self.leases:
            self.leases[lease].items += 1
        self.pending_items.append((lease, facts))

    def output_done(self, lease: str) -> None:
        state = self.leases.get(lease)
        if state is not None:
            state.output_done = True
            state.outbox_mark = self.queued

    # --- the loop ---
    async def run(self, wake: Callable[[Lease], None], finished: Callable[[], Awaitable[None]]) -> None:
        """Until the crawl is over everywhere (then *finished*), or :attr:`stopping`."""
        await self.open()
        try:
            while not self.stopping:
                busy = await self._exchange(wake)
                if not busy and await crawl_finished(self.frontier, self.workers, self.grace):
                    await self.workers.leave(self.name)
                    await finished()
                    return
                await asyncio.sleep(0.02 if busy else 0.2)
        finally:
            await self.workers.leave(self.name)

    async def _exchange(self, wake: Callable[[Lease], None]) -> bool:
        """One round: items and offers out, acknowledgements, new leases in. True while busy."""
        if self.pending_items:
            pending, self.pending_items = self.pending_items, []
            await self.channel.push(*(facts for _, facts in pending))
            for owner, _ in pending:
                if owner in self.leases:
                    self.leases[owner].items -= 1
        if self.outbox:
            batch, self.outbox = self.outbox, []
            offered = await self.frontier.offer(batch, self.max_pages)
            if offered.over_budget:  # reported by the exporter; pushed before the lease is done
                self.spent = True
                if self.over_budget is not None:
                    await self.channel.push(*map(self.over_budget, offered.over_budget))
            self.offered += len(batch)
        done = [
            entry
            for entry, state in self.leases.items()
            if state.output_done and state.items <= 0 and state.outbox_mark <= self.offered
        ]
        if done:
            await self.frontier.ack(done)
            for entry in done:
                del self.leases[entry]
        if len(self.leases) < self.room:
            for lease in await self.frontier.lease(count=self.room - len(self.leases)):
                self.leases[lease.entry] = _Leased()
                try:
                    wake(lease)
                except Exception as error:  # noqa: BLE001 - a request Scrapy cannot make of it is not ours
                    logger.warning("Refused a frontier entry that is not ours (%s): %s", lease.entry, error)
                    del self.leases[lease.entry]
                    await self.frontier.ack([lease.entry])
        busy = bool(self.leases or self.outbox or self.pending_items)
        if busy:
            self.idle_since = None
        elif self.idle_since is None:
            self.idle_since = time.time()
        await self.workers.beat(self.name, self.idle_since)
        return busy
