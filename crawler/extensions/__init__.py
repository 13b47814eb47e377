"""Scrapy extensions: the crawl report, progress line, Crawl-delay, GC tuning, run state, IndexNow."""
