"""Write a site's entries as shards and publish them with one index (pure).

Two ways to shard: a stream cut wherever a limit is reached (no state
store), or the stable (group, shard) each URL was assigned, where a shard
that outgrows the byte limit moves its overflow to a new shard of its group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING

from crawler.protocol import MAX_BYTES, MAX_NEWS_PER_FILE, MAX_URLS
from crawler.sitemaps.entries import URLSET_OPEN, UrlEntry
from crawler.sitemaps.naming import NEWS_GROUP, shard_name
from crawler.sitemaps.stylesheet import with_stylesheet
from crawler.sitemaps.writer import ShardedUrlsetWriter, ShardFile, write_urlset

if TYPE_CHECKING:
    from pathlib import Path

    from crawler.sitemaps.publish import PublishResult, SitemapPublisher
    from crawler.sitemaps.spool import SpooledUrl

__all__ = ["SetLayout", "write_assigned", "write_shards", "write_sitemaps"]

#: (URLs that did not fit, group) -> the new shard number they were given.
Relocate = Callable[[list[str], str], int]


@dataclass(frozen=True, slots=True)
class SetLayout:
    """File names and limits of one sitemap set."""

    basename: str = "sitemap"
    max_urls: int = MAX_URLS
    max_bytes: int = MAX_BYTES
    gzip_level: int | None = None  # None: plain XML
    stylesheet: str | None = None  # the name of the XSL beside the set that every file points at

    def shard_name(self, group: str, number: int) -> str:
        return shard_name(self.basename, group, number, self.gzip_level is not None)

    @property
    def urlset_open(self) -> bytes:
        return with_stylesheet(URLSET_OPEN, self.stylesheet)

    @property
    def entry_max_bytes(self) -> int:
        """The file size :func:`crawler.sitemaps.site.fit` fits an entry to: the limit, less the
        stylesheet's processing instruction that every shard starts with."""
        return self.max_bytes - (len(self.urlset_open) - len(URLSET_OPEN))


def write_shards(
    entries: Iterable[UrlEntry], staging: Path, layout: SetLayout, group: str = "", max_urls: int | None = None
) -> list[ShardFile]:
    """*entries* in order, a new shard wherever either limit is reached."""
    with ShardedUrlsetWriter(
        staging,
        basename=layout.basename,
        group=group,
        max_urls=max_urls or layout.max_urls,
        max_bytes=layout.max_bytes,
        gzip_level=layout.gzip_level,
        opening=layout.urlset_open,
    ) as writer:
        writer.extend(entries)
        return writer.close()


def write_assigned(
    entries: Iterable[tuple[SpooledUrl, UrlEntry]], staging: Path, layout: SetLayout, relocate: Relocate
) -> list[ShardFile]:
    """One file per assigned (group, shard), in that order; entries that do
    not fit the byte limit move to a new shard of their group (*relocate*)."""
    files: list[ShardFile] = []
    for (group, shard), members in groupby(entries, key=lambda pair: (pair[0].group, pair[0].shard)):
        pending = [(entry.loc, entry.render()) for _, entry in members]
        number = shard
        while pending:
            written, count = write_urlset(
                staging,
                layout.shard_name(group, number),
                [chunk for _, chunk in pending],
                layout.max_bytes,
                layout.gzip_level,
                opening=layout.urlset_open,
            )
            files.append(written)
            pending = pending[count:]
            if pending:
                number = relocate([loc for loc, _ in pending], group)
    return files


def write_sitemaps(
    entries: Iterable[UrlEntry],
    publisher: SitemapPublisher,
    staging: Path,
    layout: SetLayout,
    now: str,
    *,
    news: Iterable[UrlEntry] = (),
    shards: list[ShardFile] | None = None,
) -> tuple[PublishResult, int]:
    """Write *entries* (already sorted) and *news* entries as shards into
    *staging*, then publish them with one index; return the result and the
    number of news URLs. With *shards* already written (stable shards),
    *entries* is not used."""
    if shards is None:
        shards = write_shards(entries, staging, layout)
    news_files = write_shards(news, staging, layout, NEWS_GROUP, min(MAX_NEWS_PER_FILE, layout.max_urls))
    result = publisher.publish(staging, shards + news_files, now)
    return result, sum(shard.url_count for shard in news_files)
