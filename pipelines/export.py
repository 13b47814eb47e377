"""Hand listed URLs to the Scrapy-free sitemap writer and publish the set.

Listed items are spooled (sorted, de-duplicated, on disk) while the crawl
runs; when it finishes normally the shards, the news shards and the index
are written into a staging folder and published atomically. Whole-site
rules are applied here, where the whole site is known: hreflang clusters
(listed and reciprocal versions only), the image popularity filter and the
two-day news window. An interrupted or empty crawl publishes nothing, so the
previous set stays in place.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from itertools import groupby
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import signals

from crawler.hreflang import resolve_cluster
from crawler.items import PageFacts
from crawler.news import is_recent
from crawler.reasons import stats_key
from crawler.runstate import CrawlState
from crawler.scope import Scope
from crawler.signals import url_warning
from crawler.sitemaps.entries import NewsEntry, UrlEntry
from crawler.sitemaps.publish import PublishResult, SitemapPublisher
from crawler.sitemaps.spool import SpooledUrl, UrlSpool
from crawler.sitemaps.writer import ShardedUrlsetWriter, ShardFile, write_urlset
from crawler.sitemaps.xml import w3c_datetime
from crawler.state import StateStore
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["MAX_NEWS_PER_FILE", "SitemapExportPipeline", "site_entries", "write_sitemaps"]

logger = logging.getLogger(__name__)

#: Google News: at most 1,000 news:news per sitemap.
MAX_NEWS_PER_FILE = 1000
#: Shard group of the delta sitemap: URLs added or changed since the last full generation.
DELTA_GROUP = "delta"
Warn = Callable[[str, str, str], None]


def write_shards(
    entries: Iterable[UrlEntry], staging: Path, config: SitemapConfig, basename: str, max_urls: int
) -> list[ShardFile]:
    with ShardedUrlsetWriter(
        staging,
        basename=basename,
        max_urls=max_urls,
        max_bytes=config.max_bytes_per_file,
        gzip_level=config.gzip_level if config.gzip else None,
    ) as writer:
        writer.extend(entries)
        return writer.close()


def shard_name(config: SitemapConfig, group: str, shard: int) -> str:
    suffix = ".xml.gz" if config.gzip else ".xml"
    return f"{config.basename}-{group}-{shard}{suffix}" if group else f"{config.basename}-{shard}{suffix}"


def write_assigned(
    entries: Iterable[tuple[SpooledUrl, UrlEntry]], staging: Path, config: SitemapConfig, store: StateStore
) -> list[ShardFile]:
    """One file per assigned (group, shard); entries that do not fit the byte
    limit move to a new shard of their group, recorded in the store."""
    files: list[ShardFile] = []
    gzip_level = config.gzip_level if config.gzip else None
    for (group, shard), members in groupby(entries, key=lambda pair: (pair[0].group, pair[0].shard)):
        pending = [(entry.loc, entry.render()) for _, entry in members]
        number = shard
        while pending:
            name = shard_name(config, group, number)
            written, count = write_urlset(
                staging, name, [chunk for _, chunk in pending], config.max_bytes_per_file, gzip_level
            )
            files.append(written)
            pending = pending[count:]
            if pending:
                number = store.move_to_new_shard([loc for loc, _ in pending], group)
    return files


def write_sitemaps(
    entries: Iterable[UrlEntry],
    publisher: SitemapPublisher,
    staging: Path,
    config: SitemapConfig,
    now: str,
    *,
    news: Iterable[UrlEntry] = (),
    shards: list[ShardFile] | None = None,
) -> PublishResult:
    """Write *entries* (already sorted) and *news* entries as shards into
    *staging*, then publish them with one index. With *shards* already
    written (stable shards), *entries* is not used."""
    if shards is None:
        shards = write_shards(entries, staging, config, config.basename, config.max_urls_per_file)
    news_limit = min(MAX_NEWS_PER_FILE, config.max_urls_per_file)
    shards += write_shards(news, staging, config, f"{config.basename}-news", news_limit)
    return publisher.publish(staging, shards, now)


def site_entries(
    spooled_urls: Iterable[SpooledUrl], spool: UrlSpool, config: SitemapConfig, warn: Warn
) -> Iterator[tuple[SpooledUrl, UrlEntry]]:
    """Spooled entries with the whole-site rules applied, in the order given."""
    scope = Scope(config.start_url)
    popular = spool.popular_images(config.image_max_pages) if config.image_max_pages else set()
    for spooled in spooled_urls:
        entry = spooled.entry
        if entry.alternates:
            cluster = resolve_cluster(
                entry.loc, list(entry.alternates), scope.contains, spool.listed, spool.declared_by
            )
            for code, detail in cluster.warnings:
                warn(entry.loc, code, detail)
            entry = replace(entry, alternates=tuple(cluster.links))
        if popular and entry.images:
            entry = replace(entry, images=tuple(i for i in entry.images if i not in popular))
        yield spooled, entry


def news_entries(spool: UrlSpool, config: SitemapConfig, now: datetime) -> Iterator[UrlEntry]:
    """Articles published in the last two days, for the news sitemap."""
    for spooled in spool:
        news = spooled.news
        if news and news.get("language") and is_recent(news["publication_date"], now):
            entry = NewsEntry(config.news_name, news["language"], news["publication_date"], news["title"])
            yield UrlEntry(spooled.entry.loc, news=entry)


class SitemapExportPipeline:
    def __init__(self, crawler: Crawler, config: SitemapConfig):
        self.crawler = crawler
        self.config = config
        self.publisher = SitemapPublisher(config.output_dir, config.base_url, f"{config.basename}.xml")
        self.staging: Path | None = None
        self.spool: UrlSpool | None = None
        self.result: PublishResult | None = None
        self._full_generation = True

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler, SitemapConfig.from_crawler(crawler))
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def open_spider(self) -> None:
        self.staging = self.publisher.stage()
        self.spool = UrlSpool(self.staging / "spool.sqlite3", count_images=self.config.image_max_pages > 0)

    def process_item(self, item: PageFacts) -> PageFacts:
        assert self.spool is not None
        entry = UrlEntry(item.url, item.last_modified, tuple(item.alternates), tuple(item.images), tuple(item.videos))
        self.spool.add(entry, item.news.to_dict() if item.news else None, item.shard_group)
        return item

    def warn(self, url: str, code: str, detail: str) -> None:
        self.crawler.signals.send_catch_log(signal=url_warning, url=url, code=code, detail=detail)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        assert self.spool is not None and self.staging is not None
        stats = self.crawler.stats
        try:
            state = CrawlState.of(self.crawler)
            if reason == "finished" and self.config.updating and state is not None:
                self._carry_forward(state)
            count = len(self.spool)
            if reason != "finished":
                stats.set_value(stats_key("failure"), f"crawl {reason}: previous sitemaps kept")
                return
            if count == 0:
                stats.set_value(stats_key("failure"), "no listable pages")
                return
            self._warn_outside_base()
            moment = datetime.now(UTC)
            news = news_entries(self.spool, self.config, moment) if self.config.news_name else ()
            if state is None:
                pairs = site_entries(self.spool, self.spool, self.config, self.warn)
                self.result = write_sitemaps(
                    (entry for _, entry in pairs),
                    self.publisher,
                    self.staging,
                    self.config,
                    w3c_datetime(moment),
                    news=news,
                )
            else:
                if self.config.compact:
                    state.store.reset_shards()
                self.spool.assign(self._placer(state))
                pairs = site_entries(self.spool.by_shard(), self.spool, self.config, self.warn)
                shards = write_assigned(pairs, self.staging, self.config, state.store)
                state.store.commit()
                self.result = write_sitemaps(
                    (), self.publisher, self.staging, self.config, w3c_datetime(moment), news=news, shards=shards
                )
                self._report_removals(state)
                if self.config.delta and self._full_generation:
                    state.store.set_meta("last_full_run", str(state.run))
                    state.store.commit()
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
                news_files = [s for s in self.result.shards if s.name.startswith(f"{self.config.basename}-news-")]
                stats.set_value(stats_key("news_urls"), sum(s.url_count for s in news_files))
        finally:
            self.spool.close()
            self.publisher.abort(self.staging)

    def _placer(self, state: CrawlState) -> Callable[[str, str], tuple[str, int, int]]:
        """Where each URL goes: its stable shard, or the delta shard when delta
        sitemaps are on and it was added or changed since the last full generation."""
        assign = state.store.shard_assigner(self.config.max_urls_per_file)
        delta: set[str] = set()
        self._full_generation = True
        if self.config.delta:
            last_full = state.store.get_meta("last_full_run")
            if last_full is not None and state.run - int(last_full) < self.config.delta_rotate:
                self._full_generation = False
                delta = state.store.changed_since(int(last_full), state.run)
        self.crawler.stats.set_value(stats_key("delta_urls"), len(delta))
        counter = iter(range(10**9))

        def place(url: str, group: str) -> tuple[str, int, int]:
            if url in delta:
                number = next(counter)
                return DELTA_GROUP, number // self.config.max_urls_per_file + 1, number
            return (group, *assign(url, group))

        return place

    def _carry_forward(self, state: CrawlState) -> None:
        """An update keeps every URL the last published run listed that it did
        not touch, exactly as it was written then."""
        previous = state.store.previous_run(state.run)
        if previous is None:
            return
        assert self.spool is not None
        carried = 0
        for url, lastmod, stored, group in state.store.carry_forward(state.run, previous):
            facts = PageFacts.from_dict({**stored, "url": url})
            entry = UrlEntry(url, lastmod, tuple(facts.alternates), tuple(facts.images), tuple(facts.videos))
            self.spool.add(entry, facts.news.to_dict() if facts.news else None, group)
            carried += 1
        state.store.commit()
        self.crawler.stats.set_value(stats_key("carried"), carried)

    def _report_removals(self, state: CrawlState) -> None:
        """URLs the last published run listed that this one does not, and why."""
        previous = state.store.previous_run(state.run)
        lines = []
        if previous is not None:
            for url, status, outcome, reason in state.store.removed_since(state.run, previous):
                lines.append(json.dumps({"url": url, "status": status, "outcome": outcome, "reason": reason}))
        path = self.config.removals_path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, path)
        self.crawler.stats.set_value(stats_key("removed"), len(lines))
        self.crawler.stats.set_value(stats_key("removals_path"), str(path))

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
