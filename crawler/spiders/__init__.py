"""Spiders of sitemap-crawler (``scrapy crawl site -a url=...``)."""
