"""A minimal reproduction of a Scrapy 2.19 downloader bug, to report upstream.

With the asyncio reactor and no download delay, ``CONCURRENT_REQUESTS_PER_DOMAIN``
does not hold: ``Downloader._process_queue`` pops every queued request of a slot
in one pass, because a request only joins ``slot.transferring`` once the task
scheduled for it (``_schedule_coro(self._wait_for_download(...))``) starts, and
``slot.free_transfer_slots()`` therefore stays at its maximum for the whole loop.
Only ``CONCURRENT_REQUESTS`` (16) bounds what is in flight.

    python tests/upstream/concurrency_repro.py http://127.0.0.1:PORT/ [DOWNLOADER]

crawls the site with stock Scrapy (nothing of sitemap-crawler's but the optional
DOWNLOADER import path) at CONCURRENT_REQUESTS_PER_DOMAIN=2. The server is the
judge: tests/test_scrapy_internals.py runs this against one that counts the
requests in flight as each arrives (more than 2 with Scrapy's own downloader).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response


class Follow(Spider):
    name = "follow"

    def __init__(self, start: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.start_urls = [start]

    def parse(self, response: Response) -> Iterator[Request]:
        yield from response.follow_all(css="a")


def main(start: str, downloader: str | None = None) -> None:
    settings = {
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
    }
    if downloader:
        settings["DOWNLOADER"] = downloader
    process = CrawlerProcess(settings)
    process.crawl(Follow, start=start)
    process.start()


if __name__ == "__main__":
    main(*sys.argv[1:3])
