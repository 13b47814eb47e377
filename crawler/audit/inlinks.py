"""The pages linking to a URL, with the text of their links (pure).

A report row shows where a URL is linked from, so a release manager can
fix the link rather than hunt for it; a URL linked from every page would
make that list as long as the site, so it is cut at :data:`MAX_SOURCES`
(the count of all inlinks is in the row beside it).
"""

from __future__ import annotations

import sqlite3

__all__ = ["MAX_SOURCES", "linked_from"]

#: Sources listed per URL; clicks (with their anchor text) first, then ``<link>`` elements.
MAX_SOURCES = 5

_QUERY = """
SELECT source, MAX(click), MAX(anchor) FROM links WHERE target = ?
GROUP BY source ORDER BY MAX(click) DESC, source LIMIT ?
"""


def linked_from(db: sqlite3.Connection, url: str) -> list[dict[str, str | None]]:
    """Up to :data:`MAX_SOURCES` ``{"url": source, "anchor": text}``; ``anchor`` is
    ``None`` for a ``<link>`` element (hreflang alternate, next/prev), not a click."""
    rows = db.execute(_QUERY, (url, MAX_SOURCES))
    return [{"url": source, "anchor": anchor if click else None} for source, click, anchor in rows]
