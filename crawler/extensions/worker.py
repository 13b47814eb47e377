"""A Scrapy worker of a shared crawl: the scheduler that talks to Redis.

Requests the spider builds are offered to the shared frontier; requests
leased from it come back into this engine with their callback and errback
wrapped, so that whatever the callback or errback yields goes where it
must: new requests to the frontier, the facts of URLs to the exporter. Only
then is the lease acknowledged (see :mod:`crawler.distributed.link`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from scrapy import Request, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.exceptions import DontCloseSpider
from twisted.internet.defer import Deferred

from crawler.distributed.client import connect, redis_failure
from crawler.distributed.codec import CALLBACKS, ERRBACKS, META_KEYS, QueuedRequest
from crawler.distributed.coordination import SUMMED, add_counts
from crawler.distributed.frontier import Lease
from crawler.distributed.link import WorkerLink
from crawler.extensions.politeness import Politeness
from crawler.items import PageFacts
from crawler.reasons import Limit, Reason, host_pages_spent, hosts_spent, pages_spent
from crawler.run.context import config_of
from crawler.run.worker import worker_name
from crawler.stats import Stat
from crawler.stats import limit as limit_stat
from settings.distributed import masked_url

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector
    from twisted.python.failure import Failure

__all__ = ["RedisScheduler"]

logger = logging.getLogger(__name__)


def over_budget(request: QueuedRequest, limit: str, link: WorkerLink, stats: StatsCollector) -> PageFacts:
    """The facts of a page not requested because it is over one of the crawl's budgets (its
    pages, a host's pages, its hosts), as a local crawl gives them; counted for the summary."""
    stats.inc_value(limit_stat(limit))
    chain = request.meta.get("redirect_chain")
    if limit == Limit.HOSTS:
        detail = hosts_spent(link.max_hosts)
    elif limit == Limit.HOST_PAGES:
        detail = host_pages_spent(link.max_pages_per_host, request.url[: request.url.find("/", 8)])
    else:
        detail = pages_spent(link.max_pages)
    return PageFacts(
        url=request.url,
        error=Reason.LIMIT,
        detail=detail,
        depth=request.depth,
        referrer=request.referrer,
        redirect_chain=list(chain) if isinstance(chain, list) else [],
    )


class RedisScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler, link: WorkerLink):
        self.crawler = crawler
        self.link = link
        self.inbox: deque[Request] = deque()
        self.spider: Spider | None = None
        self.task: asyncio.Task[None] | None = None
        self.done = False  # the shared crawl is over (or its link failed)
        self.where = "the shared crawl"  # the Redis, as it may be logged
        self.spent = False  # the spider was told that the page budget is spent
        self.robots_known = not crawler.settings.getbool("ROBOTSTXT_OBEY")  # else once robots.txt is read

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        assert config.distributed is not None, "the Redis scheduler runs in a distributed crawl only"
        name = worker_name(crawler)
        redis = connect(config.distributed.url, config.distributed.ca_file)
        # Leases held at once: enough to keep the downloader busy, few enough to leave work for late joiners.
        room = 2 * max(1, crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"))
        shared = config.distributed
        link = WorkerLink(redis, shared.crawl, name, lease_seconds=shared.lease_seconds, grace=shared.grace, room=room,
                          max_pages=shared.shared_max_pages, secret=shared.sealing_key)  # fmt: skip
        if config.hosts.several:  # counted here for all workers: the spider's own frontier counts neither
            link.max_hosts, link.max_pages_per_host = config.hosts.max_hosts, config.hosts.max_pages
        link.over_budget = partial(over_budget, link=link, stats=crawler.stats)
        scheduler = cls(crawler, link)
        link.site_pace = partial(scheduler.site_pace, config.distributed.shared_delay, several=config.hosts.several)
        scheduler.where = masked_url(config.distributed.url)
        crawler.signals.connect(scheduler.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(scheduler.robots_parsed, signal=signals.robots_parsed)
        return scheduler

    def robots_parsed(self, **_: Any) -> None:
        self.robots_known = True

    def site_pace(self, delay: float, *, several: bool = False) -> tuple[float, int] | None:
        """The site's pace for the link's leases; ``None`` until this worker has read robots.txt
        (its Crawl-delay may yet slow everything down). Over *several* hosts, none: the frontier is
        one queue for all of them, and leases cut to a slow host's pace would keep the other hosts'
        pages waiting behind its own (each download still keeps its host's pace, in Redis)."""
        politeness = self.crawler.get_extension(Politeness)
        if several:
            return 0.0, self.link.room
        if not self.robots_known or politeness is None:
            return None
        return politeness.site_pace(delay)

    def spider_idle(self, spider: Spider) -> None:
        """Idle here is not the end: other workers may still find work; the link says when it is over."""
        if not self.done:
            raise DontCloseSpider

    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.task = asyncio.get_event_loop().create_task(self.link.run(self._wake, self._finished))
        self.task.add_done_callback(self._ended)

    def close(self, reason: str) -> Deferred[None]:
        self.link.stopping = True
        return Deferred.fromFuture(asyncio.ensure_future(self._stop()))

    async def _stop(self) -> None:
        """Asked to stop before the crawl is over (SIGTERM): once the link's loop is done, what
        its leases produced goes to Redis and the others go to the next worker at once, not after
        a lease. Then this worker's counts, however it ended."""
        if not self.done and self.task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.task), timeout=5)
                handed = await asyncio.wait_for(self.link.hand_back(), timeout=5)
                if handed:
                    logger.info("Handed %d lease(s) back to the crawl for the other workers", handed)
            except (RedisError, OSError, TimeoutError) as error:
                logger.warning("This worker's leases were not handed back (they lapse after a lease): %s",
                               redis_failure(self.where, error))  # fmt: skip
        await self._add_counts()

    async def _add_counts(self) -> None:
        """What this worker fetched, into the crawl's totals (the coordinator's summary), however
        it ended; not at all when the Redis is gone."""
        stats = self.crawler.stats
        assert stats is not None
        stats.set_value(Stat.SHARED_REFETCHED, self.link.frontier.reclaimed)
        counts = {name: int(stats.get_value(name, 0)) for name in SUMMED}
        try:
            await asyncio.wait_for(add_counts(self.link.redis, self.link.crawl, counts), timeout=5)
        except (RedisError, OSError, TimeoutError) as error:
            logger.warning("This worker's counts are not in the crawl's summary: %s", redis_failure(self.where, error))

    def _ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            assert error is not None
            logger.error("%s; this worker stops", redis_failure(self.where, error))
            self.done = True
            asyncio.get_event_loop().create_task(self.crawler.engine.close_spider_async(reason="redis-lost"))

    async def _finished(self) -> None:
        self.done = True
        await self.crawler.engine.close_spider_async(reason="finished")

    def has_pending_requests(self) -> bool:
        return bool(self.inbox)

    def next_request(self) -> Request | None:
        return self.inbox.popleft() if self.inbox else None

    def enqueue_request(self, request: Request) -> bool:
        if "lease" in request.meta:
            self.inbox.append(request)
            return True
        if self.link.spent and not self.spent:
            self._spend()
        callback = getattr(request.callback, "__name__", "parse")
        errback = getattr(request.errback, "__name__", "failed")
        if callback not in CALLBACKS or errback not in ERRBACKS:
            logger.warning("Not shared (its callback is not one of the spider's): %s", request.url)
            return False
        meta = {key: value for key, value in request.meta.items() if key in META_KEYS}
        queued = QueuedRequest(
            request.url, int(request.meta.get("depth", 0)), request.meta.get("referrer"), request.priority,
            callback, errback, meta,
        )  # fmt: skip
        self.link.offer(self.crawler.request_fingerprinter.fingerprint(request), queued)
        return True

    def _spend(self) -> None:
        """The page budget is spent for the whole crawl: this spider's frontier says so from now on,
        as a local crawl's does (links are reported as over the limit, not offered)."""
        self.spent = True
        frontier = getattr(self.spider, "frontier", None)
        if frontier is not None:
            frontier.spend(self.link.max_pages)

    # --- leases back into this engine ---
    def _wake(self, lease: Lease) -> None:
        queued = lease.request
        request = Request(
            queued.url,
            callback=self._callback,
            errback=self._errback,
            meta={**queued.meta, "lease": lease.entry, "callback": queued.callback, "errback": queued.errback},
            priority=queued.priority,
        )
        self.crawler.engine.crawl(request)

    def _callback(self, response: Response) -> list[Any]:
        spider = self.spider
        assert spider is not None
        self._route(response.meta["lease"], getattr(spider, response.meta["callback"])(response))
        return []

    def _errback(self, failure: Failure) -> list[Any]:
        spider = self.spider
        assert spider is not None
        request = failure.request  # type: ignore[attr-defined]
        self._route(request.meta["lease"], getattr(spider, request.meta["errback"])(failure))
        return []

    def _route(self, lease: str, output: Iterable[Any] | None) -> None:
        for thing in output or ():
            if isinstance(thing, Request):
                self.enqueue_request(thing)
            elif isinstance(thing, PageFacts):
                self.link.item(lease, thing)
        self.link.output_done(lease)
