"""Hand listed URLs to the Scrapy-free sitemap writer and publish the set (SPEC S4).

Listed items are spooled (sorted, de-duplicated, on disk) while the crawl
runs; when it finishes normally the whole-site rules are applied
(:mod:`crawler.sitemaps.site`), the shards, news shards and index are
written into a staging folder (:mod:`crawler.sitemaps.shards`) and published
atomically. With a state store, URLs keep their shards and an update carries
the untouched URLs forward. The outcome is the crawl's
:class:`~crawler.results.ExportResult`; an interrupted or empty crawl
publishes nothing, so the previous set stays in place.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sqlite3
from collections import Counter
from contextlib import suppress
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import signals

from crawler.items import PageFacts
from crawler.modes import RunMode
from crawler.protocol import w3c_datetime
from crawler.reasons import Reason
from crawler.results import ExportResult, NotPublished
from crawler.run.context import config_of, context_of
from crawler.run.state import Carried, RunState
from crawler.signals import sitemaps_published, url_warning
from crawler.sitemaps import hosts as host_sets
from crawler.sitemaps.entries import UrlEntry
from crawler.sitemaps.naming import index_name
from crawler.sitemaps.publish import PublishResult, SitemapPublisher
from crawler.sitemaps.shards import Relocate, write_assigned, write_sitemaps
from crawler.sitemaps.shrink import shrink_refusal
from crawler.sitemaps.site import news_entries, site_entries
from crawler.sitemaps.spool import SpooledUrl, UrlSpool
from crawler.state.changes import ChangeCounts, Kind, state_word
from crawler.state.lock import FileLock
from crawler.stats import Stat, dropped
from crawler.urls import site_root
from settings.checks import output_lock_path
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["SitemapExportPipeline", "output_lock", "publisher"]

logger = logging.getLogger(__name__)
#: URLs a run added that the result keeps for the check of the public copy (bounded memory).
ADDED_KEPT = 1000


def publisher(config: SitemapConfig, host: str | None = None) -> SitemapPublisher:
    """The publisher of the set in OUT, or in a crawl of several hosts of *host*'s set in OUT/HOST/."""
    out_dir, base_url, name = config.output_dir, config.base_url, index_name(config.basename)
    if host is not None:
        out_dir, base_url = out_dir / host, host_sets.host_base(base_url, host)
    kept = (host_sets.hosts_index_name(name),) if host is not None and host == config.hosts.index_host else ()
    return SitemapPublisher(
        out_dir, base_url, name, overwrite_foreign=config.overwrite_foreign, stylesheet=config.layout.stylesheet,
        kept_extras=kept,
    )  # fmt: skip


def output_lock(config: SitemapConfig) -> FileLock:
    """The lock of the output folder, ``OUT.lock`` beside it (held for the whole run)."""
    return FileLock(output_lock_path(config.output_dir), f"output folder {config.output_dir}")


class SitemapExportPipeline:
    def __init__(self, crawler: Crawler, config: SitemapConfig):
        self.crawler = crawler
        self.config = config
        # One run per output folder, whatever its state store: a second one would delete our staging.
        self.lock = output_lock(config)
        self.publisher = publisher(config)
        self.staging: Path | None = None
        self.spool: UrlSpool | None = None
        self.failure: OSError | sqlite3.Error | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler, config_of(crawler))
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def open_spider(self) -> None:
        self.staging = self.publisher.stage()
        self.spool = UrlSpool(self.staging / "spool.sqlite3", count_images=self.config.image_max_pages != 0)

    def process_item(self, item: PageFacts) -> PageFacts:
        assert self.spool is not None
        if self.failure is not None:
            return item  # the spool broke (a full disk): said once, at the end
        entry = self._public(
            UrlEntry(item.url, item.last_modified, tuple(item.alternates), tuple(item.images), tuple(item.videos))
        )
        group = host_sets.host_group(entry.loc, item.shard_group) if self.config.hosts.several else item.shard_group
        try:
            self.spool.add(entry, item.news.to_dict() if item.news else None, group)
        except (OSError, sqlite3.Error) as error:
            self.failure = error
        return item

    def _public(self, entry: UrlEntry) -> UrlEntry:
        """*entry* as production will serve it (an audit's host rewrite), else as it is."""
        hosts = self.config.audit.hosts
        if hosts is None:
            return entry
        public = hosts.to_production
        videos = tuple(
            replace(
                video,
                thumbnail_loc=video.thumbnail_loc and public(video.thumbnail_loc),
                content_loc=video.content_loc and public(video.content_loc),
                player_loc=video.player_loc and public(video.player_loc),
            )
            for video in entry.videos
        )
        return UrlEntry(
            public(entry.loc),
            entry.lastmod,
            tuple((tag, public(href)) for tag, href in entry.alternates),
            tuple(public(image) for image in entry.images),
            videos,
        )

    def warn(self, url: str, code: str, detail: str) -> None:
        self.crawler.signals.send_catch_log(signal=url_warning, url=url, code=code, detail=detail)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        assert self.spool is not None and self.staging is not None
        result = context_of(self.crawler).result.export
        try:
            state = context_of(self.crawler).run_state
            if reason != "finished":
                result.not_published, result.detail = NotPublished.INTERRUPTED, f"crawl {reason}"
                return
            if self.failure is not None:
                raise self.failure
            if state is not None and state.broken is not None:
                raise ValueError(state.broken)
            if state is not None and state.mode is RunMode.UPDATE:
                result.carried = state.carry_forward(self._spool_carried)
            elif state is not None:
                state.keep_out_of_reach()
            if len(self.spool) == 0:
                result.not_published, result.detail = NotPublished.NOTHING_LISTED, "no listable pages"
                return
            if refusal := self._shrink_refusal(state):
                logger.error("Sitemaps not published: %s", refusal)
                result.not_published, result.detail = NotPublished.SHRINK, refusal
                return
            self._warn_outside_base()
            result.publish, result.news_urls = self._write(state, result, datetime.now(UTC))
            if state is not None:
                self._report_removals(state, result)
                self._report_changes(state, result)
        except (OSError, ValueError, sqlite3.Error) as error:
            detail = str(error)
            full = isinstance(error, OSError) and error.errno == errno.ENOSPC
            if full or (isinstance(error, sqlite3.Error) and "full" in detail):  # the spool, in the staging folder
                detail = f"no space left on the device of {self.config.output_dir}"
            logger.error("Sitemaps not published: %s", detail)
            result.publish = None
            result.not_published, result.detail = NotPublished.EXPORT_FAILED, detail
        else:
            self._count(result)
            self.crawler.signals.send_catch_log(signal=sitemaps_published, result=result)
        finally:
            with suppress(OSError, sqlite3.Error):
                self.spool.close()
            self.publisher.abort(self.staging)
            self.lock.release()

    def _write(self, state: RunState | None, result: ExportResult, moment: datetime) -> tuple[PublishResult, int]:
        """Shards (stable ones with a state store), news shards and the index, published."""
        assert self.spool is not None and self.staging is not None
        config, layout = self.config, self.config.layout
        news = news_entries(self.spool, config.news_name, moment) if config.news_name else ()
        in_scope = config.listed_scope()
        now = w3c_datetime(moment)
        with_rules = partial(
            site_entries,
            image_max_pages=config.image_max_pages,
            warn=self.warn,
            max_bytes=layout.entry_max_bytes,
            media=partial(setattr, result, "media"),
        )
        if state is None:
            pairs = with_rules(self.spool, self.spool, in_scope)
            if config.hosts.several:
                return self._write_hosts(pairs, result, now, news, None)
            return write_sitemaps((entry for _, entry in pairs), self.publisher, self.staging, layout, now, news=news)
        place, result.delta_urls = state.placement(
            config.max_urls_per_file, delta=config.delta, delta_rotate=config.delta_rotate, compact=config.compact
        )
        self.spool.assign(place)
        pairs = with_rules(self.spool.by_shard(), self.spool, in_scope)
        if config.hosts.several:
            published = self._write_hosts(pairs, result, now, news, state.relocate)
            state.generation_written(config.delta)
            return published
        shards = write_assigned(pairs, self.staging, layout, state.relocate)
        published = write_sitemaps((), self.publisher, self.staging, layout, now, news=news, shards=shards)
        state.generation_written(config.delta)
        return published

    def _write_hosts(
        self,
        pairs: Iterable[tuple[SpooledUrl, UrlEntry]],
        result: ExportResult,
        now: str,
        news: Iterable[UrlEntry],
        relocate: Relocate | None,
    ) -> tuple[PublishResult, int]:
        """One set per host in OUT/HOST/ (crawler/sitemaps/hosts.py); the start host's (or the
        first host's) stands for them all where one result is asked for."""
        config = self.config
        by_host: dict[str, list[UrlEntry]] = {}
        for entry in news:  # the last two days' articles: few
            by_host.setdefault(host_sets.host_folder(entry.loc), []).append(entry)
        news_urls = 0
        publisher_for = partial(publisher, config)
        sets = host_sets.write_host_sets(
            pairs, publisher_for, config.layout, now, news=lambda f: by_host.get(f, ()), relocate=relocate
        )
        for folder, published, news_count in sets:
            result.sets[folder] = published
            news_urls += news_count
        outages, in_scope = context_of(self.crawler).result.outages(), config.listed_scope()
        in_out = list(host_sets.host_sets_in(config.output_dir, config.base_url, in_scope, outages))
        result.withdrawn, result.kept = host_sets.settle_gone_hosts(in_out, result.sets, publisher_for)
        if config.hosts.index_host:  # the index of every host's sitemaps, on one of them
            index = host_sets.write_hosts_index(config.hosts.index_host, in_out, result.sets, publisher_for, in_scope)
            result.hosts_index, result.hosts_index_missing = index
        return result.sets.get(host_sets.host_folder(config.base_url)) or next(iter(result.sets.values())), news_urls

    def _spool_carried(self, carried: Carried) -> None:
        """An update keeps a URL it did not touch exactly as it was written last time."""
        assert self.spool is not None
        url, lastmod, stored, group = carried
        self.spool.add_stored(url, lastmod, stored, group)

    def _report_removals(self, state: RunState, result: ExportResult) -> None:
        """URLs the last published run listed that this one does not, and why."""
        lines = [
            json.dumps({"url": url, "status": status, "outcome": outcome, "reason": reason})
            for url, status, outcome, reason in state.removals()
        ]
        result.removed_urls = len(lines)
        if self._write_beside(self.config.removals_path, lines, "removals report"):
            result.removals_path = self.config.removals_path

    def _shrink_refusal(self, state: RunState | None) -> str | None:
        """Why this run may not replace the published set (it lost too much of it), or ``None``. A
        crawl of several hosts guards each host's set as its own: one host may not lose it all."""
        config = self.config
        if not config.max_shrink or config.accept_shrink:
            return None
        assert self.spool is not None
        lost: Counter[tuple[str, str]] = Counter()  # (host root, what the URLs that left became)
        if state is not None:  # what the URLs that left became; without a store, what this run left out
            lost.update((site_root(url), state_word(why, reason, code)) for url, code, why, reason in state.removals())
        else:
            stats = self.crawler.stats
            lost.update({("", reason.value): n for reason in Reason if (n := stats.get_value(dropped(reason)) or 0)})
        if not config.hosts.several:
            words = Counter({word: n for (_, word), n in lost.items()})
            return shrink_refusal(self.publisher.listed(), len(self.spool), config.max_shrink, words)
        outages, in_scope = context_of(self.crawler).result.outages(), config.listed_scope()
        for folder, root, kept in host_sets.host_sets_in(config.output_dir, config.base_url, in_scope, outages):
            if kept:
                continue  # its set stays as it was
            words = Counter({word: n for (host, word), n in lost.items() if host in (root, "")})
            before, now = publisher(config, folder).listed(), self.spool.count_under(root)
            if why := shrink_refusal(before, now, config.max_shrink, words):
                return f"{folder}: {why}"
        return None

    def _report_changes(self, state: RunState, result: ExportResult) -> None:
        """OUT.changes.jsonl: every URL this run added, changed or removed, with what it was and is."""
        counts = ChangeCounts.of(())

        def lines() -> Iterator[str]:
            for change in state.changes():
                counts.add(change)
                if change.kind is Kind.ADDED and len(result.added) < ADDED_KEPT:
                    result.added.append(change.url)
                yield change.line()

        if self._write_beside(self.config.changes_path, lines(), "changes file"):
            result.changes, result.changes_path = counts, self.config.changes_path

    def _write_beside(self, path: Path, lines: Iterable[str], what: str) -> bool:
        """Write *lines* to a file beside OUT through a temporary one (one run per output folder:
        no other writer); a failure is the run's side error, named by *what*."""
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("w", encoding="utf-8") as file:
                for line in lines:
                    file.write(line + "\n")
            os.replace(tmp, path)
        except OSError as error:
            with suppress(OSError):
                tmp.unlink()
            context_of(self.crawler).result.side_errors.append(f"{what} {path} not written: {error.strerror or error}")
            return False
        return True

    def _count(self, result: ExportResult) -> None:
        stats = self.crawler.stats
        if sets := result.all_sets:
            stats.set_value(Stat.SHARDS, sum(len(published.shards) for published in sets))
            stats.set_value(Stat.SHARDS_WRITTEN, sum(len(published.written) for published in sets))
        stats.set_value(Stat.NEWS_URLS, result.news_urls)
        stats.set_value(Stat.DELTA_URLS, result.delta_urls)
        stats.set_value(Stat.CARRIED, result.carried)
        stats.set_value(Stat.REMOVED, result.removed_urls)

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
