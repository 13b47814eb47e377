"""Scrapy's in-memory stats collector without its per-access toll.

Scrapy 2.19 routes every attribute access on the stats collector through a
Python ``__getattribute__`` that wraps methods to warn about a deprecated
``spider`` argument; each ``self._stats`` inside ``inc_value`` first raises
and catches an ``AttributeError``. Stats are bumped a dozen times per
request, so this was 3% of a crawl (scrapy/scrapy#7045). The methods keep
their signatures, so a caller that still passes ``spider`` works, unwarned.
"""

from __future__ import annotations

from scrapy.statscollectors import MemoryStatsCollector

__all__ = ["FastStatsCollector"]


class FastStatsCollector(MemoryStatsCollector):
    __getattribute__ = object.__getattribute__
