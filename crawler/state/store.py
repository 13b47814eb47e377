"""The state store: what the crawler knows about each URL across runs (SPEC S6).

One SQLite file holds, per URL: when it was first and last seen, when its
content last changed and the listing digest that says so, the lastmod
written, the HTTP validators for conditional requests, the last facts the
crawl reported (replayed on a 304 and when resuming), its status/outcome
history and the shard it lives in. The schema (:mod:`crawler.state.schema`)
is migrated in place when a store is opened; a lock
(:mod:`crawler.state.lock`) keeps a second run off the same store. Only the
run state (:class:`crawler.run.state.RunState`) uses this class
during a crawl.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from crawler.records import decode, encode
from crawler.state.lock import StateLocked, StoreLock
from crawler.state.schema import migrate
from crawler.state.shard_columns import ShardColumns

__all__ = ["UNKNOWN", "Listing", "PageState", "StateLocked", "StateStore", "Unknown"]

logger = logging.getLogger(__name__)


class Unknown:
    """The type of :data:`UNKNOWN`: a URL's stored state not looked up yet."""


UNKNOWN = Unknown()


@dataclass(frozen=True, slots=True)
class Listing:
    """What a listed URL's lastmod rests on; *changed* when the URL is new, back
    in the set, or its content changed in this run (for deltas and IndexNow)."""

    digest: str
    lastmod: str | None
    last_changed: str | None
    changed: bool


def _listing_columns(run: int, listing: Listing) -> dict[str, object]:
    """The page columns a listing sets; the changed run only moves on a change."""
    columns: dict[str, object] = {
        "fingerprint": listing.digest,  # the column's name since schema 1
        "lastmod": listing.lastmod,
        "last_changed": listing.last_changed,
        "listed_run": run,
    }
    if listing.changed:
        columns["changed_run"] = run
    return columns


def _decoded(url: str, blob: bytes) -> dict[str, Any] | None:
    """Stored facts, or ``None`` (with a warning) when the record does not decode."""
    try:
        facts = decode(zlib.decompress(blob))
    except (zlib.error, ValueError, TypeError) as error:
        logger.warning("State store: the stored facts of %s do not decode (%s); it is fetched again", url, error)
        return None
    return facts if isinstance(facts, dict) else None


@lru_cache(maxsize=64)
def _upsert(names: tuple[str, ...]) -> str:
    """One statement whether the URL is new or known; columns left out keep their stored value."""
    return (
        f"INSERT INTO page (url, first_seen, {', '.join(names)}) VALUES (?, ?{', ?' * len(names)})"  # noqa: S608
        f" ON CONFLICT (url) DO UPDATE SET {', '.join(f'{name} = excluded.{name}' for name in names)}"
    )


@dataclass(slots=True)
class PageState:
    url: str
    first_seen: str
    last_seen: str
    last_run: int
    status: int | None
    outcome: str
    reason: str | None
    listing_digest: str | None  # column ``fingerprint``
    last_changed: str | None
    lastmod: str | None
    etag: str | None
    last_modified: str | None
    listed_run: int | None
    shard_group: str | None
    shard: int | None


_PAGE_COLUMNS = (
    "url, first_seen, last_seen, last_run, status, outcome, reason, fingerprint, last_changed, lastmod, "
    "etag, last_modified, listed_run, shard_group, shard"
)


class StateStore(ShardColumns):
    """Open (creating or migrating) the store at *path* and lock it.

    Raises :class:`StateLocked` when another process holds it; the lock is
    a ``flock`` that the kernel releases when a process dies, even by SIGKILL.
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = StoreLock(path)
        self.db = sqlite3.connect(path, isolation_level=None)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            migrate(self.db, path)
        except BaseException:
            self.db.close()
            self._lock.release()
            raise
        self._pending = 0
        self._committed = time.monotonic()
        self.db.execute("BEGIN")

    # -- transactions ---------------------------------------------------------

    def checkpoint(self, every: int = 1000, seconds: float = 1.0) -> None:
        """Commit every *every* writes or *seconds*, so a crash loses little."""
        self._pending += 1
        if self._pending >= every or time.monotonic() - self._committed > seconds:
            self.commit()

    def commit(self) -> None:
        self.db.execute("COMMIT")
        self.db.execute("BEGIN")
        self._pending = 0
        self._committed = time.monotonic()

    def close(self) -> None:
        if self.db.in_transaction:
            self.db.execute("COMMIT")
        self.db.close()
        self._lock.release()

    # -- runs -------------------------------------------------------------------

    def begin_run(self, now: str, resume: bool) -> tuple[int, bool]:
        """(run id, resumed): the interrupted last run when *resume*, else a new one."""
        row = self.db.execute("SELECT id, status FROM run ORDER BY id DESC LIMIT 1").fetchone()
        if resume and row and row[1] == "running":
            return int(row[0]), True
        if row and row[1] == "running":
            self.db.execute("UPDATE run SET status = 'abandoned' WHERE id = ?", (row[0],))
        cursor = self.db.execute("INSERT INTO run (started) VALUES (?)", (now,))
        self.commit()
        return int(cursor.lastrowid or 0), False

    def interrupted(self) -> bool:
        """Whether the last run was left open (stopped before it finished): what ``--resume`` continues."""
        row = self.db.execute("SELECT status FROM run ORDER BY id DESC LIMIT 1").fetchone()
        return bool(row and row[0] == "running")

    def finish_run(self, run: int, status: str, now: str) -> None:
        self.db.execute("UPDATE run SET finished = ?, status = ? WHERE id = ?", (now, status, run))
        self.commit()

    def previous_run(self, run: int) -> int | None:
        """The last run before *run* that finished and published."""
        row = self.db.execute(
            "SELECT id FROM run WHERE id < ? AND status = 'published' ORDER BY id DESC LIMIT 1", (run,)
        ).fetchone()
        return int(row[0]) if row else None

    def last_published_run(self) -> int | None:
        row = self.db.execute("SELECT max(id) FROM run WHERE status = 'published'").fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- pages ------------------------------------------------------------------

    def get(self, url: str) -> PageState | None:
        row = self.db.execute(f"SELECT {_PAGE_COLUMNS} FROM page WHERE url = ?", (url,)).fetchone()  # noqa: S608
        return PageState(*row) if row else None

    def facts(self, url: str) -> dict[str, Any] | None:
        """The facts last reported for *url* (to replay a 304 or a resumed run)."""
        row = self.db.execute("SELECT facts FROM page_facts WHERE url = ?", (url,)).fetchone()
        return _decoded(url, row[0]) if row else None

    def record(
        self,
        run: int,
        now: str,
        url: str,
        *,
        status: int | None,
        outcome: str,
        reason: str | None,
        facts: dict[str, Any] | None,
        validators: tuple[str | None, str | None] | None = None,
        listing: Listing | None = None,
        previous: PageState | Unknown | None = UNKNOWN,
    ) -> None:
        """Record this run's outcome for *url* (history kept on change).

        *facts* ``None`` keeps the stored ones (a 304 changes nothing);
        *validators* ``None`` keeps the stored ETag and Last-Modified;
        *listing* sets what a listed URL's lastmod rests on. A caller that
        has just read the URL's :class:`PageState` passes it as *previous*,
        which spares a lookup: an unchanged page then costs one statement.
        """
        if isinstance(previous, Unknown):
            previous = self.get(url)
        if previous is None or (previous.status, previous.outcome, previous.reason) != (status, outcome, reason):
            self.db.execute("INSERT INTO history VALUES (?, ?, ?, ?, ?)", (url, run, status, outcome, reason))
        columns: dict[str, object] = {"last_seen": now, "last_run": run, "status": status, "outcome": outcome}
        columns["reason"] = reason
        if validators is not None:
            columns["etag"], columns["last_modified"] = validators
        if listing is not None:
            columns.update(_listing_columns(run, listing))
        self.db.execute(_upsert(tuple(columns)), (url, now, *columns.values()))
        if facts is not None:
            blob = zlib.compress(encode(facts), 1)
            self.db.execute("INSERT OR REPLACE INTO page_facts VALUES (?, ?)", (url, blob))
        self.checkpoint()

    def update_listing(self, run: int, url: str, listing: Listing) -> None:
        """Bring a listed URL's lastmod up to date without a new outcome
        (a resumed run replaying what it recorded before the interruption)."""
        columns = _listing_columns(run, listing)
        assignments = ", ".join(f"{name} = ?" for name in columns)
        self.db.execute(f"UPDATE page SET {assignments} WHERE url = ?", (*columns.values(), url))  # noqa: S608

    def changed_since(self, run: int, listed_by: int) -> set[str]:
        """URLs listed by *listed_by* that were added or changed after *run*."""
        rows = self.db.execute("SELECT url FROM page WHERE changed_run > ? AND listed_run = ?", (run, listed_by))
        return {str(row[0]) for row in rows}

    def changed_in(self, run: int) -> list[str]:
        """URLs that *run* listed for the first time or with new content."""
        rows = self.db.execute("SELECT url FROM page WHERE changed_run = ? AND listed_run = ? ORDER BY url", (run, run))
        return [str(row[0]) for row in rows]

    def carried(self, run: int, previous: int) -> Iterator[tuple[str, str | None, dict[str, Any], str]]:
        """URLs that *previous* listed and *run* did not touch, as
        (url, lastmod, facts, shard group): what an update keeps. Read only;
        :meth:`mark_carried` records them as listed by *run*."""
        rows = self.db.execute(
            "SELECT url, lastmod, facts, shard_group FROM page LEFT JOIN page_facts USING (url)"
            " WHERE listed_run = ? AND outcome = 'listed' AND last_run != ?",
            (previous, run),
        )
        for url, lastmod, blob, group in rows:
            yield str(url), lastmod, (_decoded(url, blob) or {}) if blob else {}, str(group or "")

    def keep_listed(self, run: int, previous: int, prefix: str) -> int:
        """The URLs under *prefix* (an origin's root) that *previous* listed (or a later run that did
        not publish) stay listed by *run*, as they were: this run's outcome for them is forgotten
        (their host was out of reach, which says nothing of its pages). Returns how many."""
        chosen = (previous, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1))  # the URLs from prefix on, below the next
        self.db.execute(
            "DELETE FROM history WHERE run = ? AND url IN"
            " (SELECT url FROM page WHERE listed_run >= ? AND url >= ? AND url < ?)",
            (run, *chosen),
        )
        cursor = self.db.execute(
            "UPDATE page SET listed_run = ?, last_run = ?, status = 200, outcome = 'listed', reason = NULL"
            " WHERE listed_run >= ? AND url >= ? AND url < ?",
            (run, run, *chosen),
        )
        return int(cursor.rowcount)

    def mark_carried(self, run: int, previous: int) -> int:
        """Count the URLs :meth:`carried` gives as listed by *run* too; return how many."""
        cursor = self.db.execute(
            "UPDATE page SET listed_run = ?, last_run = ?"
            " WHERE listed_run = ? AND outcome = 'listed' AND last_run != ?",
            (run, run, previous, run),
        )
        return int(cursor.rowcount)

    def state_in(self, url: str, run: int) -> tuple[int | None, str, str | None] | None:
        """(status, outcome, reason) *url* had after *run* (history keeps changes only), or ``None``
        when it was not seen by then."""
        row = self.db.execute(
            "SELECT status, outcome, reason FROM history WHERE url = ? AND run <= ? ORDER BY run DESC LIMIT 1",
            (url, run),
        ).fetchone()
        return (row[0], str(row[1]), row[2]) if row else None

    def processed(self, run: int) -> set[str]:
        """URLs whose outcome this run already recorded (for resuming)."""
        return {str(row[0]) for row in self.db.execute("SELECT url FROM page WHERE last_run = ?", (run,))}

    def history(self, url: str) -> list[tuple[int, int | None, str, str | None]]:
        rows = self.db.execute("SELECT run, status, outcome, reason FROM history WHERE url = ? ORDER BY run", (url,))
        return [(int(r[0]), r[1], str(r[2]), r[3]) for r in rows]

    def removed_since(self, run: int, previous: int) -> Iterator[tuple[str, int | None, str, str | None]]:
        """URLs listed by *previous* that *run* does not list: (url, status, outcome, reason)."""
        rows = self.db.execute(
            "SELECT url, status, outcome, reason, last_run FROM page WHERE listed_run = ? ORDER BY url", (previous,)
        )
        for url, status, outcome, reason, last_run in rows:
            if last_run != run:
                yield str(url), None, "gone", "not linked any more"
            else:
                yield str(url), status, str(outcome), reason
