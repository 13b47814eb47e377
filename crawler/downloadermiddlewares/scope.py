"""Never request a URL outside the crawl's origins (SPEC S2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.reasons import OutOfScope
from crawler.run.context import config_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

    from crawler.scope import Scope

__all__ = ["ScopeMiddleware"]


class ScopeMiddleware:
    """Never request a URL outside the crawl's origins: the start URL's scheme, host and port, and
    the other hosts of ``--subdomains`` and ``--host`` on that scheme and port.

    A sitemap may list only URLs of its own scheme and host. The spider
    already builds Requests for in-scope URLs only, so this is the guard for
    anything else that reaches the downloader. Requests marked
    ``allow_offsite`` (sitemap files on a sister host) or ``dont_filter``
    pass, as with Scrapy's offsite middleware. Unlike that one,
    it does not also listen to ``request_scheduled``: a signal receiver on
    every scheduled request cost more than the check itself.
    """

    def __init__(self, scope: Scope, crawler: Crawler):
        self.scope = scope
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        return cls(config.hosts.scope(config.start_url), crawler)

    def process_request(self, request: Request) -> None:
        if request.dont_filter or request.meta.get("allow_offsite") or self.scope.contains(request.url):
            return
        self.stats.inc_value("offsite/filtered")
        raise OutOfScope(f"Filtered offsite request to {request.url}")
