"""Rules that only the whole site can decide, applied as entries are written (pure).

hreflang clusters keep versions that are listed and link back; images found
on more than N listed pages (logos, icons) are dropped; news sitemaps take
the articles of the last two days; an entry too big for a sitemap file is
cut to fit (its images first) or left out, never blocking the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any, NamedTuple

from crawler.page.news import is_recent
from crawler.sitemaps.clusters import resolve_cluster
from crawler.sitemaps.entries import URLSET_CLOSE, URLSET_OPEN, NewsEntry, UrlEntry
from crawler.sitemaps.spool import SpooledUrl, UrlSpool

__all__ = ["MediaCounts", "Warn", "fit", "news_entries", "site_entries"]


class MediaCounts(NamedTuple):
    """The media of the set written (an update's carried URLs too): image and video entries, and
    the site's own images (on so many listed pages that they are a logo): distinct ones and the
    image entries left out."""

    images: int
    videos: int
    site_wide: int
    left_out: int


#: (url, code, detail): a whole-site finding about a listed URL.
Warn = Callable[[str, str, str], None]


_CUTTABLE = ("images", "videos", "alternates")  # the bulk of a big entry comes first


def _upper_bound(entry: UrlEntry) -> int:
    """A size no rendering of *entry* exceeds (every character escaped to 6 bytes)."""
    size = 6 * len(entry.loc) + 100
    size += sum(6 * len(image) + 60 for image in entry.images)
    size += sum(6 * (len(tag) + len(href)) + 60 for tag, href in entry.alternates)
    for video in entry.videos:
        size += 600 + sum(6 * len(str(value)) * 4 for value in video.to_dict().values())
    return size


def _with(entry: UrlEntry, name: str, items: tuple[Any, ...]) -> UrlEntry:
    if name == "images":
        return replace(entry, images=items)
    if name == "videos":
        return replace(entry, videos=items)
    return replace(entry, alternates=items)


def fit(entry: UrlEntry, max_bytes: int) -> tuple[UrlEntry | None, str | None]:
    """*entry* as it fits in a sitemap file of *max_bytes*: unchanged, cut
    (images, then videos, then alternates, from the end) or ``None``; and a
    note saying what was left out."""
    room = max_bytes - len(URLSET_OPEN) - len(URLSET_CLOSE)
    if _upper_bound(entry) <= room:
        return entry, None
    size = len(entry.render())
    if size <= room:
        return entry, None
    for name in _CUTTABLE:
        items: tuple[Any, ...] = getattr(entry, name)
        if not items:
            continue
        low, high = 0, len(items) - 1  # the most items that still fit, by bisection
        while low < high:
            middle = (low + high + 1) // 2
            if len(_with(entry, name, items[:middle]).render()) <= room:
                low = middle
            else:
                high = middle - 1
        cut = _with(entry, name, items[:low])
        if len(cut.render()) <= room:
            why = f"{len(items) - low} of {len(items)} {name} left out: the entry was {size} bytes"
            return cut, f"{why}, a sitemap file holds {max_bytes}"
        entry = _with(entry, name, ())
    return None, f"left out of the sitemaps: even without extensions its entry is over {max_bytes} bytes"


#: A site needs this many listed pages before an image on most of them is called site-wide.
SITE_WIDE_MIN_PAGES = 20


def image_page_limit(image_max_pages: int | None, listed: int) -> int:
    """The most listed pages an image may be on and still be listed (0: no limit). Unset, an image on
    more than half of the pages of a site of :data:`SITE_WIDE_MIN_PAGES` or more is the site's
    (a logo, a social card): it says nothing about one page, and would flood the image entries."""
    if image_max_pages is not None:
        return image_max_pages
    return listed // 2 if listed >= SITE_WIDE_MIN_PAGES else 0


def site_entries(
    spooled_urls: Iterable[SpooledUrl],
    spool: UrlSpool,
    in_scope: Callable[[str], bool],
    *,
    image_max_pages: int | None,
    warn: Warn,
    max_bytes: int,
    media: Callable[[MediaCounts], None] = lambda counts: None,
) -> Iterator[tuple[SpooledUrl, UrlEntry]]:
    """Spooled entries with the whole-site rules applied, in the order given; *media* is told,
    once they are all given, how many images and videos they list and which images were the site's."""
    limit = image_page_limit(image_max_pages, len(spool))
    popular = spool.popular_images(limit) if limit else set()
    left_out = images = videos = 0
    for spooled in spooled_urls:
        entry = spooled.entry
        if entry.alternates:
            cluster = resolve_cluster(entry.loc, list(entry.alternates), in_scope, spool.listed, spool.declared_by)
            for code, detail in cluster.warnings:
                warn(entry.loc, code, detail)
            entry = replace(entry, alternates=tuple(cluster.links))
        if popular and entry.images:
            kept = tuple(i for i in entry.images if i not in popular)
            left_out += len(entry.images) - len(kept)
            entry = UrlEntry(entry.loc, entry.lastmod, entry.alternates, kept, entry.videos, entry.news)
        fitted, note = fit(entry, max_bytes)
        if note:
            warn(entry.loc, "entry-cut" if fitted else "entry-too-big", note)
        if fitted is not None:
            images, videos = images + len(fitted.images), videos + len(fitted.videos)
            yield spooled, fitted
    media(MediaCounts(images, videos, len(popular), left_out))


def news_entries(spool: UrlSpool, publication: str, now: datetime) -> Iterator[UrlEntry]:
    """Articles published in the last two days, for the news sitemap."""
    for spooled in spool:
        news = spooled.news
        if news and news.get("language") and is_recent(news["publication_date"], now):
            entry = NewsEntry(publication, news["language"], news["publication_date"], news["title"])
            yield UrlEntry(spooled.entry.loc, news=entry)
