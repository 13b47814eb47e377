"""Services outside the crawl: IndexNow notifications and the CMS webhook server (no Scrapy)."""
