"""The baseline: a bare Scrapy spider that follows same-host links with LinkExtractor."""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor


class BareSpider(Spider):
    name = "bare"

    def __init__(self, url: str, **kwargs: object):
        super().__init__(**kwargs)
        self.start_urls = [url]
        host = urlsplit(url).hostname or ""
        self.allowed_domains = [host]
        # LinkExtractor's allow_domains compares host:port, so the port of a local
        # server defeats it; Scrapy's offsite filter (allowed_domains) keeps the crawl on the host.
        self.extractor = LinkExtractor()

    def parse(self, response):  # type: ignore[no-untyped-def]
        for link in self.extractor.extract_links(response):
            yield Request(link.url, callback=self.parse)


def main() -> None:
    url, concurrency = sys.argv[1], int(sys.argv[2])
    process = CrawlerProcess(
        {
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": False,
            "LOG_LEVEL": "WARNING",
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "COOKIES_ENABLED": False,
        }
    )
    crawler = process.create_crawler(BareSpider)
    process.crawl(crawler, url=url)
    process.start()
    print(crawler.stats.get_value("response_received_count", 0))


if __name__ == "__main__":
    main()
