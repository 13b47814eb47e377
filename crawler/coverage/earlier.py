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
    """The state store at *path*, opened read only, writing nothing beside it (no ``-wal`` or
    ``-shm`` of its own, in a folder it may not write to); ``ValueError`` (one line) when it is
    none or cannot be read."""
    resolved = path.resolve()
    # A store with no write-ahead log of a crawl now writing it is read as a file that cannot change.
    running = any(resolved.with_name(resolved.name + end).exists() for end in ("-wal", "-shm"))
    uri = f"file:{pathname2url(str(resolved))}?mode=ro" + ("" if running else "&immutable=1")
    store = None
    try:
        store = sqlite3.connect(uri, uri=True)
        store.execute(_PAGE.replace("url = ?", "0"))  # its columns, or the error that says what it is
    except sqlite3.DatabaseError as error:
        if store is not None:
            store.close()
        text = str(error)
        other = "not a database" in text or "no such" in text  # another file, or another database
        what = "not a state store of sitemap-crawler" if other else "not readable"
        raise ValueError(f"{path}: {what} ({text})") from None
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
