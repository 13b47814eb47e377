"""The state store: what the crawler knows about each URL across runs (SPEC S6).

One SQLite file holds, per URL: when it was first and last seen, when its
content last changed and the fingerprint that says so, the lastmod written,
the HTTP validators for conditional requests, the last facts the crawl
reported (replayed on a 304 and when resuming), its status/outcome history
and the shard it lives in. The schema is versioned and migrated in place;
a lock file keeps a second run off the same store.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA_VERSION", "UNKNOWN", "Listing", "PageState", "StateLocked", "StateStore"]

SCHEMA_VERSION = 4
_MIN_SQLITE = (3, 24)
logger = logging.getLogger(__name__)
_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE run (
        id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL DEFAULT 'running'
    );
    CREATE TABLE page (
        url TEXT PRIMARY KEY,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        last_run INTEGER NOT NULL,
        status INTEGER,
        outcome TEXT NOT NULL,
        reason TEXT,
        fingerprint TEXT,
        last_changed TEXT,
        lastmod TEXT,
        etag TEXT,
        last_modified TEXT,
        facts BLOB,
        listed_run INTEGER,
        shard_group TEXT,
        shard INTEGER,
        position INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX page_last_run ON page (last_run);
    CREATE INDEX page_shard ON page (shard_group, shard, position);
    CREATE TABLE history (url TEXT NOT NULL, run INTEGER NOT NULL, status INTEGER, outcome TEXT, reason TEXT);
    CREATE INDEX history_url ON history (url);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
    """,
    # 2: the run in which a URL was added or its content changed (for IndexNow and deltas).
    2: """
    ALTER TABLE page ADD COLUMN changed_run INTEGER;
    CREATE INDEX page_changed_run ON page (changed_run);
    """,
    # 3: the facts move to a table of their own. A WITHOUT ROWID row keeps
    # only about a quarter of a page inline, so each ~1.5 KB facts blob took
    # an overflow page of its own: the store was 60% empty space and every
    # lookup touched more pages than it needed.
    3: """
    CREATE TABLE page_facts (url TEXT PRIMARY KEY, facts BLOB NOT NULL);
    INSERT INTO page_facts SELECT url, facts FROM page WHERE facts IS NOT NULL;
    CREATE TABLE page_v3 (
        url TEXT PRIMARY KEY,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        last_run INTEGER NOT NULL,
        status INTEGER,
        outcome TEXT NOT NULL,
        reason TEXT,
        fingerprint TEXT,
        last_changed TEXT,
        lastmod TEXT,
        etag TEXT,
        last_modified TEXT,
        listed_run INTEGER,
        shard_group TEXT,
        shard INTEGER,
        position INTEGER,
        changed_run INTEGER
    ) WITHOUT ROWID;
    INSERT INTO page_v3 SELECT
        url, first_seen, last_seen, last_run, status, outcome, reason, fingerprint, last_changed, lastmod,
        etag, last_modified, listed_run, shard_group, shard, position, changed_run
    FROM page;
    DROP TABLE page;
    ALTER TABLE page_v3 RENAME TO page;
    CREATE INDEX page_last_run ON page (last_run);
    CREATE INDEX page_shard ON page (shard_group, shard, position);
    CREATE INDEX page_changed_run ON page (changed_run);
    """,
    # 4: no index on the last run. Every run rewrites each URL's last_run, so
    # the index cost two more B-tree pages written per URL, to speed up only
    # the one scan a resumed run makes.
    4: """
    DROP INDEX page_last_run;
    """,
}


class Unknown:
    """The type of :data:`UNKNOWN`: a URL's stored state not looked up yet."""


UNKNOWN = Unknown()


@dataclass(frozen=True, slots=True)
class Listing:
    """What a listed URL's lastmod rests on; *changed* when the URL is new
    or its content changed in this run (for deltas and IndexNow)."""

    fingerprint: str
    lastmod: str | None
    last_changed: str | None
    changed: bool


def _listing_columns(run: int, listing: Listing) -> dict[str, object]:
    """The page columns a listing sets; the changed run only moves on a change."""
    columns: dict[str, object] = {
        "fingerprint": listing.fingerprint,
        "lastmod": listing.lastmod,
        "last_changed": listing.last_changed,
        "listed_run": run,
    }
    if listing.changed:
        columns["changed_run"] = run
    return columns


@lru_cache(maxsize=64)
def _upsert(names: tuple[str, ...]) -> str:
    """One statement whether the URL is new or known; columns left out keep their stored value."""
    return (
        f"INSERT INTO page (url, first_seen, {', '.join(names)}) VALUES (?, ?{', ?' * len(names)})"  # noqa: S608
        f" ON CONFLICT (url) DO UPDATE SET {', '.join(f'{name} = excluded.{name}' for name in names)}"
    )


class StateLocked(Exception):
    """Another run holds the state store."""


@dataclass(slots=True)
class PageState:
    url: str
    first_seen: str
    last_seen: str
    last_run: int
    status: int | None
    outcome: str
    reason: str | None
    fingerprint: str | None
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


class StateStore:
    """Open (creating or migrating) the store at *path* and lock it.

    Raises :class:`StateLocked` when another process holds it; the lock is
    a ``flock`` that the kernel releases when a process dies, even by SIGKILL.
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_file = open(path.with_name(path.name + ".lock"), "a+")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.seek(0)
            holder = self._lock_file.read().strip() or "another process"
            self._lock_file.close()
            raise StateLocked(f"state store {path} is in use by {holder}; wait for that run to end") from None
        self._lock_file.seek(0)
        self._lock_file.truncate()
        self._lock_file.write(f"pid {os.getpid()}\n")
        self._lock_file.flush()
        self.db = sqlite3.connect(path, isolation_level=None)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except BaseException:
            self.db.close()
            self._lock_file.close()  # closing the file releases the lock
            raise
        self._pending = 0
        self._committed = time.monotonic()
        self.db.execute("BEGIN")

    def _migrate(self) -> None:
        if sqlite3.sqlite_version_info < _MIN_SQLITE:  # upserts (INSERT ... ON CONFLICT)
            raise ValueError(f"the state store needs SQLite 3.24 or newer; this Python has {sqlite3.sqlite_version}")
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"state store {self.path} has schema {version}, newer than this program ({SCHEMA_VERSION})"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self.db:
                self.db.execute("BEGIN")
                for statement in _MIGRATIONS[target].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {target}")
        if 0 < version < 3:
            try:
                self.db.execute("VACUUM")  # give back the space the old page table wasted, once
            except sqlite3.OperationalError as error:  # e.g. no room for the copy: the store is fine as it is
                logger.warning("State store %s migrated but not compacted: %s", self.path, error)

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
        fcntl.flock(self._lock_file, fcntl.LOCK_UN)
        self._lock_file.close()

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
        return json.loads(zlib.decompress(row[0])) if row else None

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
            blob = zlib.compress(json.dumps(facts, separators=(",", ":")).encode(), 1)
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

    def carry_forward(self, run: int, previous: int) -> Iterator[tuple[str, str | None, dict[str, Any], str]]:
        """URLs that *previous* listed and *run* did not touch, as
        (url, lastmod, facts, shard group); once consumed, they count as
        listed by *run* too (an update that fetched only some URLs)."""
        rows = self.db.execute(
            "SELECT url, lastmod, facts, shard_group FROM page LEFT JOIN page_facts USING (url)"
            " WHERE listed_run = ? AND outcome = 'listed' AND last_run != ?",
            (previous, run),
        )
        for url, lastmod, blob, group in rows:
            yield str(url), lastmod, json.loads(zlib.decompress(blob)) if blob else {}, str(group or "")
        self.db.execute(
            "UPDATE page SET listed_run = ?, last_run = ?"
            " WHERE listed_run = ? AND outcome = 'listed' AND last_run != ?",
            (run, run, previous, run),
        )

    def processed(self, run: int) -> set[str]:
        """URLs whose outcome this run already recorded (for resuming)."""
        return {str(row[0]) for row in self.db.execute("SELECT url FROM page WHERE last_run = ?", (run,))}

    def history(self, url: str) -> list[tuple[int, int | None, str, str | None]]:
        rows = self.db.execute("SELECT run, status, outcome, reason FROM history WHERE url = ? ORDER BY run", (url,))
        return [(int(r[0]), r[1], str(r[2]), r[3]) for r in rows]

    # -- shards -------------------------------------------------------------------

    def shard_assigner(self, max_urls: int) -> Callable[[str, str], tuple[int, int]]:
        """A function giving a listed URL its (shard, position): kept if it
        already has one in its group, else the end of the group's open shard,
        or a new shard once that one holds *max_urls*."""
        open_shards: dict[str, list[int]] = {}  # group -> [shard, count, next position]

        def place(url: str, group: str) -> tuple[int, int]:
            row = self.db.execute("SELECT shard_group, shard, position FROM page WHERE url = ?", (url,)).fetchone()
            if row and row[0] == group and row[1] is not None:
                return int(row[1]), int(row[2])
            if group not in open_shards:
                top = self.db.execute("SELECT max(shard) FROM page WHERE shard_group = ?", (group,)).fetchone()[0]
                if top is None:
                    open_shards[group] = [1, 0, 0]
                else:
                    count, last = self.db.execute(
                        "SELECT sum(outcome = 'listed'), max(position) FROM page WHERE shard_group = ? AND shard = ?",
                        (group, top),
                    ).fetchone()
                    open_shards[group] = [int(top), int(count or 0), int(last or 0) + 1]
            current = open_shards[group]
            if current[1] >= max_urls:
                current[:] = [current[0] + 1, 0, 0]
            shard, position = current[0], current[2]
            current[1] += 1
            current[2] += 1
            self.db.execute(
                "UPDATE page SET shard_group = ?, shard = ?, position = ? WHERE url = ?", (group, shard, position, url)
            )
            return shard, position

        return place

    def move_to_new_shard(self, urls: list[str], group: str) -> int:
        """Put *urls* into a fresh shard of *group* (their shard outgrew its bytes)."""
        top = self.db.execute("SELECT max(shard) FROM page WHERE shard_group = ?", (group,)).fetchone()[0]
        shard = int(top or 0) + 1
        self.db.executemany(
            "UPDATE page SET shard = ?, position = ? WHERE url = ?",
            [(shard, position, url) for position, url in enumerate(urls)],
        )
        return shard

    def reset_shards(self) -> None:
        """Forget every shard assignment (compaction: the next export packs densely)."""
        self.db.execute("UPDATE page SET shard_group = NULL, shard = NULL, position = NULL")

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
