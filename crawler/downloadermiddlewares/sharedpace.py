"""Politeness for the site as a whole in a shared crawl (SPEC S8).

Each worker's downloader keeps its share of the site's concurrency limit
(the limit divided by the live workers, counted four times a second). With a
delay to keep (a fixed ``--delay``, a ``Crawl-delay``), or more workers than
the limit allows, every worker also asks Redis before each download: one
next-allowed time and one in-flight count per site, taken atomically, so the
delay and the limit hold exactly whatever the number of workers. Otherwise
nothing is asked: the shares add up to the limit. A robots.txt
``Crawl-delay`` (kept by the Politeness extension, which this middleware
tells the worker's share: it alone sets the slots) raises the delay and
leaves one request in flight, as it does in one process. Runs just before
the download, after scope and robots.txt have had their say.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from crawler.context import config_of
from crawler.extensions.politeness import Politeness
from crawler.urls import site_root

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawler.distributed.coordination import SitePace, Workers

__all__ = ["SharedPaceMiddleware"]

_PACED = "shared_pace"
#: How often a worker counts the live workers it shares the site's limit with.
RECOUNT_SECONDS = 0.25


class SharedPaceMiddleware:
    def __init__(
        self, politeness: Politeness, pace: SitePace, workers: Workers, delay: float, concurrency: int
    ) -> None:
        self.politeness = politeness
        self.pace = pace
        self.workers = workers
        self.delay = delay
        self.concurrency = concurrency
        self.live = 1  # workers alive in the crawl, counted every RECOUNT_SECONDS
        self.counted_at = 0.0
        self.name = f"{os.getpid()}-{id(self):x}"  # grants are this name and a count
        self.granted = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        shared = config.distributed
        if shared is None or not shared.worker:
            raise NotConfigured  # no message: Scrapy would log it as a warning
        from crawler.distributed.client import connect  # noqa: PLC0415 - a shared crawl only: no redis import else
        from crawler.distributed.coordination import SitePace, Workers  # noqa: PLC0415

        redis = connect(shared.url)
        # A grant outlives no download (its timeout, with room for the time it waits in the queue).
        hold = 2 * crawler.settings.getfloat("DOWNLOAD_TIMEOUT") + 10
        pace = SitePace(redis, shared.crawl, site_root(config.start_url), hold, max(config.max_crawl_delay, 1.0))
        delay = shared.shared_delay
        concurrency = crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        politeness = crawler.get_extension(Politeness)
        if politeness is None:
            raise NotConfigured("the Politeness extension keeps the pace; a shared crawl needs it")
        return cls(politeness, pace, Workers(redis, shared.crawl), delay, concurrency)

    async def process_request(self, request: Request) -> None:
        if time.monotonic() - self.counted_at >= RECOUNT_SECONDS:
            self.counted_at = time.monotonic()
            self.live = max(1, len(await self.workers.alive()))
        delay, concurrency = self.delay, self.concurrency
        crawl_delay = self.politeness.crawl_delay
        if crawl_delay > delay:
            delay, concurrency = crawl_delay, 1
        # Each worker's own downloader keeps its share of the site's limit in flight.
        self.politeness.share(max(1, concurrency // self.live))
        if delay <= 0 and concurrency >= self.live:
            return  # the shares add up to the limit: nothing to ask Redis
        self.granted += 1
        token = f"{self.name}:{self.granted}"
        while (wait := await self.pace.try_acquire(delay, concurrency, token)) > 0:
            await asyncio.sleep(wait)
        request.meta[_PACED] = token

    async def process_response(self, request: Request, response: Response) -> Response:
        await self._release(request)
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        await self._release(request)

    async def _release(self, request: Request) -> None:
        token = request.meta.pop(_PACED, None)
        if token is not None:
            await self.pace.release(token)
