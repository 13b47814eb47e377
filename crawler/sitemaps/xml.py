"""The single place where text becomes XML (sitemaps.org 0.9 protocol).

Every value written into a sitemap passes :func:`xml_escape`; the writers
only concatenate its results with fixed markup, which keeps escaping in one
function that the round-trip tests cover.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

__all__ = [
    "IMAGE_NS",
    "MAX_BYTES",
    "MAX_URLS",
    "NEWS_NS",
    "SITEMAP_NS",
    "VIDEO_NS",
    "XHTML_NS",
    "XML_DECLARATION",
    "to_w3c",
    "w3c_datetime",
    "xml_escape",
]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
#: Protocol limits per file (sitemaps.org): 50,000 entries, 50 MiB uncompressed.
MAX_URLS = 50_000
MAX_BYTES = 52_428_800
XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'

# Characters XML 1.0 forbids outright (section 2.2); they cannot be escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_SPECIAL = re.compile("[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_escape(text: str) -> str:
    """Escape *text* for an XML element or a double-quoted attribute."""
    if _SPECIAL.search(text) is None:  # the common case: nothing to do
        return text
    text = _INVALID_XML.sub("", text)
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


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
