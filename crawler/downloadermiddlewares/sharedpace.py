"""Politeness for the site as a whole in a shared crawl (SPEC S8).

Every worker asks Redis before each download: one next-allowed time and
one in-flight count per site, taken atomically, so the delay and the
concurrency limit hold whatever the number of workers. A robots.txt
``Crawl-delay`` (noted in the stats by the CrawlDelay extension) raises the
delay and leaves one request in flight, as it does in one process. Runs just
before the download, after scope and robots.txt have had their say.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from crawler.stats import Stat
from crawler.urls import site_root
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from crawler.distributed.coordination import SitePace

__all__ = ["SharedPaceMiddleware"]

_PACED = "shared_pace"


class SharedPaceMiddleware:
    def __init__(self, pace: SitePace, delay: float, concurrency: int, stats: StatsCollector):
        self.pace = pace
        self.delay = delay
        self.concurrency = concurrency
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = SitemapConfig.from_crawler(crawler)
        shared = config.distributed
        if shared is None or crawler.settings.get("SITEMAP_ROLE") != "worker":
            raise NotConfigured  # no message: Scrapy would log it as a warning
        from crawler.distributed.client import connect  # noqa: PLC0415 - a shared crawl only: no redis import else
        from crawler.distributed.coordination import SitePace  # noqa: PLC0415

        pace = SitePace(connect(shared.url), shared.crawl, site_root(config.start_url))
        delay = crawler.settings.getfloat("SITEMAP_SHARED_DELAY")
        concurrency = crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        assert crawler.stats is not None
        return cls(pace, delay, concurrency, crawler.stats)

    async def process_request(self, request: Request) -> None:
        delay, concurrency = self.delay, self.concurrency
        crawl_delay = float(self.stats.get_value(Stat.CRAWL_DELAY, 0.0))
        if crawl_delay > delay:
            delay, concurrency = crawl_delay, 1
        while (wait := await self.pace.try_acquire(delay, concurrency)) > 0:
            await asyncio.sleep(wait)
        request.meta[_PACED] = True

    async def process_response(self, request: Request, response: Response) -> Response:
        await self._release(request)
        return response

    async def process_exception(self, request: Request, exception: Exception) -> None:
        await self._release(request)

    async def _release(self, request: Request) -> None:
        if request.meta.pop(_PACED, False):
            await self.pace.release()
