"""Where each listed URL lives: its shard group by strategy, and a stable
(shard, position) inside the group (SPEC S4, S6).

A URL keeps its shard across runs; new URLs fill the group's last shard,
then open a new one. With delta sitemaps, URLs added or changed since the
last full generation go to the delta group instead, until the rotation
merges them back. Placements are remembered in the state store.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from crawler.sitemaps.naming import HOST_GROUP_SEP
from crawler.state.store import StateStore

__all__ = ["DELTA_GROUP", "SHARD_STRATEGIES", "ShardAssigner", "ShardStrategy", "placer"]

SHARD_STRATEGIES = ("sequential", "section", "date", "id")
#: Shard group of the delta sitemap: URLs added or changed since the last full generation.
DELTA_GROUP = "delta"
#: Stored placements read at once by an export.
WINDOW = 5000
#: (url, group) -> (group, shard, position)
Placer = Callable[[str, str], tuple[str, int, int]]


@dataclass(frozen=True, slots=True)
class ShardStrategy:
    """How URLs are grouped into shard families (the group names a file part)."""

    kind: str = "sequential"
    sections: tuple[tuple[str, re.Pattern[str]], ...] = ()
    id_pattern: re.Pattern[str] | None = None
    id_range: int = 50_000

    def group(self, url: str, published: str) -> str:
        """The group of *url*; *published* (W3C) dates it for the ``date`` strategy."""
        if self.kind == "section":
            return next((name for name, pattern in self.sections if pattern.search(url)), "")
        if self.kind == "date":
            return published[:7]  # YYYY-MM
        if self.kind == "id" and self.id_pattern is not None:
            match = self.id_pattern.search(url)
            if match and match.group(1).isdigit():
                start = int(match.group(1)) // self.id_range * self.id_range
                return f"id-{start}"
            return "id-none"
        return ""


@dataclass(slots=True)
class ShardAssigner:
    """Give a listed URL its (shard, position): kept if it already has one in
    its group, else the end of the group's open shard, or a new shard once
    that one holds *max_urls*."""

    store: StateStore
    max_urls: int
    _open: dict[str, list[int]] = field(default_factory=dict, init=False)  # group -> [shard, count, next position]
    #: The stored placements of the URLs from the last one read on (an export asks in URL order:
    #: one query a window, not one a URL), and the first and last URL the window covers.
    _stored: dict[str, tuple[str | None, int | None, int | None]] = field(default_factory=dict, init=False)
    _window: tuple[str, str | None] | None = field(default=None, init=False)  # last None: to the end

    def stored(self, url: str) -> tuple[str | None, int | None, int | None]:
        """(group, shard, position) stored for *url*; all ``None`` when it has none."""
        window = self._window
        if window is None or url < window[0] or (window[1] is not None and url > window[1]):
            rows = self.store.shards_from(url, WINDOW)
            self._stored = {row[0]: row[1:] for row in rows}
            self._window = (url, rows[-1][0] if len(rows) == WINDOW else None)
        return self._stored.get(url, (None, None, None))

    def __call__(self, url: str, group: str) -> tuple[int, int]:
        stored_group, shard, position = self.stored(url)
        if stored_group == group and shard is not None and position is not None:
            return shard, position
        current = self._open.get(group)
        if current is None:
            last = self.store.last_shard(group)
            current = self._open[group] = [1, 0, 0] if last is None else [last[0], last[1], last[2] + 1]
        if current[1] >= self.max_urls:
            current[:] = [current[0] + 1, 0, 0]
        shard, position = current[0], current[2]
        current[1] += 1
        current[2] += 1
        self.store.set_shard(url, group, shard, position)
        self._stored[url] = (group, shard, position)
        return shard, position


def placer(store: StateStore, max_urls: int, delta: set[str]) -> Placer:
    """Stable shards, except the *delta* URLs, which fill the delta group (each host's own, in a
    crawl of several) in URL order."""
    assign = ShardAssigner(store, max_urls)
    counters: dict[str, int] = {}

    def place(url: str, group: str) -> tuple[str, int, int]:
        if url in delta:
            host = group[: group.find(HOST_GROUP_SEP) + 1]  # "" for one host
            number = counters[host] = counters.get(host, -1) + 1
            return host + DELTA_GROUP, number // max_urls + 1, number
        return (group, *assign(url, group))

    return place
