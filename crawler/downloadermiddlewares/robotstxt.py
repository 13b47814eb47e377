"""robots.txt (RFC 9309) on top of Scrapy's RobotsTxtMiddleware and Protego.

Disallowed requests fail with a typed exception so the report can say
``robots``; a server error on robots.txt means complete disallow. Scrapy
ignores ``Crawl-delay``: :mod:`crawler.extensions.crawldelay` applies it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

from crawler.reasons import RobotsDisallowed
from crawler.results import CrawlResult

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

__all__ = ["SiteRobotsTxtMiddleware", "robots_user_agent"]

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
            CrawlResult.of(self.crawler).robots_unavailable = f"{netloc} answered {response.status}"
            response = response.replace(body=b"User-agent: *\nDisallow: /\n")
        await super()._parse_robots(response, netloc, request)
