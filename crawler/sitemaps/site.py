"""Rules that only the whole site can decide, applied as entries are written (pure).

hreflang clusters keep versions that are listed and link back; images found
on more than N listed pages (logos, icons) are dropped; news sitemaps take
the articles of the last two days.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime

from crawler.page.news import is_recent
from crawler.sitemaps.clusters import resolve_cluster
from crawler.sitemaps.entries import NewsEntry, UrlEntry
from crawler.sitemaps.spool import SpooledUrl, UrlSpool

__all__ = ["Warn", "news_entries", "site_entries"]

#: (url, code, detail): a whole-site finding about a listed URL.
Warn = Callable[[str, str, str], None]


def site_entries(
    spooled_urls: Iterable[SpooledUrl],
    spool: UrlSpool,
    in_scope: Callable[[str], bool],
    image_max_pages: int,
    warn: Warn,
) -> Iterator[tuple[SpooledUrl, UrlEntry]]:
    """Spooled entries with the whole-site rules applied, in the order given."""
    popular = spool.popular_images(image_max_pages) if image_max_pages else set()
    for spooled in spooled_urls:
        entry = spooled.entry
        if entry.alternates:
            cluster = resolve_cluster(entry.loc, list(entry.alternates), in_scope, spool.listed, spool.declared_by)
            for code, detail in cluster.warnings:
                warn(entry.loc, code, detail)
            entry = replace(entry, alternates=tuple(cluster.links))
        if popular and entry.images:
            entry = replace(entry, images=tuple(i for i in entry.images if i not in popular))
        yield spooled, entry


def news_entries(spool: UrlSpool, publication: str, now: datetime) -> Iterator[UrlEntry]:
    """Articles published in the last two days, for the news sitemap."""
    for spooled in spool:
        news = spooled.news
        if news and news.get("language") and is_recent(news["publication_date"], now):
            entry = NewsEntry(publication, news["language"], news["publication_date"], news["title"])
            yield UrlEntry(spooled.entry.loc, news=entry)
