"""Bound every crawl: pages, depth, URL length, query variants per path (SPEC S2)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawler.reasons import Limit, LimitReached
from crawler.stats import limit
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["CrawlLimitsMiddleware"]


class CrawlLimitsMiddleware:
    """Bounds every crawl: pages, depth, URL length, query variants per path.

    Runs after the robots.txt check, so disallowed URLs do not use up the
    page budget. A request over a limit fails with :class:`LimitReached`,
    which the spider records as an excluded URL with reason ``limit``.
    """

    def __init__(self, config: SitemapConfig, crawler: Crawler):
        self.config = config
        self.stats = crawler.stats
        self.admitted = 0
        self.variants: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(SitemapConfig.from_crawler(crawler), crawler)

    def process_request(self, request: Request) -> None:
        meta = request.meta
        if meta.get("sitemap_file") or meta.get("retry_times") or meta.get("dont_obey_robotstxt"):
            return  # not a page, or already admitted once
        config = self.config
        over: tuple[Limit, str] | None = None
        if config.max_depth and meta.get("depth", 0) > config.max_depth:
            over = Limit.DEPTH, f"depth {meta['depth']} > max depth {config.max_depth}"
        elif len(request.url) > config.max_url_length:
            over = Limit.URL_LENGTH, f"URL length {len(request.url)} > {config.max_url_length}"
        elif config.max_query_variants and "?" in request.url:
            parts = urlsplit(request.url)
            path = f"{parts.netloc}{parts.path}"
            self.variants[path] += 1
            if self.variants[path] > config.max_query_variants:
                over = Limit.QUERY_VARIANTS, f"more than {config.max_query_variants} query variants of {parts.path}"
        if over is None and config.max_pages and self.admitted >= config.max_pages:
            over = Limit.PAGES, f"max pages {config.max_pages} reached"
        if over is not None:
            self.stats.inc_value(limit(over[0]))
            raise LimitReached(*over)
        self.admitted += 1
