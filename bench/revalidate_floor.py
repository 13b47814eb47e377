"""The floor of a scheduled re-run: Scrapy alone asking again for every page.

A spider with the project's Scrapy settings but none of its components
(no pipelines, extensions or middlewares of ours) sends one conditional
request per page the state store knows, with its stored ETag, and does
nothing with the answers. Whatever a re-run costs beyond this is ours.

    python bench/revalidate_floor.py STATE_STORE CONCURRENCY

Prints the number of requests, of 304 answers, and the seconds taken.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response
from scrapy.settings import Settings


class RevalidateSpider(Spider):
    name = "revalidate"

    def __init__(self, pages: list[tuple[str, str | None]], **kwargs: Any):
        super().__init__(**kwargs)
        self.pages = pages
        self.not_modified = 0

    async def start(self) -> AsyncIterator[Request]:
        for url, etag in self.pages:
            yield Request(url, headers={"If-None-Match": etag} if etag else {}, callback=self.parse)

    def parse(self, response: Response) -> None:
        self.not_modified += response.status == 304


def main() -> None:
    state, concurrency = sys.argv[1], int(sys.argv[2])
    with sqlite3.connect(state) as db:
        pages = [(str(url), etag) for url, etag in db.execute("SELECT url, etag FROM page WHERE status = 200")]
    settings = Settings()
    settings.setmodule("settings")
    settings.update(
        {
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": False,
            "LOG_LEVEL": "WARNING",
            "ITEM_PIPELINES": {},
            "EXTENSIONS": {},
            # The project's offsite and robots.txt middlewares are replaced by its own.
            "DOWNLOADER_MIDDLEWARES": {"scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None},
        }
    )
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(RevalidateSpider)
    process.crawl(crawler, pages=pages)
    logging.getLogger("scrapy").setLevel(logging.WARNING)  # as the CLI does: no debug records built
    started = time.perf_counter()
    process.start()
    seconds = time.perf_counter() - started
    assert isinstance(crawler.spider, RevalidateSpider)
    print(len(pages), crawler.spider.not_modified, f"{seconds:.2f}")


if __name__ == "__main__":
    main()
