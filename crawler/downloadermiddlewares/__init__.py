"""Downloader middlewares: scope, robots.txt, crawl limits, conditional requests."""
