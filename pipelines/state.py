"""Keep the state store up to date and give listed URLs an honest lastmod (SPEC S6).

lastmod is the time the page's content fingerprint last changed. On the
first sight of a page, the page's own ``dateModified`` (or a trustworthy
``Last-Modified``) stands in; when neither exists lastmod is left out rather
than guessed. Every URL's outcome goes into the store, with the facts that
let a later 304 or a resumed run replay it without fetching it again.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from scrapy import signals

from crawler.items import PageFacts
from crawler.reasons import Excluded
from crawler.runstate import CrawlState, now_w3c
from crawler.state import UNKNOWN, Listing, PageState, Unknown
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["StatePipeline", "fingerprint", "shard_group"]


def fingerprint(item: PageFacts) -> str:
    """What a search engine would see change: text, title, canonical,
    directives and the extension data written for the URL."""
    meaningful = [
        item.content_digest or item.content_type or "",
        item.canonical,
        sorted(item.robots),
        item.images,
        [video.to_dict() for video in item.videos],
        [list(pair) for pair in item.alternates],
    ]
    return hashlib.sha256(json.dumps(meaningful, sort_keys=True).encode()).hexdigest()


def shard_group(item: PageFacts, config: SitemapConfig, first_seen: str) -> str:
    """The group (file name part) a URL's shard belongs to, by strategy."""
    if config.shard_strategy == "section":
        return next((name for name, pattern in config.shard_sections if pattern.search(item.url)), "")
    if config.shard_strategy == "date":
        published = (item.news.publication_date if item.news else None) or item.modified_hint or first_seen
        return published[:7]  # YYYY-MM
    if config.shard_strategy == "id" and config.shard_id_pattern is not None:
        match = config.shard_id_pattern.search(item.url)
        if match and match.group(1).isdigit():
            start = int(match.group(1)) // config.shard_id_range * config.shard_id_range
            return f"id-{start}"
        return "id-none"
    return ""


def _changed_at(hint: str | None, last_seen: str, now: str) -> str:
    """When content changed between two visits: the page's own date if it
    falls in that window, else the time this run noticed."""
    if hint and last_seen < hint <= now:
        return hint
    return now


class StatePipeline:
    def __init__(self, crawler: Crawler, config: SitemapConfig, state: CrawlState):
        self.crawler = crawler
        self.config = config
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(crawler, SitemapConfig.from_crawler(crawler), CrawlState.require(crawler))
        crawler.signals.connect(pipeline.item_dropped, signal=signals.item_dropped)
        return pipeline

    def process_item(self, item: PageFacts) -> PageFacts:
        now = now_w3c()
        previous = self.state.store.get(item.url) if isinstance(item.stored, Unknown) else item.stored
        new_fingerprint = fingerprint(item)
        changed = previous is None or previous.fingerprint != new_fingerprint
        if previous is not None and (not changed or item.replayed == "resume"):
            item.last_modified = previous.lastmod
        elif previous is not None and previous.fingerprint is not None:
            item.last_modified = _changed_at(item.modified_hint, previous.last_seen, now)
        else:
            item.last_modified = item.modified_hint or item.last_modified
        item.shard_group = shard_group(item, self.config, previous.first_seen if previous else now)
        listing = Listing(
            fingerprint=new_fingerprint,
            lastmod=item.last_modified,
            last_changed=item.last_modified if changed else previous.last_changed if previous else None,
            changed=changed and item.replayed != "resume",
        )
        if item.replayed == "resume":
            # Recorded before the interruption; only the listing is brought up to date.
            self.state.store.update_listing(self.state.run, item.url, listing)
        else:
            self._record(item, "listed", None, now, listing=listing, previous=previous)
        return item

    def item_dropped(self, item: PageFacts, response: Response | None, exception: Exception, spider: Spider) -> None:
        if item.replayed == "resume":
            return
        reason = str(exception.reason) if isinstance(exception, Excluded) else "error"
        self._record(item, "excluded", reason, now_w3c(), previous=item.stored)

    def _record(
        self,
        item: PageFacts,
        outcome: str,
        reason: str | None,
        now: str,
        *,
        listing: Listing | None = None,
        previous: PageState | Unknown | None = UNKNOWN,
    ) -> None:
        """This run's outcome for the URL; a 304 keeps the stored facts."""
        self.state.store.record(
            self.state.run,
            now,
            item.url,
            status=item.status,
            outcome=outcome,
            reason=reason,
            facts=None if item.replayed == "304" else item.to_dict(),
            validators=self._validators(item),
            listing=listing,
            previous=previous,
        )

    @staticmethod
    def _validators(item: PageFacts) -> tuple[str | None, str | None] | None:
        if item.replayed == "304":
            return None  # keep the validators that earned the 304
        if item.status is None:
            return None
        return item.etag, item.header_last_modified
