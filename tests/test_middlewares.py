"""The scope guard in front of the downloader, on a real Scrapy crawler."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from crawler.downloadermiddlewares.scope import ScopeMiddleware
from crawler.reasons import OutOfScope
from crawler.spiders.site import SiteSpider


def test_scope_guard_passes_the_origin_and_marked_requests_only() -> None:
    crawler = get_crawler(
        SiteSpider, settings_dict={"SITEMAP_START_URL": "https://www.example.com/", "SITEMAP_STATE": False}
    )
    crawler.spider = SiteSpider.from_crawler(crawler)  # as Scrapy does first: it makes the crawl's context
    crawler.stats.open_spider()
    guard = ScopeMiddleware.from_crawler(crawler)
    guard.process_request(Request("https://www.example.com/a"))
    guard.process_request(Request("https://cdn.example.com/sitemap.xml", meta={"allow_offsite": True}))
    guard.process_request(Request("https://example.com/retry", dont_filter=True))
    for url in ("http://www.example.com/a", "https://example.com/a", "https://www.example.com:8443/a"):
        with pytest.raises(OutOfScope, match="offsite"):
            guard.process_request(Request(url))
    assert crawler.stats.get_value("offsite/filtered") == 3
