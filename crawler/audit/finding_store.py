"""The audit's findings, kept in the record's SQLite file while the report is
built (pure).

A site of a million URLs can have a finding per page (every page too deep,
every page missing from the site's sitemaps): held as Python objects, and
again as dictionaries and JSON while the report is written, they were most
of a big audit's memory. Here they live in a temporary table, in the order
found, and are read back kind by kind, URL by URL or one by one.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from crawler.audit.findings import Finding, Kind

__all__ = ["FindingStore"]

_SETUP = """
DROP TABLE IF EXISTS temp.finding;
CREATE TEMP TABLE finding (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, url TEXT NOT NULL, public TEXT NOT NULL, detail TEXT NOT NULL,
    related TEXT, grouped TEXT, change TEXT
);
CREATE INDEX temp.finding_by_url ON finding (url);
CREATE INDEX temp.finding_by_key ON finding (kind, public);
"""
_COLUMNS = "seq, kind, url, detail, related, grouped, change"
_BATCH = 1000


def batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """*items* in lists of *size* (the last shorter); ``itertools.batched`` is Python 3.12's."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


class FindingStore:
    """Findings in the order added; *public* gives a URL's production form (the key ``--compare`` matches on)."""

    def __init__(self, db: sqlite3.Connection, public: Callable[[str], str] = lambda url: url):
        self.db = db
        self.public = public
        db.executescript(_SETUP)

    def add(self, findings: Iterable[Finding]) -> None:
        for batch in batched(findings, _BATCH):
            self.db.executemany(
                f"INSERT INTO finding ({_COLUMNS.replace('seq', 'public')}) VALUES (?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
                [(self.public(f.url), f.kind.value, f.url, f.detail, *_encoded(f), f.change) for f in batch],
            )

    def _read(self, where: str = "1", params: tuple[Any, ...] = (), limit: int = -1) -> Iterator[Finding]:
        query = f"SELECT {_COLUMNS} FROM finding WHERE {where} ORDER BY seq LIMIT ?"  # noqa: S608 - our clauses
        for seq, kind, url, detail, related, grouped, change in self.db.execute(query, (*params, limit)):
            yield Finding(
                Kind(kind),
                url,
                detail,
                json.loads(related) if related else [],
                json.loads(grouped) if grouped else {},
                change,
                seq,
            )

    def __iter__(self) -> Iterator[Finding]:
        return self._read()

    def of_kind(self, kind: Kind, limit: int = -1) -> Iterator[Finding]:
        return self._read("kind = ?", (kind.value,), limit)

    def of_key(self, kind: str, public: str) -> list[Finding]:
        """The findings of *kind* on the URL whose production form is *public*."""
        return list(self._read("kind = ? AND public = ?", (kind, public)))

    def unmarked(self) -> Iterator[Finding]:
        return self._read("change IS NULL")

    def kinds_of(self, url: str) -> list[str]:
        """The kinds found on *url*, each once, in the order found."""
        query = "SELECT kind FROM finding WHERE url = ? GROUP BY kind ORDER BY MIN(seq)"
        return [kind for (kind,) in self.db.execute(query, (url,))]

    def update(self, finding: Finding) -> None:
        """Write back what grouping or ``--compare`` changed (detail, related, grouped, change)."""
        self.db.execute(
            "UPDATE finding SET detail = ?, related = ?, grouped = ?, change = ? WHERE seq = ?",
            (finding.detail, *_encoded(finding), finding.change, finding.seq),
        )

    def mark(self, seqs: Iterable[int | None], change: str) -> None:
        for batch in batched(seqs, _BATCH):
            self.db.executemany("UPDATE finding SET change = ? WHERE seq = ?", [(change, seq) for seq in batch])

    def remove(self, seqs: Iterable[int | None]) -> None:
        for batch in batched(seqs, _BATCH):
            self.db.executemany("DELETE FROM finding WHERE seq = ?", [(seq,) for seq in batch])

    def counts(self) -> Counter[str]:
        return Counter(dict(self.db.execute("SELECT kind, COUNT(*) FROM finding GROUP BY kind")))

    def changes(self) -> Counter[str]:
        return Counter(dict(self.db.execute("SELECT change, COUNT(*) FROM finding GROUP BY change")))

    def kinds_marked(self, change: str) -> set[str]:
        return {kind for (kind,) in self.db.execute("SELECT DISTINCT kind FROM finding WHERE change = ?", (change,))}

    def heads(self) -> list[Finding]:
        """The staging blockers' findings (a few), with what they group."""
        return list(self.of_kind(Kind.STAGING_BLOCKER))

    def __len__(self) -> int:
        (count,) = self.db.execute("SELECT COUNT(*) FROM finding").fetchone()
        return int(count)


def _encoded(finding: Finding) -> tuple[str | None, str | None]:
    related = json.dumps(finding.related, ensure_ascii=False) if finding.related else None
    grouped = json.dumps(finding.grouped, ensure_ascii=False) if finding.grouped else None
    return related, grouped
