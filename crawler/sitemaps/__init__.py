"""Scrapy-free sitemap writing, publishing and validation (SPEC S4)."""
