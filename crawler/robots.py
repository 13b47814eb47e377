"""robots.txt (RFC 9309) on top of Scrapy's RobotsTxtMiddleware and Protego.

Scrapy obeys Allow/Disallow but ignores ``Crawl-delay``; :class:`CrawlDelay`
applies it as the download delay of the site's slot. Disallowed requests fail
with a typed exception so the report can say ``robots``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from crawler.reasons import RobotsDisallowed, stats_key
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

__all__ = ["CrawlDelay", "SiteRobotsTxtMiddleware", "robots_user_agent"]

logger = logging.getLogger(__name__)


def robots_user_agent(crawler: Crawler) -> str:
    """The user agent robots.txt rules are matched against."""
    return str(crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get("USER_AGENT"))


class SiteRobotsTxtMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware, raising :class:`RobotsDisallowed`."""

    def process_request_2(self, rp: RobotParser | None, request: Request) -> None:
        if rp is None:
            return
        agent = robots_user_agent(self.crawler)
        if not rp.allowed(request.url, agent):
            self._stats.inc_value("robotstxt/forbidden")
            raise RobotsDisallowed("disallowed by robots.txt")

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        # RFC 9309 2.3.1.4: while robots.txt is unreachable because of a server
        # error, the crawler must assume complete disallow (4xx: allow all).
        if 500 <= response.status < 600:
            logger.warning("robots.txt of %s answered %s: nothing may be crawled (RFC 9309)", netloc, response.status)
            self.crawler.stats.set_value(stats_key("robots_unavailable"), f"{netloc} answered {response.status}")
            response = response.replace(body=b"User-agent: *\nDisallow: /\n")
        await super()._parse_robots(response, netloc, request)


class CrawlDelay:
    """Honour ``Crawl-delay`` by slowing the downloader slot of that host."""

    def __init__(self, crawler: Crawler, max_delay: float):
        self.crawler = crawler
        self.max_delay = max_delay
        self.agent = robots_user_agent(crawler)

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
        self.crawler.stats.set_value(stats_key("crawl_delay"), delay)
        logger.info("robots.txt asks for Crawl-delay %.2fs on %s", delay, key)
