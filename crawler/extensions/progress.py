"""A live progress line on stderr while the crawl runs (CLI only): counts, the page rate, and
how long the queue takes at the pace of the last minute (a floor: pages found later add to it)."""

from __future__ import annotations

import sys
import time
from collections import deque
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet.task import LoopingCall

from crawler.logs import json_event
from crawler.pace import span_words
from crawler.run.context import config_of
from crawler.stats import Stat, dropped

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["Progress", "progress_counts"]

#: The pace the queue's time is estimated at: pages crawled over this many recent seconds.
RECENT_SECONDS = 60.0


def progress_counts(stats: dict[str, object]) -> dict[str, int]:
    """Pages crawled, queued, listed and excluded, from Scrapy stats."""

    def number(key: str) -> int:
        value = stats.get(key, 0)
        return value if isinstance(value, int) else 0

    prefix = dropped("")
    return {
        # Responses of pages: a rendered page's scripts and data are responses too, not pages.
        "crawled": max(0, number("response_received_count") - number("render/responses")),
        "queued": max(0, number("scheduler/enqueued") - number("scheduler/dequeued")),
        "listed": number(Stat.LISTED),
        "excluded": sum(v for k, v in stats.items() if k.startswith(prefix) and isinstance(v, int)),
    }


class Progress:
    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.interval = interval
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic()
        self.loop = LoopingCall(self.show)
        self.json = False  # progress events as JSON log lines instead of a terminal line
        self.recent: deque[tuple[float, int]] = deque()  # (moment, pages crawled) over RECENT_SECONDS

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not config_of(crawler).progress:
            # Off unless asked for (SITEMAP_PROGRESS); no message, so Scrapy logs no warning.
            raise NotConfigured
        config = config_of(crawler)
        json_lines = config.log_format == "json"
        progress = cls(crawler, 30.0 if json_lines else 1.0 if sys.stderr.isatty() else 10.0)
        progress.json = json_lines
        crawler.signals.connect(progress.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(progress.spider_closed, signal=signals.spider_closed)
        return progress

    def spider_opened(self, spider: Spider) -> None:
        self.started = time.monotonic()
        self.loop.start(self.interval, now=False)

    def show(self) -> None:
        counts = progress_counts(self.crawler.stats.get_stats())
        now = time.monotonic()
        rate = counts["crawled"] / max(now - self.started, 1e-6)
        line = (
            f"crawled {counts['crawled']} | queued {counts['queued']} | listed {counts['listed']}"
            f" | excluded {counts['excluded']} | {rate:.1f} pages/s"
        )
        self.recent.append((now, counts["crawled"]))
        while len(self.recent) > 2 and now - self.recent[0][0] > RECENT_SECONDS:
            self.recent.popleft()
        (first, crawled_then) = self.recent[0]
        recent_rate = (counts["crawled"] - crawled_then) / (now - first) if now > first else 0.0
        if counts["queued"] and recent_rate > 0:
            line += f" | queue: {span_words(counts['queued'] / recent_rate)} at this pace"
        if self.json:
            counts_with_rate = {**counts, "pages_per_second": round(rate, 1)}
            sys.stderr.write(
                json_event("INFO", "sitemap-crawler.progress", line, event="progress", counts=counts_with_rate) + "\n"
            )
        else:
            sys.stderr.write(f"\r\x1b[K{line}" if self.tty and not self.json else line + "\n")
        sys.stderr.flush()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.loop.running:
            self.loop.stop()
        if self.tty and not self.json:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
