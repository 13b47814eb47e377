"""What the audit knows of the whole site, read from its record on demand (pure).

The findings need the site at once (a canonical's target, a redirect
chain's hops, the pages linking to a URL), but a site of a million URLs
must not be held in memory: :class:`SiteFacts` answers from the SQLite
record, with the click depth and the inlink count of every URL computed
once, in SQL, into temporary tables, and a view that joins them to the
pages.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from crawler.audit.depth import measure_click_depths
from crawler.audit.record import Page, page_of
from crawler.urls import site_root

__all__ = ["NotFoundPage", "SiteFacts"]

_SETUP = """
CREATE INDEX IF NOT EXISTS pages_by_redirect ON pages (redirect_to);
CREATE INDEX IF NOT EXISTS links_to ON links (target, source, click, anchor);
DROP TABLE IF EXISTS temp.inlink_count;
CREATE TEMP TABLE inlink_count (url TEXT PRIMARY KEY, count INTEGER NOT NULL);
INSERT INTO inlink_count SELECT target, COUNT(*) FROM links WHERE target IN (SELECT url FROM pages) GROUP BY target;
DROP VIEW IF EXISTS temp.audited;
CREATE TEMP VIEW audited AS
SELECT pages.*, click_depth.depth AS clicks, COALESCE(inlink_count.count, 0) AS inlinks,
       listed.url IS NOT NULL AS in_sitemaps
FROM pages LEFT JOIN click_depth USING (url) LEFT JOIN inlink_count USING (url) LEFT JOIN listed USING (url);
"""


@dataclass(frozen=True, slots=True)
class NotFoundPage:
    """The site's own answer to a URL that cannot exist: its soft-404 fingerprint."""

    status: int
    digest: str | None
    title: str | None


class SiteFacts:
    """The record of one audit, with click depths and inlink counts measured.

    Link targets never recorded (over a limit) have no inlink count: they
    are not explained. ``where`` clauses are the analysis's own SQL, with
    the columns of :data:`crawler.audit.record.COLUMNS` plus ``clicks``,
    ``inlinks`` and ``in_sitemaps``; values always go as parameters.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        start_url: str,
        deep_threshold: int,
        not_found: Mapping[str, NotFoundPage] | None = None,  # by host root: each host's own 404 page
        host_roots: tuple[str, ...] = (),  # the other hosts' roots, each a start of the crawl too
    ):
        self.db = db
        self.start_url = start_url
        self.deep_threshold = deep_threshold
        self.not_found = not_found or {}
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA temp_store = FILE")  # big sorts go to disk; first: a change drops temp tables
        measure_click_depths(db, (start_url, *host_roots))
        db.executescript(_SETUP)

    def rows(self, where: str = "1", params: tuple[Any, ...] = ()) -> Iterator[sqlite3.Row]:
        """The recorded pages matching *where*, in the crawl's order (depth, then URL), as rows
        (with ``clicks``, ``inlinks`` and ``in_sitemaps``)."""
        query = f"SELECT * FROM audited WHERE {where} ORDER BY depth, url"  # noqa: S608 - our own clauses
        return self.db.execute(query, params)

    def pages(self, where: str = "1", params: tuple[Any, ...] = ()) -> Iterator[Page]:
        """:meth:`rows`, as pages."""
        return (page_of(row) for row in self.rows(where, params))

    def get(self, url: str) -> Page | None:
        row = self.db.execute("SELECT * FROM audited WHERE url = ?", (url,)).fetchone()
        return None if row is None else page_of(row)

    def is_own_404(self, page: Page) -> bool:
        """Whether *page* has the text of its own host's 404 page (hosts run different software)."""
        own = self.not_found.get(site_root(page.url))
        return own is not None and bool(own.digest) and page.digest == own.digest

    def inlinks(self, url: str) -> int:
        row = self.db.execute("SELECT count FROM inlink_count WHERE url = ?", (url,)).fetchone()
        return int(row[0]) if row else 0

    def is_redirect_target(self, url: str) -> bool:
        return self.db.execute("SELECT 1 FROM pages WHERE redirect_to = ? LIMIT 1", (url,)).fetchone() is not None
