"""Which query parameters waste the crawl budget (pure apart from the coverage tables).

For each parameter name in the URLs the crawl met or a verified crawler fetched in the
window: how many URLs carry it, how many distinct values, how many of those URLs are listed,
why the others were left out (the crawl's reason, or ``not-met``), and how many fetches
crawlers spent on them. A parameter none of whose URLs is listed gets suggested robots.txt
lines, proven first against the listed set: a line that would block a listed URL is never
suggested.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from crawler.coverage.figures import NOT_PUBLISHED
from crawler.robots_rules import parse_robots

__all__ = ["parameter_figures", "suggested_lines"]

_SCHEMA = """
DROP TABLE IF EXISTS temp.param;
CREATE TEMP TABLE param (name TEXT NOT NULL, value TEXT NOT NULL, url TEXT NOT NULL);
"""
_QUERIED = """
SELECT url FROM listed WHERE url LIKE '%?%' UNION SELECT url FROM met WHERE url LIKE '%?%'
UNION SELECT url FROM f WHERE url LIKE '%?%'
"""
_NAMES = """
WITH pu AS (SELECT DISTINCT name, url FROM param),
     fetched AS (SELECT url, SUM(n) AS n FROM f GROUP BY url)
SELECT pu.name, COUNT(*), SUM(listed.url IS NOT NULL), coalesce(SUM(fetched.n), 0),
       (SELECT COUNT(DISTINCT value) FROM param WHERE param.name = pu.name)
FROM pu LEFT JOIN listed USING (url) LEFT JOIN fetched USING (url)
GROUP BY pu.name ORDER BY 4 DESC, 2 DESC, 1
"""
_REASONS = """
WITH pu AS (SELECT DISTINCT name, url FROM param)
SELECT pu.name, CASE WHEN met.url IS NULL THEN (SELECT unmet FROM window_start)
                    ELSE coalesce(met.reason, :not_published) END, COUNT(*)
FROM pu LEFT JOIN listed USING (url) LEFT JOIN met USING (url)
WHERE listed.url IS NULL GROUP BY 1, 2 ORDER BY 3 DESC, 2
"""
#: At most this many parameters are reported (the most fetched first).
MAX_PARAMETERS = 100


def _pairs(url: str) -> Iterator[tuple[str, str]]:
    seen = set()
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if (name, value) not in seen:
            seen.add((name, value))
            yield name, value


def suggested_lines(name: str) -> list[str]:
    """robots.txt lines that block the URLs whose query has *name* (first or later), nothing else."""
    return [f"Disallow: /*?{name}=", f"Disallow: /*&{name}="]


def _blocks_listed(db: sqlite3.Connection, lines: list[str]) -> int:
    """How many listed URLs *lines* would block (only a URL with a query can match them)."""
    rules = parse_robots(("User-agent: *\n" + "\n".join(lines) + "\n").encode())
    rows = db.execute("SELECT url FROM listed WHERE url LIKE '%?%'")
    return sum(not rules.can_fetch(url, "*") for (url,) in rows)


def parameter_figures(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Each query parameter's figures over the window (``f``, :func:`figures.open_window`)."""
    db.executescript(_SCHEMA)
    queried = db.execute(_QUERIED)  # read in batches, never whole: a million URLs may carry a query
    while batch := queried.fetchmany(10_000):
        db.executemany("INSERT INTO param VALUES (?, ?, ?)", ((n, v, url) for (url,) in batch for n, v in _pairs(url)))
    reasons: dict[str, dict[str, int]] = {}
    for name, reason, count in db.execute(_REASONS, {"not_published": NOT_PUBLISHED}):
        reasons.setdefault(name, {})[reason] = count
    figures = []
    for name, count, listed, fetches, values in db.execute(_NAMES).fetchmany(MAX_PARAMETERS):
        entry: dict[str, Any] = {
            "name": name, "urls": count, "values": values, "listed": listed, "excluded": reasons.get(name, {}),
            "fetches": fetches, "suggested": [],
        }  # fmt: skip
        if not listed and name.isprintable() and not any(c in name for c in "*$#\r\n"):
            lines = suggested_lines(name)
            if _blocks_listed(db, lines) == 0:
                entry["suggested"] = lines
        figures.append(entry)
    return figures
