"""Verified crawler fetches counted as the logs stream by (pure): each fetch a row handed to a
sink in batches (:func:`store_rows` counts them into SQLite: one row per URL, crawler, day and
status, so memory stays flat however long the logs), the rest counted here. Tallies of parts
of the logs (:mod:`crawler.coverage.parallel`) add up with :meth:`Tally.merge`.

A request counts for a crawler when its user agent names one (:func:`crawler_of`) and its
address is in that crawler's published ranges; a crawler agent from any other address is
spoofed, counted by crawler and day, never as a fetch.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from crawler.coverage.crawlers import CrawlerRanges, crawler_of
from crawler.coverage.dnscheck import DnsCheck
from crawler.coverage.logformats import LogRequest
from crawler.coverage.published import url_of

__all__ = ["DAY", "FETCH_SCHEMA", "FetchStore", "Row", "Tally"]

DAY = 86_400
FETCH_SCHEMA = """
CREATE TABLE fetch (
    url TEXT NOT NULL, crawler TEXT NOT NULL, day INTEGER NOT NULL, status INTEGER NOT NULL,
    n INTEGER NOT NULL, last REAL NOT NULL, PRIMARY KEY (url, crawler, day, status)
) WITHOUT ROWID;
CREATE TABLE refetch (url TEXT NOT NULL, crawler TEXT NOT NULL, first REAL NOT NULL, PRIMARY KEY (url, crawler))
    WITHOUT ROWID;
"""
#: Fetches as they come, folded into ``fetch`` and ``refetch`` a million at a time: sorted bulk
#: upserts cost a fraction of one upsert per fetch into a growing tree.
_STAGING = "CREATE TABLE IF NOT EXISTS staging (url TEXT, crawler TEXT, day INTEGER, status INTEGER, t REAL)"
_FOLD = """
INSERT INTO fetch SELECT url, crawler, day, status, COUNT(*), MAX(t) FROM staging WHERE true GROUP BY 1, 2, 3, 4
ON CONFLICT (url, crawler, day, status) DO UPDATE SET n = n + excluded.n, last = max(last, excluded.last);
INSERT INTO refetch SELECT staging.url, staging.crawler, MIN(staging.t) FROM staging JOIN listed USING (url)
WHERE listed.lastmod <= staging.t GROUP BY 1, 2
ON CONFLICT (url, crawler) DO UPDATE SET first = min(first, excluded.first);
DELETE FROM staging;
"""
_FOLD_EVERY = 1_000_000
_BATCH = 10_000
#: A verified fetch: URL, crawler, day (since the epoch), status, time.
Row = tuple[str, str, int, int, float]
_KEPT_ADDRESSES = 100_000


@dataclass(slots=True)
class Tally:
    sink: Callable[[list[Row]], None]  # takes each batch of fetches
    ranges: CrawlerRanges
    origins: dict[str, str]  # host name -> origin (scheme://host[:port]/) of each set
    default_origin: str  # the origin of a log line that names no host
    last: float | None = None  # the time of the latest request of the logs
    first: float | None = None
    requests: int = 0
    no_agent: int = 0  # requests whose line names no user agent (the common format)
    elsewhere: int = 0  # verified fetches of another host's URLs (a shared log), or of no path
    spoofed: Counter[tuple[str, int]] = field(default_factory=Counter)  # (crawler, day) -> requests
    unverifiable: Counter[str] = field(default_factory=Counter)  # crawlers the ranges file has none of
    dns: DnsCheck | None = None  # --verify-dns
    _rows: list[Row] = field(default_factory=list)
    _vouched: dict[tuple[str, str], bool] = field(default_factory=dict)

    def add(self, request: LogRequest) -> None:
        when = request.time
        self.requests += 1
        self.last = when if self.last is None or when > self.last else self.last
        self.first = when if self.first is None or when < self.first else self.first
        if not request.agent:
            self.no_agent += 1
            return
        crawler = crawler_of(request.agent)
        if crawler is None:
            return
        day = int(when // DAY)
        verdict = self._verdict(crawler, request.address)
        if verdict is None:  # nothing to tell by: neither a fetch nor a forgery
            self.unverifiable[crawler] += 1
            return
        if not verdict:
            self.spoofed[crawler, day] += 1
            return
        url = url_of(request.target, request.host, self.origins, self.default_origin, request.server)
        if url is None:
            self.elsewhere += 1
            return
        self._rows.append((url, crawler, day, request.status, when))
        if len(self._rows) >= _BATCH:
            self.flush()

    def _verdict(self, crawler: str, address: str) -> bool | None:
        """The published ranges first; DNS (``--verify-dns``) for an address they do not hold,
        or for an operator that publishes none. ``None`` when neither can tell."""
        ranged = crawler in self.ranges.sources
        if ranged and self._in_ranges(crawler, address):
            return True
        by_dns = self.dns.vouches(crawler, address) if self.dns is not None and self.dns.knows(crawler) else None
        if by_dns is not None:
            return by_dns
        return False if ranged else None

    def _in_ranges(self, crawler: str, address: str) -> bool:
        """The ranges' answer, kept per address (parsing an address costs more than a line's parse)."""
        key = (crawler, address)
        known = self._vouched.get(key)
        if known is None:
            if len(self._vouched) >= _KEPT_ADDRESSES:  # a flood of forged addresses: start again
                self._vouched.clear()
            known = self._vouched[key] = self.ranges.vouches(crawler, address)
        return known

    def flush(self) -> None:
        if self._rows:
            self.sink(self._rows)
            self._rows = []

    def merge(self, part: Tally) -> None:
        """Add the counts of *part*, a tally of another part of the logs (its rows went to its sink)."""
        for when in (part.first, part.last):
            if when is not None:
                self.last = when if self.last is None or when > self.last else self.last
                self.first = when if self.first is None or when < self.first else self.first
        self.requests += part.requests
        self.no_agent += part.no_agent
        self.elsewhere += part.elsewhere
        self.spoofed.update(part.spoofed)
        self.unverifiable.update(part.unverifiable)


class FetchStore:
    """The fetches counted into ``fetch`` (one row per URL, crawler, day and status) and
    ``refetch`` (each listed URL's first fetch at or after its lastmod: how long a change waited
    for each crawler). :meth:`fold` once the last rows are in."""

    def __init__(self, db: sqlite3.Connection, fold_every: int = _FOLD_EVERY) -> None:
        self.db = db
        self.staged = 0
        self.fold_every = fold_every
        db.execute(_STAGING)

    def add(self, rows: list[Row]) -> None:
        self.db.executemany("INSERT INTO staging VALUES (?, ?, ?, ?, ?)", rows)
        self.staged += len(rows)
        if self.staged >= self.fold_every:
            self.fold()

    def fold(self) -> None:
        self.db.executescript(_FOLD)
        self.db.commit()
        self.staged = 0
