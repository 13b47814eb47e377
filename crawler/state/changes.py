"""What a run changed in the listed set, said once (SPEC S10): one model for the changes file,
the summary's counts and IndexNow (which hears of exactly these URLs).

A URL is *added* (listed now, not by the last published run: new, or back from noindex, 404,
...), *changed* (listed by both, its content changed) or *removed* (listed then, not now).
``before`` and ``after`` are what the URL was in each run, in the report's words: ``listed``,
a reason (``noindex``, ``canonicalised``, ``robots``), ``status 404``, ``new`` (never seen),
``gone`` (not linked any more).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Change", "ChangeCounts", "Kind", "state_word"]


class Kind(StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    REMOVED = "removed"


def state_word(outcome: str | None, reason: str | None, status: int | None) -> str:
    """What a URL was in one run, as a transition names it."""
    if outcome is None:
        return "new"
    if outcome in ("listed", "gone"):
        return outcome
    if reason == "status" and status is not None:
        return f"status {status}"
    return reason or outcome


@dataclass(frozen=True, slots=True)
class Change:
    url: str
    kind: Kind
    before: str
    after: str

    @property
    def transition(self) -> str:
        return "content changed" if self.kind is Kind.CHANGED else f"{self.before} -> {self.after}"

    def line(self) -> str:
        return json.dumps({"url": self.url, "change": self.kind.value, "from": self.before, "to": self.after})


@dataclass(slots=True)
class ChangeCounts:
    """Changes counted by kind and by transition, as the summary says them."""

    kinds: Counter[Kind]
    transitions: dict[Kind, Counter[str]]

    @classmethod
    def of(cls, changes: Iterable[Change]) -> ChangeCounts:
        counts = cls(Counter(), {kind: Counter() for kind in Kind})
        for change in changes:
            counts.add(change)
        return counts

    def add(self, change: Change) -> None:
        self.kinds[change.kind] += 1
        self.transitions[change.kind][change.transition] += 1

    def summary(self) -> dict[str, dict[str, int]]:
        """Counts by kind, then by transition, for the JSON summary."""
        return {kind.value: dict(self.transitions[kind]) for kind in Kind if self.kinds[kind]}

    def words(self, top: int = 3) -> str:
        """``2 added (new -> listed 2), 1 changed, 9,812 removed (listed -> noindex 9,800, 1 more)``;
        empty when nothing changed."""
        parts = []
        for kind in Kind:
            count = self.kinds[kind]
            if not count:
                continue
            part = f"{count:,} {kind.value}"
            if kind is not Kind.CHANGED:
                named = self.transitions[kind].most_common(top)
                rest = len(self.transitions[kind]) - len(named)
                shown = ", ".join(f"{name} {n:,}" for name, n in named)
                part += f" ({shown}{f', {rest} more' if rest > 0 else ''})"
            parts.append(part)
        return ", ".join(parts)
