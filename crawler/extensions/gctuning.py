"""Keep Python's cyclic garbage collector from scanning the crawl's heap.

A crawl holds a large, long-lived heap (the seen-set, queued requests,
Scrapy's machinery) and allocates many short-lived containers per response.
With the default thresholds (700, 10, 10) the collector runs thousands of
times per 5,000 pages and its older generations rescan that heap: measured at
8% of a run whose pages all answer 304. The objects that exist when the
engine starts are frozen (never scanned again), and the young generation is
collected every 10,000 net allocations instead of 700; cycles are still
collected, just in fewer, cheaper passes. Both are undone when the engine
stops, so a process that runs several crawls gets its own settings back.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

__all__ = ["CRAWL_THRESHOLDS", "GarbageCollection"]

CRAWL_THRESHOLDS = (10_000, 10, 10)


class GarbageCollection:
    def __init__(self) -> None:
        self.saved: tuple[int, int, int] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        extension = cls()
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_started(self) -> None:
        self.saved = gc.get_threshold()
        gc.collect()  # freeze live objects only, not garbage left by start-up
        gc.freeze()
        gc.set_threshold(*CRAWL_THRESHOLDS)

    def engine_stopped(self) -> None:
        if self.saved is not None:
            gc.set_threshold(*self.saved)
            gc.unfreeze()
            self.saved = None
