"""Downloader middlewares that keep the crawl in scope and bounded (SPEC S2)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.exceptions import IgnoreRequest

from crawler.reasons import LimitReached, stats_key
from crawler.runstate import CrawlState
from crawler.scope import Scope
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["ConditionalRequestMiddleware", "CrawlLimitsMiddleware", "ScopeMiddleware"]


class ScopeMiddleware:
    """Never request a URL outside the start URL's scheme, host and port.

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
        return cls(Scope(SitemapConfig.from_crawler(crawler).start_url), crawler)

    def process_request(self, request: Request) -> None:
        if request.dont_filter or request.meta.get("allow_offsite") or self.scope.contains(request.url):
            return
        self.stats.inc_value("offsite/filtered")
        raise IgnoreRequest(f"Filtered offsite request to {request.url}")


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
        detail = None
        if config.max_depth and meta.get("depth", 0) > config.max_depth:
            detail = f"depth {meta['depth']} > max depth {config.max_depth}"
        elif len(request.url) > config.max_url_length:
            detail = f"URL length {len(request.url)} > {config.max_url_length}"
        elif config.max_query_variants and "?" in request.url:
            parts = urlsplit(request.url)
            path = f"{parts.netloc}{parts.path}"
            self.variants[path] += 1
            if self.variants[path] > config.max_query_variants:
                detail = f"more than {config.max_query_variants} query variants of {parts.path}"
        if detail is None and config.max_pages and self.admitted >= config.max_pages:
            detail = f"max pages {config.max_pages} reached"
        if detail is not None:
            self.stats.inc_value(stats_key("limit", detail.split(" ", 1)[0]))
            raise LimitReached(detail)
        self.admitted += 1


class ConditionalRequestMiddleware:
    """Ask again with the validators of the last fetch (RFC 9110 section 13.1).

    An unchanged page then answers 304 without a body, and the spider
    replays what the state store knows about it. The stored state travels in
    ``request.meta["stored_state"]`` so that nothing downstream reads it again.
    """

    def __init__(self, state: CrawlState):
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(CrawlState.require(crawler))

    def process_request(self, request: Request) -> None:
        if not request.meta.get("page"):
            return
        stored = request.meta["stored_state"] = self.state.store.get(request.url)
        if stored is None:
            return
        if stored.etag:
            request.headers.setdefault(b"If-None-Match", stored.etag.encode("latin-1"))
        if stored.last_modified:
            request.headers.setdefault(b"If-Modified-Since", stored.last_modified.encode("latin-1"))
