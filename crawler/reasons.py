"""Why a URL is left out of the sitemap: stable reason codes (SPEC S3).

The codes are part of the report format (``crawl-report.jsonl``) and of the
Scrapy stats keys (``sitemap/dropped/<reason>``); never rename one. The
exceptions carry them through Scrapy's own channels: ``DropItem`` for an
item, ``IgnoreRequest`` for a request.
"""

from __future__ import annotations

from enum import StrEnum

from scrapy.exceptions import DropItem, IgnoreRequest

__all__ = ["Excluded", "Limit", "OutOfScope", "Reason", "RobotsDisallowed", "pages_spent"]


class Reason(StrEnum):
    REDIRECT = "redirect"
    STATUS = "status"
    FETCH_ERROR = "fetch-error"
    NOINDEX = "noindex"
    CANONICALISED = "canonicalised"
    CONTENT_TYPE = "content-type"
    ROBOTS = "robots"
    OUT_OF_SCOPE = "out-of-scope"
    EXCLUDED = "excluded"
    LIMIT = "limit"
    REMOVED = "removed"  # dropped by `update --remove`
    UNREADABLE = "unreadable"  # a body that could not be decoded or parsed
    DUPLICATE = "duplicate"  # the same content as a page already listed, named in the detail


class Limit(StrEnum):
    """Which crawl limit stopped a request (``sitemap/limit/<kind>`` in the stats)."""

    DEPTH = "depth"
    URL_LENGTH = "url_length"
    QUERY_VARIANTS = "query_variants"
    PAGES = "pages"


def pages_spent(max_pages: int) -> str:
    """The detail of a page left out because the page budget is spent."""
    return f"max pages {max_pages} reached"


class Excluded(DropItem):
    """An expected exclusion: logged at DEBUG, recorded with its reason."""

    def __init__(self, reason: Reason, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else str(reason), log_level="DEBUG")
        self.reason = reason
        self.detail = detail


class RobotsDisallowed(IgnoreRequest):
    """robots.txt forbids the request for the configured user agent."""


class OutOfScope(IgnoreRequest):
    """The request is not on the crawl's origin (the scope guard's refusal)."""
