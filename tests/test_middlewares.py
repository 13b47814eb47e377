"""The scope guard and the crawl limits in front of the downloader, on a real Scrapy crawler."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.test import get_crawler

from crawler.downloadermiddlewares.limits import CrawlLimitsMiddleware
from crawler.downloadermiddlewares.scope import ScopeMiddleware
from crawler.reasons import Limit, LimitReached
from crawler.spiders.site import SiteSpider


def test_scope_guard_passes_the_origin_and_marked_requests_only() -> None:
    crawler = get_crawler(SiteSpider, settings_dict={"SITEMAP_START_URL": "https://www.example.com/"})
    crawler.stats.open_spider()
    guard = ScopeMiddleware.from_crawler(crawler)
    guard.process_request(Request("https://www.example.com/a"))
    guard.process_request(Request("https://cdn.example.com/sitemap.xml", meta={"allow_offsite": True}))
    guard.process_request(Request("https://example.com/retry", dont_filter=True))
    for url in ("http://www.example.com/a", "https://example.com/a", "https://www.example.com:8443/a"):
        with pytest.raises(IgnoreRequest, match="offsite"):
            guard.process_request(Request(url))
    assert crawler.stats.get_value("offsite/filtered") == 3


def test_crawl_limits_name_the_limit_in_the_stats_key_not_the_message() -> None:
    settings = {
        "SITEMAP_START_URL": "https://www.example.com/",
        "SITEMAP_MAX_PAGES": 2,
        "SITEMAP_MAX_DEPTH": 3,
        "SITEMAP_MAX_URL_LENGTH": 40,
        "SITEMAP_MAX_QUERY_VARIANTS": 1,
    }
    crawler = get_crawler(SiteSpider, settings_dict=settings)
    crawler.stats.open_spider()
    limits = CrawlLimitsMiddleware.from_crawler(crawler)
    over = {
        "deep": Request("https://www.example.com/d", meta={"depth": 4}),
        "long": Request("https://www.example.com/" + "x" * 40),
    }
    limits.process_request(Request("https://www.example.com/cal?m=1"))
    over["variant"] = Request("https://www.example.com/cal?m=2")
    limits.process_request(Request("https://www.example.com/b"))
    over["budget"] = Request("https://www.example.com/c")
    kinds = {}
    for name, request in over.items():
        with pytest.raises(LimitReached) as caught:
            limits.process_request(request)
        kinds[name] = caught.value.kind
    assert kinds == {
        "deep": Limit.DEPTH,
        "long": Limit.URL_LENGTH,
        "variant": Limit.QUERY_VARIANTS,
        "budget": Limit.PAGES,
    }
    counted = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("sitemap/limit/")}
    assert counted == {f"sitemap/limit/{kind}": 1 for kind in ("depth", "url_length", "query_variants", "pages")}
