"""A disk-backed, de-duplicating, sorted buffer of listed URLs.

Crawl order depends on timing; sitemap order must not. Listed URLs go into a
temporary SQLite table keyed by loc (so a loc can never appear twice) and
come back out sorted by loc, streamed, whatever the size of the site.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from crawler.sitemaps.writer import UrlEntry

__all__ = ["UrlSpool"]

_BATCH = 2000


class UrlSpool:
    def __init__(self, path: Path):
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None)
        # A scratch file: durability is the publisher's job, not this one's.
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE IF NOT EXISTS entry (loc TEXT PRIMARY KEY, lastmod TEXT) WITHOUT ROWID")
        self._pending: list[tuple[str, str | None]] = []

    def add(self, entry: UrlEntry) -> None:
        self._pending.append((entry.loc, entry.lastmod))
        if len(self._pending) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR IGNORE INTO entry VALUES (?, ?)", self._pending)
            self._pending.clear()

    def __len__(self) -> int:
        self._flush()
        return int(self._db.execute("SELECT count(*) FROM entry").fetchone()[0])

    def __iter__(self) -> Iterator[UrlEntry]:
        self._flush()
        for loc, lastmod in self._db.execute("SELECT loc, lastmod FROM entry ORDER BY loc"):
            yield UrlEntry(loc, lastmod)

    def close(self) -> None:
        self._db.close()
        self.path.unlink(missing_ok=True)
