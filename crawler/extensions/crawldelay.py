"""Honour robots.txt ``Crawl-delay`` (RFC 9309 leaves it to crawlers; Scrapy ignores it)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals

from crawler.downloadermiddlewares.robotstxt import robots_user_agent
from crawler.stats import Stat
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.robotstxt import RobotParser

__all__ = ["CrawlDelay"]

logger = logging.getLogger(__name__)


class CrawlDelay:
    """Honour ``Crawl-delay`` by slowing the downloader slot of that host."""

    def __init__(self, crawler: Crawler, max_delay: float):
        self.crawler = crawler
        self.max_delay = max_delay
        self.agent = robots_user_agent(crawler)
        # A worker of a shared crawl keeps it for the site as a whole (SharedPaceMiddleware reads the stat).
        self.site_wide = crawler.settings.get("SITEMAP_ROLE") == "worker"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        extension = cls(crawler, SitemapConfig.from_crawler(crawler).max_crawl_delay)
        crawler.signals.connect(extension.robots_parsed, signal=signals.robots_parsed)
        return extension

    def robots_parsed(self, robotparser: RobotParser, request: Request) -> None:
        delay = robotparser.crawl_delay(self.agent)
        if not delay or delay <= 0:
            return
        if self.max_delay and delay > self.max_delay:
            logger.warning("Crawl-delay %.1fs is capped at %.1fs (SITEMAP_MAX_CRAWL_DELAY)", delay, self.max_delay)
            delay = self.max_delay
        self.crawler.stats.set_value(Stat.CRAWL_DELAY, delay)
        if self.site_wide:
            logger.info("robots.txt asks for Crawl-delay %.2fs: kept by all workers together", delay)
            return
        downloader = self.crawler.engine.downloader
        key = downloader.get_slot_key(request)
        slot = downloader.slots.get(key)
        if slot is None:
            return
        if delay > slot.delay:
            slot.delay = delay
            slot.jitter = 0.0  # a Crawl-delay is a minimum, never shortened
            # One request in flight keeps the pause between requests exact.
            slot.concurrency = 1
        logger.info("robots.txt asks for Crawl-delay %.2fs on %s", delay, key)
