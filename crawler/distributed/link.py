"""One worker's link to a shared crawl (pure of Scrapy, redis.asyncio).

A background loop moves work both ways: requests the spider found are
offered to the frontier in batches; leases are taken when the worker has
room and handed to Scrapy (``wake``). A lease is acknowledged only when
everything its response produced is safe in Redis: its new requests
offered, its items pushed to the exporter. A worker that dies at any
moment loses nothing; what it had leased comes back to another. A live
worker renews its leases every eighth of the lease time, whatever it
waits for (the site's pace, a slow download), and holds no more than it can
fetch in half a lease at the site's pace, so only a dead worker's leases go
to others, and a dead worker costs at most that many re-fetches. While the
exporter is far behind, no new leases are taken (Redis's memory stays
bounded by the backlog, not by the site). Pages
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
from redis.exceptions import TimeoutError as RedisTimeoutError

from crawler.distributed.codec import QueuedRequest
from crawler.distributed.coordination import Workers, crawl_finished
from crawler.distributed.frontier import Lease, RedisFrontier
from crawler.distributed.items import ItemChannel
from crawler.items import PageFacts

__all__ = ["WorkerLink"]

logger = logging.getLogger(__name__)
#: Rounds in a row whose Redis call may miss its deadline before the link is lost: a healthy
#: Redis on a loaded machine may miss one; a frozen one misses them all.
MISSED_ROUNDS = 1


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
    max_pages_per_host: int = 0  # each host's share of it (--max-pages-per-host; 0: none)
    max_hosts: int = 0  # hosts the crawl takes in at most (--max-hosts with several hosts; 0: no count)
    # The facts of a page refused over a limit (the adapter words them as a local crawl does).
    over_budget: Callable[[QueuedRequest, str], PageFacts] | None = None
    spent: bool = False  # the page budget is used up: this worker's spider stops offering pages
    secret: bytes | None = None  # the crawl's: seals the items this worker pushes
    # Items waiting for the exporter past which this worker takes no new leases (the exporter is
    # one process: without a bound, a fast crawl piles the site's facts up in Redis's memory).
    max_backlog: int = 10_000
    # The site's pace for the whole crawl: seconds between two downloads (its delay or Crawl-delay;
    # 0: none) and how many may be in flight at once; None while not known (robots.txt unread).
    site_pace: Callable[[], tuple[float, int] | None] | None = None
    frontier: RedisFrontier = field(init=False)
    channel: ItemChannel = field(init=False)
    workers: Workers = field(init=False)
    outbox: list[tuple[bytes, QueuedRequest]] = field(default_factory=list)
    offered: int = 0  # requests offered so far (flushed)
    queued: int = 0  # requests put in the outbox so far
    leases: dict[str, _Leased] = field(default_factory=dict)
    pending_items: list[tuple[str | None, PageFacts]] = field(default_factory=list)
    idle_since: float | None = None  # this process's monotonic clock; None while busy
    worked: bool = False  # a worker that never worked does not hold back the end
    stopping: bool = False
    live: int = 1  # workers alive in the crawl, counted every few seconds
    counted_at: float = field(default=-1e9)
    living: set[str] | None = None  # the workers alive at the last count, until leases are next taken
    backlog_at: float = field(default=-1e9)
    backlogged: bool = False  # the exporter is behind: no new leases until it catches up
    renewed_at: float = field(default=-1e9)

    def __post_init__(self) -> None:
        self.frontier = RedisFrontier(self.redis, self.crawl, self.name, self.lease_seconds, self.secret)
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
        """Until the crawl is over everywhere (then *finished*), or :attr:`stopping`. Every call
        to Redis here, the first ones too, is made again when it misses its deadline once: in a
        container on a loaded machine a worker's first call was seen unanswered for 10 s while
        its event loop ran freely, and answered at once when asked again."""
        opened, missed = False, 0
        try:
            while not self.stopping:
                try:
                    if not opened:
                        await self.open()
                        opened = True
                    busy = await self._exchange(wake)
                    over = not busy and await crawl_finished(self.frontier, self.workers, self.grace)
                except (RedisTimeoutError, TimeoutError) as error:
                    missed += 1
                    if missed > MISSED_ROUNDS:
                        raise
                    logger.warning("The shared crawl's Redis missed a deadline (%s): this worker asks again", error)
                    continue
                missed = 0
                if over:
                    await finished()  # its counts go to the crawl's totals; then its heartbeat goes
                    return
                await asyncio.sleep(0.02 if busy else 0.2)
        finally:
            await self.workers.leave(self.name)

    async def hand_back(self) -> int:
        """This worker was asked to stop (its loop is over): what its leases produced goes out, the
        leases done are acknowledged, and the others go to the next worker at once instead of
        after a lease. How many were handed back."""
        await self._flush()
        rest = list(self.leases)
        await self.frontier.hand_back(rest)
        self.leases.clear()
        return len(rest)

    async def _exchange(self, wake: Callable[[Lease], None]) -> bool:
        """One round: items and offers out, acknowledgements, renewals, new leases in. True while busy."""
        await self._flush()
        await self._renew()
        await self._count_workers()
        room = 0 if await self._backlogged() else await self._room()
        if len(self.leases) < room:
            living, self.living = self.living, None  # the dead's leases are looked for once per count
            for lease in await self.frontier.lease(count=room - len(self.leases), living=living):
                self.leases[lease.entry] = _Leased()
                try:
                    wake(lease)
                except Exception as error:  # noqa: BLE001 - a request Scrapy cannot make of it is not ours
                    logger.warning("Refused a frontier entry that is not ours (%s): %s", lease.entry, error)
                    del self.leases[lease.entry]
                    await self.frontier.ack([lease.entry])
        busy = bool(self.leases or self.outbox or self.pending_items)
        if busy:
            self.worked, self.idle_since = True, None
        elif self.idle_since is None:
            self.idle_since = time.monotonic()
        idle_for = None if busy else Workers.FOREVER if not self.worked else time.monotonic() - (self.idle_since or 0.0)
        await self.workers.beat(self.name, idle_for)
        return busy

    async def _flush(self) -> None:
        """Items and offers out, then the leases whose output is all in Redis acknowledged."""
        if self.pending_items:
            pending, self.pending_items = self.pending_items, []
            try:
                await self.channel.push(*(facts for _, facts in pending))
            except BaseException:
                self.pending_items = pending + self.pending_items  # pushed again (the export keeps a loc once)
                raise
            for owner, _ in pending:
                if owner in self.leases:
                    self.leases[owner].items -= 1
        if self.outbox:
            batch, self.outbox = self.outbox, []
            try:
                offered = await self.frontier.offer(
                    batch, self.max_pages, max_pages_per_host=self.max_pages_per_host, max_hosts=self.max_hosts
                )
            except BaseException:
                self.outbox = batch + self.outbox  # offered again (the frontier queues a request once)
                raise
            self.spent = self.spent or bool(offered.over_budget)
            # Reported by the exporter; pushed before the lease is done.
            if offered.over and self.over_budget is not None:
                await self.channel.push(*(self.over_budget(queued, limit) for queued, limit in offered.over))
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

    async def _renew(self) -> None:
        """Every eighth of the lease time, the leases held start again: this worker is alive."""
        if not self.leases or time.monotonic() - self.renewed_at < self.lease_seconds / 8:
            return
        self.renewed_at = time.monotonic()
        kept = await self.frontier.renew(list(self.leases))
        lost = [entry for entry in self.leases if entry not in kept]
        for entry in lost:  # another worker has it now: it acknowledges it, not this one
            del self.leases[entry]
        if lost:
            logger.warning("%d lease(s) went to another worker while this one held them (it stalled for a "
                           "whole lease): fetched twice", len(lost))  # fmt: skip

    async def _backlogged(self) -> bool:
        """The exporter is :attr:`max_backlog` items behind (counted once a second)."""
        if time.monotonic() - self.backlog_at >= 1.0:
            self.backlog_at = time.monotonic()
            was, self.backlogged = self.backlogged, await self.channel.backlog() > self.max_backlog
            if self.backlogged and not was:
                logger.info("The exporter is over %d items behind: no new leases until it catches up",
                            self.max_backlog)  # fmt: skip
        return self.backlogged

    async def _count_workers(self) -> None:
        """Every few seconds: how many workers are alive, and who (their heartbeats)."""
        if time.monotonic() - self.counted_at >= min(5.0, self.lease_seconds / 4):
            self.counted_at = time.monotonic()
            states = await self.workers.alive()
            self.live, self.living = max(1, len(states)), {state.name for state in states} | {self.name}

    async def _room(self) -> int:
        """How many leases to hold: :attr:`room`, or fewer at a site's pace: this worker's share of
        the downloads in flight and one more (waiting for its turn), and never more than its share
        of the site's downloads fetches in half a lease. Holding more would only keep other workers
        idle, and cost re-fetches if this one died."""
        pace = self.site_pace() if self.site_pace is not None else (0.0, self.room)
        interval, in_flight = pace if pace is not None else (0.0, 1)  # not known yet: as if one at a time
        if pace is not None and interval <= 0:
            return self.room
        share = -(-max(1, in_flight) // self.live) + 1
        if interval <= 0:
            return max(1, min(self.room, share))
        fetchable = int(self.lease_seconds / 2 / (interval * self.live))
        return max(1, min(self.room, share, fetchable))
