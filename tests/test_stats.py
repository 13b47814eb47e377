"""The fast stats collector behaves like Scrapy's in-memory one."""

from __future__ import annotations

from scrapy import Spider
from scrapy.utils.test import get_crawler

from crawler.stats import FastStatsCollector
from settings import STATS_CLASS


def test_counts_like_the_memory_collector_and_keeps_the_last_run() -> None:
    crawler = get_crawler(Spider, {"STATS_CLASS": STATS_CLASS})
    stats = crawler.stats
    assert isinstance(stats, FastStatsCollector)
    stats.inc_value("pages")
    stats.inc_value("pages", 2)
    stats.inc_value("bytes", 5, start=10)
    stats.max_value("depth", 3)
    stats.max_value("depth", 1)
    stats.min_value("first", 7)
    stats.min_value("first", 9)
    stats.set_value("reason", "x")
    assert stats.get_stats() == {"pages": 3, "bytes": 15, "depth": 3, "first": 7, "reason": "x"}
    assert stats.get_value("missing", "default") == "default"
    crawler.spider = crawler._create_spider("probe")
    stats.close_spider(crawler.spider, reason="finished")
    assert stats.spider_stats["probe"]["pages"] == 3
