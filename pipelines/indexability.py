"""Indexability rules (SPEC S3), one pipeline per concern.

Each pipeline either passes the item on or raises
:class:`~crawler.reasons.Excluded` with a stable reason code; the report
records the reason and the stats count it. Order in ``ITEM_PIPELINES``:
fetch outcome, user patterns, content type, noindex, canonical.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.items import PageFacts
from crawler.page.headers import is_noindex, media_type
from crawler.reasons import Excluded, Reason
from crawler.run.context import config_of
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

__all__ = [
    "CanonicalPipeline",
    "ContentTypePipeline",
    "FetchOutcomePipeline",
    "NoindexPipeline",
    "UrlPatternPipeline",
]


class _RulePipeline:
    def __init__(self, config: SitemapConfig):
        self.config = config

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(config_of(crawler))


class FetchOutcomePipeline(_RulePipeline):
    """Only a URL fetched with status 200 can be listed."""

    def process_item(self, item: PageFacts) -> PageFacts:
        if item.error:
            raise Excluded(Reason(item.error), item.detail)
        status = item.status or 0
        if 300 <= status < 400:
            raise Excluded(Reason.REDIRECT, item.detail or f"{status} -> {item.redirect_to or '(no Location)'}")
        if item.redirect_to:  # a script navigated away while the page was rendered
            raise Excluded(Reason.REDIRECT, item.detail or f"-> {item.redirect_to}")
        if status != 200:
            raise Excluded(Reason.STATUS, str(status))
        return item


class UrlPatternPipeline(_RulePipeline):
    """User include/exclude patterns (``SITEMAP_INCLUDE``/``SITEMAP_EXCLUDE``)."""

    def process_item(self, item: PageFacts) -> PageFacts:
        why = self.config.patterns.excluded(item.url)
        if why:
            raise Excluded(Reason.EXCLUDED, why)
        return item


class ContentTypePipeline(_RulePipeline):
    """HTML only, unless ``SITEMAP_ALLOWED_CONTENT_TYPES`` allows more."""

    def process_item(self, item: PageFacts) -> PageFacts:
        kind = media_type(item.content_type)
        if kind not in self.config.allowed_content_types:
            raise Excluded(Reason.CONTENT_TYPE, kind)
        return item


class NoindexPipeline(_RulePipeline):
    """meta robots, meta for the crawler token, or X-Robots-Tag says noindex."""

    def process_item(self, item: PageFacts) -> PageFacts:
        if is_noindex(item.robots):
            raise Excluded(Reason.NOINDEX, ", ".join(sorted(item.robots)) + _by_script(item, "noindex"))
        return item


class CanonicalPipeline(_RulePipeline):
    """A page whose canonical names another URL is represented by that URL."""

    def process_item(self, item: PageFacts) -> PageFacts:
        if item.canonical and item.canonical != item.url:
            raise Excluded(Reason.CANONICALISED, f"-> {item.canonical}" + _by_script(item, "canonical"))
        return item


def _by_script(item: PageFacts, what: str) -> str:
    """`` (set by script)`` when only the rendered page said *what* (Google's renderer sees it too)."""
    return " (set by script)" if item.render and item.render.get(what) else ""
