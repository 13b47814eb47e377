"""The shard columns of the state store's page table: which shard of which group each URL
lives in, and at which position (SPEC S6: stable shards, so an unchanged shard's file is never
rewritten). :class:`crawler.state.store.StateStore` has them; the placer
(:mod:`crawler.state.placement`) decides, these only read and write.
"""

from __future__ import annotations

import sqlite3

__all__ = ["ShardColumns"]


class ShardColumns:
    db: sqlite3.Connection

    def shards_from(self, url: str, count: int) -> list[tuple[str, str | None, int | None, int | None]]:
        """(url, group, shard, position) stored for the *count* URLs from *url* on, in URL order."""
        sql = "SELECT url, shard_group, shard, position FROM page WHERE url >= ? ORDER BY url LIMIT ?"
        return [(str(row[0]), row[1], row[2], row[3]) for row in self.db.execute(sql, (url, count))]

    def last_shard(self, group: str) -> tuple[int, int, int] | None:
        """(shard, listed URLs, last position) of *group*'s highest shard, or ``None``."""
        top = self.db.execute("SELECT max(shard) FROM page WHERE shard_group = ?", (group,)).fetchone()[0]
        if top is None:
            return None
        count, last = self.db.execute(
            "SELECT sum(outcome = 'listed'), max(position) FROM page WHERE shard_group = ? AND shard = ?",
            (group, top),
        ).fetchone()
        return int(top), int(count or 0), int(last or 0)

    def set_shard(self, url: str, group: str, shard: int, position: int) -> None:
        self.db.execute(
            "UPDATE page SET shard_group = ?, shard = ?, position = ? WHERE url = ?", (group, shard, position, url)
        )

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
