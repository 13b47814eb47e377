"""The audit record: the SQLite file the recorder writes during the crawl (pure).

One row per URL seen, one per link between two of them (each pair once:
the recorder de-duplicates a page's links; ``click`` tells an ``<a>`` or
``<area>``, with its ``anchor`` text, from a ``<link>``), the whole-site warnings,
robots.txt's ``Sitemap:`` lines and, once the site's own sitemaps are read,
the URLs they list. The schema, the writer (:func:`record_page`, by column
name) and the reader (:func:`page_of`) live here together, so a column is
added in one place. The analysis reads the record row by row: a site of a
million URLs costs disk, not memory.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["COLUMNS", "SCHEMA", "Page", "open_record", "page_of", "record_page"]

#: The ``pages`` table's columns and their types, in order; JSON lists where a value is several.
_TYPED = {
    "url": "TEXT",
    "status": "INTEGER",
    "reason": "TEXT",
    "detail": "TEXT",
    "depth": "INTEGER",
    "referrer": "TEXT",
    "canonical": "TEXT",
    "redirect_to": "TEXT",
    "redirect_chain": "TEXT",
    "title": "TEXT",
    "content_type": "TEXT",
    "digest": "TEXT",
    "header_robots": "TEXT",
    "meta_robots": "TEXT",
    "alternates": "TEXT",
    "images": "INTEGER",
    "notes": "TEXT",
    "response_ms": "INTEGER",
    "bytes": "INTEGER",
}
COLUMNS = tuple(_TYPED)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS pages ({", ".join(f"{name} {kind}" for name, kind in _TYPED.items())}, PRIMARY KEY (url));
CREATE TABLE IF NOT EXISTS links (source TEXT, target TEXT, click INTEGER, anchor TEXT);
CREATE TABLE IF NOT EXISTS warnings (url TEXT, code TEXT, detail TEXT);
-- robots: the root of the robots.txt naming url ('' if unknown); every host may name one index
CREATE TABLE IF NOT EXISTS robots_sitemaps (url TEXT, robots TEXT, PRIMARY KEY (url, robots));
CREATE TABLE IF NOT EXISTS listed (url TEXT PRIMARY KEY, times INTEGER NOT NULL);
"""

_INSERT = f"INSERT OR REPLACE INTO pages ({', '.join(COLUMNS)}) VALUES ({', '.join(':' + c for c in COLUMNS)})"  # noqa: S608


def record_page(db: sqlite3.Connection, values: Mapping[str, Any]) -> None:
    """One URL's row, by column name (a column left out is NULL)."""
    db.execute(_INSERT, {column: values.get(column) for column in COLUMNS})


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


def page_of(row: sqlite3.Row) -> Page:
    """The :class:`Page` of a row read with :data:`sqlite3.Row` (``clicks`` when the query has it)."""
    alternates = [(str(tag), str(href)) for tag, href in json.loads(row["alternates"])] if row["alternates"] else []
    return Page(
        row["url"],
        row["status"],
        row["reason"],
        row["detail"],
        row["depth"],
        row["referrer"],
        row["canonical"],
        row["redirect_to"],
        row["title"],
        row["content_type"],
        row["digest"],
        _list(row["header_robots"]),
        _list(row["meta_robots"]),
        alternates,
        _list(row["notes"]),
        row["response_ms"],
        row["bytes"],
        row["clicks"] if "clicks" in row.keys() else None,  # noqa: SIM118 - sqlite3.Row has no __contains__ for names
    )
