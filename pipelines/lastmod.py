"""Keep the run state up to date and give listed URLs an honest lastmod (SPEC S6).

The rule itself is :mod:`crawler.state.lastmod`; this pipeline feeds it the
item's facts and what the last visit left, places the URL in its shard
group, and records every URL's outcome (listed here, excluded from the
``item_dropped`` signal) with the facts that let a later 304 or a resumed
run replay it without fetching it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals

from crawler.items import PageFacts
from crawler.modes import Replay
from crawler.reasons import outcome_of
from crawler.run.context import config_of, required_run_state
from crawler.run.state import RunState, now_w3c
from crawler.state.lastmod import listing_digest, listing_for
from crawler.state.placement import ShardStrategy
from crawler.state.store import UNKNOWN, Listing, PageState, Unknown
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["LastmodPipeline", "shard_group"]


def shard_group(item: PageFacts, strategy: ShardStrategy, first_seen: str) -> str:
    """The group a URL's shard belongs to; it is dated by its publication,
    its own modification date, or when it was first seen."""
    published = (item.news.publication_date if item.news else None) or item.modified_hint or first_seen
    return strategy.group(item.url, published)


def _digest(item: PageFacts) -> str:
    return listing_digest(
        item.content_digest or item.content_type or "",
        item.canonical,
        robots=item.robots,
        images=item.images,
        videos=[video.to_dict() for video in item.videos],
        alternates=item.alternates,
    )


class LastmodPipeline:
    def __init__(self, config: SitemapConfig, state: RunState):
        self.config = config
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        pipeline = cls(config_of(crawler), required_run_state(crawler))
        crawler.signals.connect(pipeline.item_dropped, signal=signals.item_dropped)
        return pipeline

    def process_item(self, item: PageFacts) -> PageFacts:
        now = now_w3c()
        previous = self.state.stored(item.url) if isinstance(item.stored, Unknown) else item.stored
        resumed = item.replayed is Replay.RESUMED
        listing = listing_for(
            previous,
            _digest(item),
            modified_hint=item.modified_hint,
            # The page's date, else a trustworthy Last-Modified; never later than the fetch (the spider's reading).
            first_sight=item.last_modified,
            now=now,
            resumed=resumed,
        )
        item.last_modified = listing.lastmod
        item.shard_group = shard_group(item, self.config.shard_strategy, previous.first_seen if previous else now)
        if resumed:
            # Recorded before the interruption; only the listing is brought up to date.
            self.state.relist(item.url, listing)
        else:
            self._record(item, "listed", None, now, listing=listing, previous=previous)
        return item

    def item_dropped(self, item: PageFacts, response: Response | None, exception: Exception, spider: Spider) -> None:
        if item.replayed is Replay.RESUMED:
            return
        outcome = outcome_of(exception)
        self._record(item, outcome.word, outcome.reason, now_w3c(), previous=item.stored)

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
        """This run's outcome for the URL; a 304 keeps the stored facts and validators."""
        not_modified = item.replayed in (Replay.NOT_MODIFIED, Replay.RENDER_FAILED)
        self.state.record(
            item.url,
            status=item.status,
            outcome=outcome,
            reason=reason,
            facts=None if not_modified else item.to_dict(),
            # The validators that earned the 304 stay; a URL never fetched has none to give.
            validators=None if not_modified or item.status is None else (item.etag, item.header_last_modified),
            listing=listing,
            previous=previous,
            now=now,
        )
