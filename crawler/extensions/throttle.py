"""The default speed adapts to the server (Scrapy's AutoThrottle): the delay
between requests follows the server's latency so that about
``AUTOTHROTTLE_TARGET_CONCURRENCY`` requests are in flight, which is fast on
a fast server and gentle on a slow one.

Three rules on top of Scrapy's: a delay the user set (``--delay``, a config
file, ``--set``) is a fixed delay, so throttling is off; a robots.txt
``Crawl-delay`` is a floor the throttle never goes under; and during a
server's ``Retry-After`` the delay is never lowered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.extensions.throttle import AutoThrottle

from crawler.downloadermiddlewares.backoff import held
from crawler.stats import Stat
from settings.values import adapts

if TYPE_CHECKING:
    from typing import Self

    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["SiteThrottle"]


class SiteThrottle(AutoThrottle):
    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not adapts(crawler.settings):
            raise NotConfigured  # a fixed delay; no message: Scrapy would log it as a warning
        return cls(crawler)

    def _adjust_delay(self, slot: Slot, latency: float, response: Response) -> None:
        crawl_delay = self.crawler.stats.get_value(Stat.CRAWL_DELAY, 0.0) if self.crawler.stats else 0.0
        self.mindelay = max(self.mindelay, float(crawl_delay))  # Crawl-delay wins over the throttle
        before = slot.delay
        super()._adjust_delay(slot, latency, response)
        if held(self.crawler, response):  # inside a Retry-After: only up
            slot.delay = max(before, slot.delay)
