"""The times of log lines (pure): nginx's ``$time_local`` read fast, ISO 8601, and the numbers
JSON logs carry (seconds, or milli-, micro- or nanoseconds since the epoch). A time no log
line can carry is ``None``: a broken line, never a window moved to another century.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from functools import lru_cache

__all__ = ["bounded", "iso_time", "json_time", "time_local"]


@lru_cache(maxsize=4096)
def _day(text: str) -> float:
    """Seconds since the epoch of midnight UTC of ``04/Dec/2026``; ``ValueError`` if no such day."""
    return datetime.strptime(text, "%d/%b/%Y").replace(tzinfo=UTC).timestamp()


def time_local(text: str) -> float:
    """nginx's ``$time_local`` (``04/Dec/2026:10:00:00 +0100``) in seconds since the epoch: each
    minute read once (a log has a line every few seconds), its seconds added by hand."""
    seconds = text[18:20]
    if len(text) != 26 or text[17] != ":" or not (seconds.isascii() and seconds.isdecimal()) or seconds > "60":
        raise ValueError(f"not a $time_local: {text!r}")
    return _minute(text[:17] + text[20:]) + int(seconds)


@lru_cache(maxsize=4096)
def _minute(text: str) -> float:
    """``04/Dec/2026:10:00 +0100`` (a ``$time_local`` without its seconds), in seconds since the epoch."""
    digits = text[12:14] + text[15:17] + text[19:23]
    if (
        text[11] != ":"
        or text[14] != ":"
        or text[17] != " "
        or text[18] not in "+-"
        or not digits.isascii()
        or not digits.isdecimal()
    ):
        raise ValueError(f"not a $time_local: {text!r}")
    hours, minutes = int(text[12:14]), int(text[15:17])
    if hours > 23 or minutes > 59:
        raise ValueError(f"not a $time_local: {text!r}")
    offset = (int(text[19:21]) * 60 + int(text[21:23])) * 60 * (1 if text[18] == "+" else -1)
    return _day(text[:11]) + hours * 3600 + minutes * 60 - offset


def iso_time(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text)
        return bounded((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
    except (ValueError, OverflowError):
        return None


def bounded(seconds: float) -> float | None:
    """*seconds* when a log line may carry it (:data:`_EARLIEST` to :data:`_LATEST`), else ``None``."""
    return seconds if math.isfinite(seconds) and _EARLIEST <= seconds <= _LATEST else None


#: The times a log line may carry: from 1990 to 2200 (seconds since the epoch); any other value
#: is a broken line, never a window moved to another century.
_EARLIEST, _LATEST = 631_152_000.0, 7_258_118_400.0


def json_time(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value) if not isinstance(value, int) or value.bit_length() < 1000 else math.inf
        for _ in range(4):  # seconds, or milli-, micro- or nanoseconds since the epoch
            if seconds <= 1e11:
                break
            seconds /= 1000
        return bounded(seconds)
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return bounded(time_local(value))
    except ValueError:
        pass
    try:
        return json_time(float(value))
    except ValueError:
        return iso_time(value)
