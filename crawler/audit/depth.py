"""Click depth: the fewest clicks from the start URL (and each other host's root, a start of
a crawl of several hosts too) to each URL (pure).

The crawl's own ``depth`` is the order it found URLs in (a sitemap entry is
one step from the start, whatever its distance), so the audit measures
distance itself, after the crawl: a breadth-first search over the record's
links, one ``INSERT ... SELECT`` per level in SQLite, so memory stays flat
however big the site. Edges are clicks (``<a>``, ``<area>``) and redirect
hops; a hop is a way in, not a click (its target gets the depth of the
redirecting URL). Canonicals and ``<link>`` elements (hreflang alternates,
next/prev) are not clicks. A URL no click reaches has no depth: not linked.
"""

from __future__ import annotations

import sqlite3

__all__ = ["measure_click_depths"]

_SETUP = """
CREATE INDEX IF NOT EXISTS links_by_source ON links (source);
DROP TABLE IF EXISTS temp.click_depth;
CREATE TEMP TABLE click_depth (url TEXT PRIMARY KEY, depth INTEGER NOT NULL);
CREATE INDEX temp.click_depth_by_level ON click_depth (depth);
"""
_CLICKS = """
INSERT OR IGNORE INTO click_depth (url, depth)
SELECT links.target, ? FROM click_depth JOIN links ON links.source = click_depth.url
WHERE click_depth.depth = ? AND links.click
"""
_HOPS = """
INSERT OR IGNORE INTO click_depth (url, depth)
SELECT pages.redirect_to, ? FROM click_depth JOIN pages ON pages.url = click_depth.url
WHERE click_depth.depth = ? AND pages.redirect_to IS NOT NULL
"""


def measure_click_depths(db: sqlite3.Connection, starts: tuple[str, ...]) -> None:
    """Fill the temporary table ``click_depth`` (URL, clicks from the nearest of *starts*) level by level.

    Every pass adds at least one URL or ends, so no loop runs more often
    than there are URLs in the record (plus one).
    """
    db.executescript(_SETUP)
    db.executemany("INSERT OR IGNORE INTO click_depth VALUES (?, 0)", ((start,) for start in starts))
    (bound,) = db.execute("SELECT COUNT(*) + 2 FROM pages").fetchone()
    for level in range(bound):
        for _ in range(bound):  # a redirect chain, hop by hop, at the same depth
            if not db.execute(_HOPS, (level, level)).rowcount:
                break
        if not db.execute(_CLICKS, (level + 1, level)).rowcount:
            break
