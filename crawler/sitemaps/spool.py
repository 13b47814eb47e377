"""A disk-backed, de-duplicating, sorted buffer of listed URLs.

Crawl order depends on timing; sitemap order must not. Listed URLs go into a
temporary SQLite database keyed by loc (so a loc can never appear twice) and
come back out sorted by loc, streamed, whatever the size of the site. It
also answers the questions only the whole site can answer: is this URL
listed, which alternates does that page declare, which images are on many
pages.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from crawler.page.videos import Video
from crawler.records import decode, encode
from crawler.sitemaps.entries import UrlEntry

__all__ = ["SpooledUrl", "UrlSpool"]

_BATCH = 2000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entry (
    loc TEXT PRIMARY KEY, lastmod TEXT, data TEXT, grp TEXT NOT NULL DEFAULT '', shard INTEGER, pos INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alternate (url TEXT, hreflang TEXT, href TEXT, PRIMARY KEY (url, hreflang)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS image (image TEXT, url TEXT, PRIMARY KEY (image, url)) WITHOUT ROWID;
"""


class SpooledUrl:
    """A listed URL as stored: the entry (alternates as declared) and its news facts."""

    __slots__ = ("entry", "group", "news", "shard")

    def __init__(self, entry: UrlEntry, news: dict[str, Any] | None, group: str = "", shard: int = 0):
        self.entry = entry
        self.news = news
        self.group = group
        self.shard = shard


class UrlSpool:
    def __init__(self, path: Path, *, count_images: bool = False):
        self.path = path
        self.count_images = count_images
        self._db = sqlite3.connect(path, isolation_level=None)
        # A scratch file: durability is the publisher's job, not this one's.
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        self._entries: list[tuple[str, str | None, bytes | None, str]] = []
        self._alternates: list[tuple[str, str, str]] = []
        self._images: list[tuple[str, str]] = []

    def add(self, entry: UrlEntry, news: dict[str, Any] | None = None, group: str = "") -> None:
        videos = [v.to_dict() for v in entry.videos]
        self._add(
            entry.loc, entry.lastmod, group, alternates=entry.alternates, images=entry.images, videos=videos, news=news
        )

    def add_stored(self, loc: str, lastmod: str | None, facts: dict[str, Any], group: str = "") -> None:
        """A URL from the facts the state store keeps (``PageFacts.to_dict``): an update's carried
        URLs go straight in, without a round trip through the item (a tenth of the export's time)."""
        alternates = [(str(tag), str(href)) for tag, href in facts.get("alternates") or ()]
        images = [str(image) for image in facts.get("images") or ()]
        videos = list(facts.get("videos") or ())
        self._add(loc, lastmod, group, alternates=alternates, images=images, videos=videos, news=facts.get("news"))

    def _add(
        self,
        loc: str,
        lastmod: str | None,
        group: str,
        *,
        alternates: Sequence[tuple[str, str]],
        images: Sequence[str],
        videos: list[dict[str, Any]],
        news: dict[str, Any] | None,
    ) -> None:
        data: bytes | None = None
        if images or videos or alternates or news:
            data = encode({"alternates": alternates, "images": images, "videos": videos, "news": news})
        self._entries.append((loc, lastmod, data, group))
        self._alternates.extend((loc, tag, href) for tag, href in alternates)
        if self.count_images:
            self._images.extend((image, loc) for image in images)
        if len(self._entries) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        if not (self._entries or self._alternates or self._images):
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR IGNORE INTO entry (loc, lastmod, data, grp) VALUES (?, ?, ?, ?)", self._entries
            )
            self._db.executemany("INSERT OR IGNORE INTO alternate VALUES (?, ?, ?)", self._alternates)
            self._db.executemany("INSERT OR IGNORE INTO image VALUES (?, ?)", self._images)
        self._entries.clear()
        self._alternates.clear()
        self._images.clear()

    def __len__(self) -> int:
        self._flush()
        return int(self._db.execute("SELECT count(*) FROM entry").fetchone()[0])

    def count_under(self, root: str) -> int:
        """How many listed URLs start with *root* (``scheme://host[:port]/``: one host's)."""
        self._flush()
        end = root[:-1] + chr(ord(root[-1]) + 1)
        return int(self._db.execute("SELECT count(*) FROM entry WHERE loc >= ? AND loc < ?", (root, end)).fetchone()[0])

    def __iter__(self) -> Iterator[SpooledUrl]:
        """Every listed URL in loc order, alternates as the page declared them."""
        return self._select("ORDER BY loc")

    def by_shard(self) -> Iterator[SpooledUrl]:
        """Every listed URL in shard order (see :meth:`assign`)."""
        return self._select("ORDER BY grp, shard, pos, loc")

    def assign(self, place: Callable[[str, str], tuple[str, int, int]]) -> None:
        """Give every URL, in loc order, the (group, shard, position) *place* chooses."""
        self._flush()
        last = ""
        while True:  # in pages, so memory stays flat whatever the number of URLs
            rows = self._db.execute(
                "SELECT loc, grp FROM entry WHERE loc > ? ORDER BY loc LIMIT 10000", (last,)
            ).fetchall()
            if not rows:
                return
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "UPDATE entry SET grp = ?, shard = ?, pos = ? WHERE loc = ?",
                    ((*place(str(loc), str(group)), loc) for loc, group in rows),
                )
            last = str(rows[-1][0])

    def _select(self, order: str) -> Iterator[SpooledUrl]:
        self._flush()
        query = f"SELECT loc, lastmod, data, grp, shard FROM entry {order}"  # noqa: S608 - fixed strings
        for loc, lastmod, data, group, shard in self._db.execute(query):
            if data is None:
                yield SpooledUrl(UrlEntry(loc, lastmod), None, group, shard or 0)
                continue
            extra = decode(data)
            alternates = tuple((str(tag), str(href)) for tag, href in extra["alternates"])
            videos = tuple(Video.from_dict(v) for v in extra["videos"])
            entry = UrlEntry(loc, lastmod, alternates, tuple(extra["images"]), videos)
            yield SpooledUrl(entry, extra["news"], group, shard or 0)

    def listed(self, loc: str) -> bool:
        return self._db.execute("SELECT 1 FROM entry WHERE loc = ?", (loc,)).fetchone() is not None

    def declared_by(self, loc: str) -> dict[str, str]:
        """The URLs that page *loc* declares as alternates, with their hreflang."""
        rows = self._db.execute("SELECT href, hreflang FROM alternate WHERE url = ?", (loc,))
        return {str(href): str(tag) for href, tag in rows}

    def popular_images(self, more_than: int) -> set[str]:
        """Images found on more than *more_than* listed pages (logos, icons)."""
        self._flush()
        rows = self._db.execute("SELECT image FROM image GROUP BY image HAVING count(*) > ?", (more_than,))
        return {str(row[0]) for row in rows}

    def close(self) -> None:
        self._db.close()
        self.path.unlink(missing_ok=True)
