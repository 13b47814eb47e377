"""The state store's schema, versioned and migrated in place (SPEC S6).

Each migration is the SQL that takes a store from the version before it to
its own; ``PRAGMA user_version`` records where a file stands. The column
``page.fingerprint`` holds the listing digest (its name dates from schema 1).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from crawler.failures import ConfigError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate"]

SCHEMA_VERSION = 4
_MIN_SQLITE = (3, 24)
logger = logging.getLogger(__name__)
MIGRATIONS: dict[int, str] = {
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


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the store open on *db* to :data:`SCHEMA_VERSION`, one transaction per step."""
    if sqlite3.sqlite_version_info < _MIN_SQLITE:  # upserts (INSERT ... ON CONFLICT)
        raise ConfigError(f"the state store needs SQLite 3.24 or newer; this Python has {sqlite3.sqlite_version}")
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise ConfigError(f"state store {path} has schema {version}, newer than this program ({SCHEMA_VERSION})")
    for target in range(version + 1, SCHEMA_VERSION + 1):
        with db:
            db.execute("BEGIN")
            for statement in MIGRATIONS[target].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {target}")
    if 0 < version < 3:
        try:
            db.execute("VACUUM")  # give back the space the old page table wasted, once
        except sqlite3.OperationalError as error:  # e.g. no room for the copy: the store is fine as it is
            logger.warning("State store %s migrated but not compacted: %s", path, error)
