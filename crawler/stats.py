"""Scrapy stats of sitemap-crawler: every key built here, and a cheaper collector.

Stats are counters for people watching a crawl (``scrapy crawl`` prints
them, Scrapyd keeps them); nothing decides on them. One helper owns the
``sitemap/`` prefix and builds every key, so no key string is repeated and
none carries message text.

:class:`FastStatsCollector`: Scrapy 2.19 routes every attribute access on
the stats collector through a Python ``__getattribute__`` that wraps methods
to warn about a deprecated ``spider`` argument; each ``self._stats`` inside
``inc_value`` first raises and catches an ``AttributeError``. Stats are
bumped a dozen times per request, so this was 3% of a crawl
(scrapy/scrapy#7045). The methods keep their signatures, so a caller that
still passes ``spider`` works, unwarned.
"""

from __future__ import annotations

from scrapy.statscollectors import MemoryStatsCollector

__all__ = ["FastStatsCollector", "Stat", "dropped", "key", "limit", "warning"]

PREFIX = "sitemap"


def key(*parts: str) -> str:
    """``sitemap/part/part``: the one builder of this project's stats keys."""
    return "/".join((PREFIX, *parts))


def dropped(reason: str) -> str:
    """URLs left out for *reason* (a :class:`crawler.reasons.Reason` value)."""
    return key("dropped", reason)


def limit(kind: str) -> str:
    """Requests stopped by a crawl limit (a :class:`crawler.reasons.Limit` value)."""
    return key("limit", kind)


def warning(code: str) -> str:
    """Whole-site findings about listed URLs, by stable code."""
    return key("warnings", code)


class Stat:
    """The fixed keys."""

    LISTED = key("listed")
    NOT_MODIFIED = key("not_modified")
    RESUMED_URLS = key("resumed_urls")
    CANONICAL_CONFLICT = key("canonical_conflict")
    SEED_SITEMAPS = key("seed_sitemaps")
    PAST_BUDGET = key("not_itemised", "past_budget")  # links only counted once the page budget was spent
    CRAWL_DELAY = key("crawl_delay")
    BACKOFF = key("backoff")  # times the delay was raised because the server said so or struggled
    IMAGES_LISTED = key("images", "listed")
    IMAGES_OVER_LIMIT = key("images", "over_limit")
    VIDEOS_LISTED = key("videos", "listed")
    VIDEOS_LEFT_OUT = key("videos", "left_out")
    SHARDS = key("shards")
    SHARDS_WRITTEN = key("shards_written")
    NEWS_URLS = key("news_urls")
    DELTA_URLS = key("delta_urls")
    CARRIED = key("carried")
    REMOVED = key("removed")
    SHARED_REFUSED = key("shared", "refused")  # items from Redis the exporter refused (not ours, or not to be listed)
    SHARED_REFETCHED = key("shared", "refetched")  # leases taken back from a worker that stopped, fetched again


class FastStatsCollector(MemoryStatsCollector):
    __getattribute__ = object.__getattribute__
