"""Scrapy schedulers of a crawl: where requests wait for the downloader."""
