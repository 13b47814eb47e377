"""Facts of the sitemaps.org 0.9 protocol and Google's extensions, one source each.

The limits, namespaces and the W3C datetime format are used by the writer,
the validator, the configuration and the media rules alike; every one of
them reads the value from here (pure, no Scrapy).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

__all__ = [
    "CATEGORY_MAX",
    "DESCRIPTION_MAX",
    "DURATION_MAX",
    "IMAGE_NS",
    "MAX_BYTES",
    "MAX_IMAGES_PER_URL",
    "MAX_LOC_LENGTH",
    "MAX_NEWS_PER_FILE",
    "MAX_URLS",
    "NEWS_NS",
    "NEWS_WINDOW",
    "SITEMAP_NS",
    "TAGS_MAX",
    "TITLE_MAX",
    "VIDEO_NS",
    "XHTML_NS",
    "is_schema_datetime",
    "is_w3c_datetime",
    "to_w3c",
    "w3c_datetime",
]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"

#: sitemaps.org: at most 50,000 entries and 50 MiB uncompressed per file (sitemap or index).
MAX_URLS = 50_000
MAX_BYTES = 52_428_800
#: sitemaps.org: a loc is at most 2,048 characters.
MAX_LOC_LENGTH = 2048
#: Google image extension: at most 1,000 image:image per <url>.
MAX_IMAGES_PER_URL = 1000
#: Google News: at most 1,000 news:news per sitemap, articles of the last two days only.
MAX_NEWS_PER_FILE = 1000
NEWS_WINDOW = timedelta(days=2)
#: Google video extension: text limits, duration range and tag count.
TITLE_MAX = 100
DESCRIPTION_MAX = 2048
CATEGORY_MAX = 256
DURATION_MAX = 28_800
TAGS_MAX = 32

_W3C_DATETIME = re.compile(
    r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?)?)?"
)
_SCHEMA_DATETIME = re.compile(
    r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?"
)


def is_w3c_datetime(text: str) -> bool:
    """W3C Datetime (a profile of ISO 8601): a time needs a timezone."""
    return _W3C_DATETIME.fullmatch(text) is not None


def is_schema_datetime(text: str) -> bool:
    """A W3C datetime the official XSDs accept too: a full date, and seconds
    whenever a time is given (``xsd:date`` or ``xsd:dateTime``)."""
    return _SCHEMA_DATETIME.fullmatch(text) is not None


def w3c_instant(text: str) -> datetime | None:
    """The moment a W3C datetime names, timezone-aware (a date alone: its first moment in UTC);
    ``None`` when *text* is not one. Lastmods are compared as moments, never as strings:
    ``10:00+02:00`` is before ``09:00Z``."""
    if not is_w3c_datetime(text):
        return None
    try:
        value = datetime.fromisoformat(text if "T" in text else text + "T00:00:00+00:00")
    except ValueError:  # a year or a month alone, or more fraction digits than Python reads
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def w3c_datetime(value: datetime | date) -> str:
    """W3C Datetime with seconds and a timezone (naive values are UTC)."""
    if not isinstance(value, datetime):
        return value.isoformat()
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    text = value.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def to_w3c(text: str | None) -> str | None:
    """An ISO 8601 date or datetime from a page, as a W3C datetime.

    A datetime without a timezone is reduced to its date: guessing the zone
    would make the time wrong by hours, the date rarely.
    """
    if not text:
        return None
    text = text.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text).isoformat()
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        return value.date().isoformat()
    return w3c_datetime(value)
