"""The audit record: the SQLite file the recorder writes during the crawl (pure).

One row per URL seen, one per link between two of them (each pair once:
the recorder de-duplicates a page's links; ``click`` tells an ``<a>`` or
``<area>``, with its ``anchor`` text, from a ``<link>``), the whole-site warnings
and robots.txt's ``Sitemap:`` lines. The analysis reads it back with
:func:`pages`, row by row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SCHEMA", "Page", "open_record", "pages"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY, status INTEGER, reason TEXT, detail TEXT, depth INTEGER, referrer TEXT,
    canonical TEXT, redirect_to TEXT, redirect_chain TEXT, title TEXT, content_type TEXT, digest TEXT,
    header_robots TEXT, meta_robots TEXT, alternates TEXT, images INTEGER, notes TEXT,
    response_ms INTEGER, bytes INTEGER
);
CREATE TABLE IF NOT EXISTS links (source TEXT, target TEXT, click INTEGER, anchor TEXT);
CREATE TABLE IF NOT EXISTS warnings (url TEXT, code TEXT, detail TEXT);
CREATE TABLE IF NOT EXISTS robots_sitemaps (url TEXT PRIMARY KEY);
"""


@dataclass(slots=True)
class Page:
    """One URL as the crawl met it. ``reason`` is ``None`` for a listed URL."""

    url: str
    status: int | None
    reason: str | None
    detail: str | None
    depth: int
    referrer: str | None
    canonical: str | None
    redirect_to: str | None
    title: str | None
    content_type: str | None
    digest: str | None
    header_robots: list[str] = field(default_factory=list)
    meta_robots: list[str] = field(default_factory=list)
    alternates: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    response_ms: int | None = None
    bytes: int | None = None
    #: Fewest clicks from the start URL (:mod:`crawler.audit.depth`); ``None``: not linked.
    clicks: int | None = None

    @property
    def listed(self) -> bool:
        return self.reason is None

    @property
    def fetched_html(self) -> bool:
        return self.status == 200 and self.digest is not None


def open_record(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    return db


def _list(text: str | None) -> list[str]:
    return list(json.loads(text)) if text else []


def pages(db: sqlite3.Connection) -> Iterator[Page]:
    query = (
        "SELECT url, status, reason, detail, depth, referrer, canonical, redirect_to, title, content_type, digest,"
        " header_robots, meta_robots, alternates, notes, response_ms, bytes FROM pages ORDER BY depth, url"
    )
    for row in db.execute(query):
        alternates = [(str(tag), str(href)) for tag, href in json.loads(row[13])] if row[13] else []
        url, status, reason, detail, depth, referrer, canonical, redirect_to, title, content_type, digest = row[:11]
        yield Page(
            url,
            status,
            reason,
            detail,
            depth,
            referrer,
            canonical,
            redirect_to,
            title,
            content_type,
            digest,
            _list(row[11]),
            _list(row[12]),
            alternates,
            _list(row[14]),
            row[15],
            row[16],
        )
