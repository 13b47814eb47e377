"""The state store as one crawl sees it: opened and locked once, one run.

Every component that needs the store (conditional requests, the spider's
replays, the state pipeline, the export) gets the same :class:`CrawlState`
through :meth:`CrawlState.of`. A run that ends normally is closed in the
store as published or failed; an interrupted one stays open, so
``--resume`` can continue it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured

from crawler.reasons import stats_key
from crawler.state import StateStore
from crawler.urls import site_root
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["CrawlState", "now_w3c"]

logger = logging.getLogger(__name__)

_ATTR = "_sitemap_crawl_state"


def now_w3c() -> str:
    """The current time as a W3C datetime in UTC (called for every URL, so no datetime objects)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class CrawlState:
    def __init__(self, crawler: Crawler, store: StateStore, run: int, resumed: bool):
        self.crawler = crawler
        self.store = store
        self.run = run
        self.resumed = resumed

    @classmethod
    def of(cls, crawler: Crawler) -> CrawlState | None:
        """The crawl's state, opened on first use; ``None`` when the state store is off."""
        if hasattr(crawler, _ATTR):
            return getattr(crawler, _ATTR)  # type: ignore[no-any-return]
        config = SitemapConfig.from_crawler(crawler)
        state = None
        if config.state_path is not None:
            store = StateStore(config.state_path)
            origin = site_root(config.start_url)
            if store.get_meta("origin") not in (None, origin):
                # Another site's shards would leave this one numbered after them.
                logger.warning(
                    "State store %s was used for %s; shards start afresh", config.state_path, store.get_meta("origin")
                )
                store.reset_shards()
            store.set_meta("origin", origin)
            run, resumed = store.begin_run(now_w3c(), config.resume)
            state = cls(crawler, store, run, resumed)
            crawler.signals.connect(state.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(state.engine_stopped, signal=signals.engine_stopped)
        setattr(crawler, _ATTR, state)
        return state

    @classmethod
    def require(cls, crawler: Crawler) -> CrawlState:
        """The crawl's state, for components that only make sense with one."""
        state = cls.of(crawler)
        if state is None:
            raise NotConfigured  # the state store is off (SITEMAP_STATE): no warning for a deliberate choice
        return state

    def spider_opened(self) -> None:
        self.crawler.stats.set_value(stats_key("run"), self.run)
        self.crawler.stats.set_value(stats_key("resumed"), self.resumed)

    def engine_stopped(self) -> None:
        stats = self.crawler.stats
        if stats.get_value("finish_reason") == "finished":
            status = "published" if stats.get_value(stats_key("published")) else "failed"
            self.store.finish_run(self.run, status, now_w3c())
        self.store.close()
