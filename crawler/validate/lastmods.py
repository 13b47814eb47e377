"""What a file's lastmods say beyond their syntax (pure): a date in the
future, or one date on most of the file's URLs, which is when a generator
ran, not when each page changed (Google ignores lastmods it cannot trust).

Most, not all: a file where 60 of 61 URLs share a date is the same pattern
with one page edited by hand. The share is a setting
(``SITEMAP_SAME_LASTMOD_SHARE``, :data:`SAME_LASTMOD_SHARE` percent).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from crawler.protocol import w3c_instant
from crawler.validate.findings import Finding

__all__ = ["FUTURE_SLACK", "SAME_LASTMOD_MIN", "SAME_LASTMOD_SHARE", "LastmodTally", "future_value", "in_future"]

#: A file of fewer URLs than this says nothing by sharing a date.
SAME_LASTMOD_MIN = 10
#: The share of a file's URLs (percent) one lastmod must reach to be a build time.
SAME_LASTMOD_SHARE = 90
#: Clocks and time zones differ: a lastmod is "in the future" only past this.
FUTURE_SLACK = timedelta(days=1)
_FUTURE = " is in the future"


def in_future(text: str, now: datetime, where: tuple[str, int, int], loc: str | None) -> Finding | None:
    """A ``future-lastmod`` finding at *where* (file, line, column) about the page *loc*, or ``None``."""
    moment = w3c_instant(text) or datetime.min.replace(tzinfo=UTC)  # unreadable: not worth a finding
    if moment <= now + FUTURE_SLACK:
        return None
    return Finding(*where, "future-lastmod", f"lastmod {text}{_FUTURE}", loc)


def future_value(finding: Finding) -> str:
    """The lastmod a ``future-lastmod`` finding names."""
    return finding.message.removeprefix("lastmod ").removesuffix(_FUTURE)


class LastmodTally:
    """The lastmods of one file, counted (one key per distinct date, dropped with the file)."""

    def __init__(self) -> None:
        self._counts: dict[str, list[int]] = {}  # lastmod -> [count, line, col of its first]

    def add(self, text: str, line: int, col: int) -> None:
        self._counts.setdefault(text, [0, line, col])[0] += 1

    def same(self, file: str, entries: int, share: int) -> Finding | None:
        """``same-lastmod`` when one date is on *share* percent of the file's *entries* or
        more (entries without a lastmod count as other dates), at its first occurrence."""
        if entries < SAME_LASTMOD_MIN or not self._counts:
            return None
        text, (count, line, col) = max(self._counts.items(), key=lambda item: item[1][0])
        if count * 100 < share * entries:
            return None
        percent = count * 100 // entries  # rounded down: 999 of 1,000 is not "100%"
        shared = f"all {entries} URLs have" if count == entries else f"{count} of {entries} URLs ({percent}%) have"
        return Finding(file, line, col, "same-lastmod", f"{shared} lastmod {text}: a build time, not a change time")
