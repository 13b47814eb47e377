"""What earlier crawls knew of the URLs crawlers fetched that this crawl never met, from the
state store (read only): a page the site no longer links, or one that was listed and is gone,
is told apart from a URL the site never had (a typo, a probe, an old link elsewhere).

Only those URLs are looked up, each by its key: a store of a million pages is never copied.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.request import pathname2url

__all__ = ["knows_any", "open_state", "read_earlier"]

_UNMET = """
SELECT DISTINCT url FROM fetch WHERE url NOT IN (SELECT url FROM met) AND url NOT IN (SELECT url FROM listed)
"""
_PAGE = "SELECT last_seen, outcome, reason, listed_run IS NOT NULL FROM page WHERE url = ?"


def open_state(path: Path) -> sqlite3.Connection:
    """The state store at *path*, opened read only; ``ValueError`` (one line) when it is none."""
    try:
        store = sqlite3.connect(f"file:{pathname2url(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ValueError(f"{path}: not readable ({error})") from None
    try:
        store.execute(_PAGE.replace("url = ?", "0"))  # its columns, or the error that says what it is
    except sqlite3.Error as error:  # not SQLite, or no page table of the state store's
        store.close()
        raise ValueError(f"{path}: not a state store of sitemap-crawler ({error})") from None
    return store


def knows_any(store: sqlite3.Connection, origins: list[str]) -> bool:
    """Whether the state *store* holds a URL of any of *origins* (``scheme://host[:port]/``): a
    store of another crawl holds none."""
    query = "SELECT 1 FROM page WHERE url >= ? AND url < ? LIMIT 1"
    return any(store.execute(query, (origin, origin[:-1] + "0")).fetchone() for origin in origins)


def read_earlier(store: sqlite3.Connection, db: sqlite3.Connection) -> int:
    """Each fetched URL that is neither listed nor in the crawl report, as the state *store* last
    saw it, into ``earlier`` (see :data:`crawler.coverage.published.SCHEMA`); how many it knew."""
    known = 0
    unmet = db.execute(_UNMET)
    while batch := unmet.fetchmany(10_000):
        rows = [(url, *row) for (url,) in batch if (row := store.execute(_PAGE, (url,)).fetchone())]
        db.executemany("INSERT INTO earlier VALUES (?, ?, ?, ?, ?)", rows)
        known += len(rows)
    db.commit()
    return known
