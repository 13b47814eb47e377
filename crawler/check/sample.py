"""Which listed URLs are fetched: a deterministic sample spread over the shards (pure).

Each shard keeps only its few candidates, the locs with the smallest SHA-1
(the same set whatever order the shards arrive in, and never a shard's whole
list); the sample then takes them round-robin, shard after shard in the
index's order, so a shard smaller than its share leaves its place to the others.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass

__all__ = ["Listed", "Sampler"]

#: Candidates kept per shard beyond its share, so small shards' places can be filled.
_SPARE = 4


@dataclass(slots=True, frozen=True)
class Listed:
    """A listed URL and where it is listed (the finding about it points there)."""

    loc: str
    file: str
    line: int
    col: int


def _key(loc: str) -> int:
    return int.from_bytes(hashlib.sha1(loc.encode(), usedforsecurity=False).digest()[:8], "big")


class Sampler:
    """Up to *size* listed URLs out of *shards* files (0: the sample is off)."""

    def __init__(self, size: int, shards: int) -> None:
        self.size = size
        self.shards = max(shards, 1)  # may be set later: the shards' share is known once the index is read
        self._heaps: dict[int, list[tuple[int, str, int, int, str]]] = {}

    def _keep(self) -> int:
        share = -(-self.size // self.shards)  # rounded up
        return min(self.size, share * _SPARE)

    def offer(self, shard: int, listed: Listed) -> None:
        keep = self._keep()
        if keep == 0:
            return
        heap = self._heaps.setdefault(shard, [])
        item = (-_key(listed.loc), listed.loc, listed.line, listed.col, listed.file)
        if len(heap) < keep:
            heapq.heappush(heap, item)
        elif item > heap[0]:  # a smaller key than the largest kept
            heapq.heapreplace(heap, item)

    def chosen(self) -> list[Listed]:
        """The sample, in a stable order: round-robin over the shards, smallest keys first."""
        lists = [
            [Listed(loc, file, line, col) for _, loc, line, col, file in sorted(self._heaps[shard], reverse=True)]
            for shard in sorted(self._heaps)
        ]
        picked: list[Listed] = []
        seen: set[str] = set()
        for rank in range(max((len(candidates) for candidates in lists), default=0)):
            for candidates in lists:
                if len(picked) == self.size:
                    return picked
                if rank < len(candidates) and candidates[rank].loc not in seen:
                    seen.add(candidates[rank].loc)
                    picked.append(candidates[rank])
        return picked
