"""Hand listed URLs to the Scrapy-free sitemap writer and publish the set.

Listed items are spooled (sorted, de-duplicated, on disk) while the crawl
runs; when it finishes normally the shards and the index are written into a
staging folder and published atomically. An interrupted or empty crawl
publishes nothing, so the previous set stays in place.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import signals

from crawler.items import PageFacts
from crawler.reasons import stats_key
from crawler.sitemaps.publish import PublishResult, SitemapPublisher
from crawler.sitemaps.spool import UrlSpool
from crawler.sitemaps.writer import ShardedUrlsetWriter, UrlEntry
from crawler.sitemaps.xml import w3c_datetime
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["SitemapExportPipeline", "write_sitemaps"]

logger = logging.getLogger(__name__)


def write_sitemaps(
    entries: Iterable[UrlEntry], publisher: SitemapPublisher, staging: Path, config: SitemapConfig, now: str
) -> PublishResult:
    """Write *entries* (already sorted) as shards into *staging* and publish."""
    with ShardedUrlsetWriter(
        staging,
        basename=config.basename,
        max_urls=config.max_urls_per_file,
        max_bytes=config.max_bytes_per_file,
        gzip_level=config.gzip_level if config.gzip else None,
    ) as writer:
        writer.extend(entries)
        shards = writer.close()
    return publisher.publish(staging, shards, now)


class SitemapExportPipeline:
    def __init__(self, crawler: Crawler, config: SitemapConfig):
        self.crawler = crawler
        self.config = config
        self.publisher = SitemapPublisher(config.output_dir, config.base_url, f"{config.basename}.xml")
        self.staging: Path | None = None
        self.spool: UrlSpool | None = None
        self.result: PublishResult | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler, SitemapConfig.from_crawler(crawler))
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def open_spider(self) -> None:
        self.staging = self.publisher.stage()
        self.spool = UrlSpool(self.staging / "spool.sqlite3")

    def process_item(self, item: PageFacts) -> PageFacts:
        assert self.spool is not None
        self.spool.add(UrlEntry(item.url, item.last_modified))
        return item

    def spider_closed(self, spider: Spider, reason: str) -> None:
        assert self.spool is not None and self.staging is not None
        stats = self.crawler.stats
        try:
            count = len(self.spool)
            if reason != "finished":
                stats.set_value(stats_key("failure"), f"crawl {reason}: previous sitemaps kept")
                return
            if count == 0:
                stats.set_value(stats_key("failure"), "no listable pages")
                return
            self._warn_outside_base()
            now = w3c_datetime(datetime.now(UTC))
            self.result = write_sitemaps(self.spool, self.publisher, self.staging, self.config, now)
        except (OSError, ValueError) as error:
            logger.error("Sitemaps not published: %s", error)
            stats.set_value(stats_key("failure"), f"export failed: {error}")
        else:
            if self.result:
                stats.set_value(stats_key("published"), True)
                stats.set_value(stats_key("index_url"), self.result.index_url)
                stats.set_value(stats_key("index_path"), str(self.result.index_path))
                stats.set_value(stats_key("shards"), len(self.result.shards))
                stats.set_value(stats_key("shards_written"), len(self.result.written))
        finally:
            self.spool.close()
            self.publisher.abort(self.staging)

    def _warn_outside_base(self) -> None:
        """sitemaps.org: a sitemap only covers URLs at or below its own folder."""
        folder = urlsplit(self.config.base_url).path
        if folder == "/":
            return
        logger.warning(
            "Sitemaps served from %s may only list URLs under %s (sitemaps.org); "
            "URLs outside it will be ignored by search engines. Serve the "
            "sitemaps from the site root (--base-url) to cover the whole site.",
            self.config.base_url,
            folder,
        )
