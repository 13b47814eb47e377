"""What the components of one crawl share: the configuration, read once; the crawl's
result; the run state in the state store, opened by the first component that needs it.

Scrapy builds the spider first, then everything else; the spider makes the context
(:meth:`CrawlContext.for_spider`) and every other component finds it on the crawl's
spider, Scrapy's public ``crawler.spider``. Nothing is hung on the Crawler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from crawler.results import CrawlResult
from crawler.run.state import RunState
from crawler.urls import UrlSet
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


__all__ = ["CrawlContext", "config_of", "context_of", "required_run_state", "run_state_of"]


class CrawlContext:
    def __init__(self, crawler: Crawler, config: SitemapConfig):
        self.crawler = crawler
        self.config = config
        self.result = CrawlResult()
        #: The page requests made whose item has not yet passed the pipelines, when a component
        #: asks for them (the duplicates pipeline: the simpler of two copies is kept).
        self.in_flight: UrlSet | None = None
        self._run_state: RunState | None = None
        self._opened = False

    @classmethod
    def for_spider(cls, crawler: Crawler, config: SitemapConfig | None = None) -> CrawlContext:
        """The context of the crawl a spider is made for: *config* when the caller parsed it
        already (the CLI), else read from the crawler's settings, once."""
        return cls(crawler, config if config is not None else SitemapConfig.from_settings(crawler.settings))

    @property
    def run_state(self) -> RunState | None:
        """The run in the state store, opened on first use; ``None`` when the store is off."""
        if not self._opened:
            self._run_state = RunState.open(self.crawler, self.config, self.result)
            self._opened = True
        return self._run_state


def context_of(crawler: Crawler) -> CrawlContext:
    """The context of the crawl *crawler* runs (its spider made it)."""
    context = getattr(crawler.spider, "context", None)
    if not isinstance(context, CrawlContext):
        raise TypeError("the crawl's spider made no CrawlContext: sitemap-crawler's components need its spiders")
    return context


def config_of(crawler: Crawler) -> SitemapConfig:
    return context_of(crawler).config


def run_state_of(crawler: Crawler) -> RunState | None:
    """The crawl's run state (its context opens it on first use); ``None`` when the state store is off."""
    return context_of(crawler).run_state


def required_run_state(crawler: Crawler) -> RunState:
    """The crawl's run state, for components that only make sense with one (``NotConfigured``
    without: the state store is off, a deliberate choice that needs no warning)."""
    state = run_state_of(crawler)
    if state is None:
        raise NotConfigured
    return state
