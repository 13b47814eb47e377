"""What the coverage tables say, over the window of days ending at the last log line (pure
SQL over the tables of :mod:`crawler.coverage.published` and :mod:`crawler.coverage.tally`).

For each verified crawler: its fetches, the listed URLs it fetched and those it never did,
what it fetched that is not listed grouped by the crawl's reason (``not-met``: a URL the
crawl never met, an orphan or a dead URL still asked for; ``not-published``: one the crawl
listed that OUT's set does not hold) with their share of its fetches, the statuses of what
it fetched that the crawl never met and how many of those an earlier crawl met (the state
store's), the listed URLs it got anything but 200 for, its fetches per day and per section.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

from crawler.coverage.tally import DAY

__all__ = [
    "NOT_MET",
    "NOT_PUBLISHED",
    "crawler_figures",
    "day_name",
    "host_figures",
    "open_window",
    "refetch_delays",
    "section_coverage",
    "url_rows",
]

NOT_MET = "not-met"
NOT_PUBLISHED = "not-published"
#: The fetches of the window: a view over the counts from the first day on (``window_start``).
_WINDOW = """
CREATE TEMP TABLE IF NOT EXISTS window_start (since INTEGER NOT NULL, unmet TEXT NOT NULL);
DELETE FROM window_start;
CREATE TEMP VIEW IF NOT EXISTS f AS SELECT * FROM fetch WHERE day >= (SELECT since FROM window_start);
"""
_FETCHES = "SELECT crawler, SUM(n) FROM f GROUP BY 1 ORDER BY 2 DESC, 1"
_LISTED_FETCHED = "SELECT crawler, COUNT(DISTINCT url) FROM f JOIN listed USING (url) GROUP BY 1"
_NOT_LISTED = """
SELECT f.crawler, CASE WHEN met.url IS NULL THEN (SELECT unmet FROM window_start)
                       ELSE coalesce(met.reason, :not_published) END,
       COUNT(DISTINCT f.url), SUM(f.n)
FROM f LEFT JOIN listed USING (url) LEFT JOIN met USING (url)
WHERE listed.url IS NULL GROUP BY 1, 2 ORDER BY 4 DESC, 2
"""
#: Of the URLs the crawl never met, those an earlier crawl did (the state store's): dead or orphaned.
_EARLIER = """
SELECT f.crawler, COUNT(DISTINCT f.url), SUM(f.n), COUNT(DISTINCT CASE WHEN earlier.listed THEN f.url END)
FROM f JOIN earlier USING (url) GROUP BY 1
"""
_NOT_MET_STATUSES = """
SELECT f.crawler, f.status, SUM(f.n) FROM f LEFT JOIN listed USING (url) LEFT JOIN met USING (url)
WHERE listed.url IS NULL AND met.url IS NULL GROUP BY 1, 2 ORDER BY 3 DESC, 2
"""
#: 304 is the answer to a conditional request for an unchanged page: as good as a 200.
_LISTED_NOT_200 = """
SELECT crawler, COUNT(DISTINCT url) FROM f JOIN listed USING (url) WHERE status NOT IN (200, 304) GROUP BY 1
"""
_PER_DAY = "SELECT crawler, day, SUM(n) FROM f GROUP BY 1, 2 ORDER BY 2"
_SECTIONS = """
WITH s AS (SELECT section, COUNT(*) AS listed FROM listed GROUP BY 1),
     fetched AS (
         SELECT f.crawler, listed.section, COUNT(DISTINCT f.url) AS n FROM f JOIN listed USING (url) GROUP BY 1, 2
     )
SELECT c.crawler, s.section, s.listed, coalesce(fetched.n, 0)
FROM (SELECT DISTINCT crawler FROM f) AS c CROSS JOIN s
LEFT JOIN fetched ON fetched.crawler = c.crawler AND fetched.section = s.section ORDER BY 2
"""
_CHANGED = "SELECT COUNT(*) FROM listed WHERE lastmod IS NOT NULL AND lastmod <= :last"
_REFETCHED = """
SELECT refetch.crawler, refetch.first - listed.lastmod FROM refetch JOIN listed USING (url)
WHERE listed.lastmod <= :last ORDER BY 1, 2
"""
#: Each host's figures; a URL's origin is up to the first slash after ``http://`` or ``https://``
#: (the host has a character at least: the search from the 9th finds that slash for both).
_HOSTS = """
WITH l AS (SELECT substr(url, 1, instr(substr(url, 9), '/') + 8) AS origin, COUNT(*) AS n FROM listed GROUP BY 1),
     g AS (SELECT substr(f.url, 1, instr(substr(f.url, 9), '/') + 8) AS origin, f.crawler, SUM(f.n) AS fetches,
                  COUNT(DISTINCT listed.url) AS listed_fetched
           FROM f LEFT JOIN listed USING (url) GROUP BY 1, 2)
SELECT l.origin, l.n, g.crawler, g.fetches, g.listed_fetched FROM l LEFT JOIN g USING (origin) ORDER BY 1, 4 DESC
"""
_SECTION_COVERAGE = """
SELECT listed.section, COUNT(DISTINCT listed.url), COUNT(DISTINCT f.url) FROM listed LEFT JOIN f USING (url) GROUP BY 1
"""
_URLS = """
WITH g AS (SELECT url, crawler, status, SUM(n) AS n, MAX(last) AS last FROM f GROUP BY 1, 2, 3),
     u AS (SELECT url FROM listed UNION SELECT url FROM g)
SELECT u.url, listed.url IS NOT NULL, met.url IS NOT NULL, met.reason, g.crawler, g.status, g.n, g.last,
       e.last_seen, e.outcome, e.reason, e.listed
FROM u LEFT JOIN listed USING (url) LEFT JOIN met USING (url) LEFT JOIN g USING (url) LEFT JOIN earlier AS e USING (url)
ORDER BY u.url
"""


def day_name(day: int) -> str:
    return datetime.fromtimestamp(day * DAY, UTC).date().isoformat()


def open_window(db: sqlite3.Connection, since: int, unmet: str = NOT_MET) -> None:
    """The window of the queries below: the days from *since* (days since the epoch) on; *unmet*
    is the reason of a URL the crawl report does not hold (``not-met``; ``no-report`` without one)."""
    db.executescript(_WINDOW)
    db.execute("INSERT INTO window_start VALUES (?, ?)", (since, unmet))


def crawler_figures(db: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Each crawler's figures over the window (:func:`open_window`)."""
    (listed,) = db.execute("SELECT COUNT(*) FROM listed").fetchone()
    figures: dict[str, dict[str, Any]] = {}
    for crawler, fetches in db.execute(_FETCHES):
        figures[crawler] = {
            "fetches": fetches, "listed_fetched": 0, "listed_not_fetched": listed, "not_listed": {},
            "not_met_statuses": {}, "listed_not_200": 0, "per_day": {}, "sections": {},
            "not_met_earlier": {"urls": 0, "fetches": 0, "listed_before": 0},
        }  # fmt: skip
    for crawler, count in db.execute(_LISTED_FETCHED):
        figures[crawler]["listed_fetched"] = count
        figures[crawler]["listed_not_fetched"] = listed - count
    for crawler, reason, urls, count in db.execute(_NOT_LISTED, {"not_published": NOT_PUBLISHED}):
        share = round(100 * count / figures[crawler]["fetches"], 1)
        figures[crawler]["not_listed"][reason] = {"urls": urls, "fetches": count, "share": share}
    for crawler, urls, count, listed_before in db.execute(_EARLIER):
        figures[crawler]["not_met_earlier"] = {"urls": urls, "fetches": count, "listed_before": listed_before}
    for crawler, status, count in db.execute(_NOT_MET_STATUSES):
        figures[crawler]["not_met_statuses"][str(status)] = count
    for crawler, count in db.execute(_LISTED_NOT_200):
        figures[crawler]["listed_not_200"] = count
    for crawler, day, count in db.execute(_PER_DAY):
        figures[crawler]["per_day"][day_name(day)] = count
    for crawler, section, in_section, count in db.execute(_SECTIONS):
        figures[crawler]["sections"][section] = {"listed": in_section, "fetched": count}
    return figures


def refetch_delays(db: sqlite3.Connection, last: float) -> dict[str, dict[str, float | int | None]]:
    """For each crawler, of the listed URLs whose lastmod is at or before *last* (the last log
    line): how many it fetched at or after their lastmod, the median and 90th percentile hours
    from the change to that first fetch, and how many it has not fetched since they changed."""
    (changed,) = db.execute(_CHANGED, {"last": last}).fetchone()
    figures: dict[str, dict[str, float | int | None]] = {}
    for crawler, group in groupby(db.execute(_REFETCHED, {"last": last}), key=lambda row: row[0]):
        delays = [delay for _, delay in group]  # one per URL the crawler fetched again
        figures[crawler] = {
            "refetched": len(delays),
            "median_hours": round(delays[len(delays) // 2] / 3600, 1),
            "p90_hours": round(delays[min(len(delays) - 1, len(delays) * 9 // 10)] / 3600, 1),
            "not_refetched": changed - len(delays),
        }
    return figures


def host_figures(db: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Each host's listed URLs, and per crawler its fetches there and the listed URLs it fetched
    (a set of several hosts: the figures above add them up)."""
    hosts: dict[str, dict[str, Any]] = {}
    for origin, listed, crawler, fetches, fetched in db.execute(_HOSTS):
        host = hosts.setdefault(origin, {"listed": listed, "crawlers": {}})
        if crawler is not None:
            host["crawlers"][crawler] = {
                "fetches": fetches,
                "listed_fetched": fetched,
                "listed_not_fetched": listed - fetched,
            }
    return hosts


def section_coverage(db: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Each section's listed URLs, and how many of them any verified crawler fetched in the window."""
    return {section: (listed, fetched) for section, listed, fetched in db.execute(_SECTION_COVERAGE)}


def url_rows(db: sqlite3.Connection) -> Iterator[dict[str, Any]]:
    """Every URL listed or fetched by a verified crawler in the window, in URL order:
    ``{url, listed, reason, fetches: {crawler: n}, last_fetch, statuses: {status: n}, earlier}``
    (``earlier``: what the state store last knew of a URL this crawl never met, or ``None``)."""
    (unmet,) = db.execute("SELECT unmet FROM window_start").fetchone()
    rows = db.execute(_URLS)
    for url, group in groupby(rows, key=lambda row: row[0]):
        fetches: dict[str, int] = {}
        statuses: dict[str, int] = {}
        last: float | None = None
        is_listed, reason, earlier = False, None, None
        for _, listed, met, why, crawler, status, count, when, *known in group:
            is_listed = bool(listed)
            if known[0] is not None:  # last_seen: the state store knew the URL
                earlier = {"last_seen": known[0], "outcome": known[1], "reason": known[2], "listed": bool(known[3])}
            reason = None if listed else (why or NOT_PUBLISHED) if met else unmet
            if crawler is not None:
                fetches[crawler] = fetches.get(crawler, 0) + count
                statuses[str(status)] = statuses.get(str(status), 0) + count
                last = when if last is None or when > last else last
        yield {
            "url": url,
            "listed": is_listed,
            "reason": reason,
            "fetches": fetches,
            "last_fetch": None if last is None else datetime.fromtimestamp(last, UTC).isoformat(timespec="seconds"),
            "statuses": statuses,
            "earlier": earlier,
        }
