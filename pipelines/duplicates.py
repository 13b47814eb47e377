"""One URL per content (SPEC S3, S7): after every other listing rule, a page that
duplicates one already listed is excluded with reason ``duplicate``, naming the kept URL.

Which one is kept: the first listed, since the report is written as pages come and a
listed URL cannot be taken back. The start URL is the first page of a crawl and the crawl
is breadth-first, so the shortest path wins in the usual case. Pages at the same depth
may come in either order, so with a state store the choice of the last run holds: a page
that was the duplicate of a URL listed last time, which still has the same content then,
stays the duplicate even if it comes first (should that URL not come back this run, the
page is missing for one run; the next one lists it). ``--keep-duplicates`` turns it off.

Memory: two 32-byte keys and the kept URL per listed page (:class:`~crawler.duplicates.Duplicates`),
like Scrapy's dupefilter. In a
shared crawl this pipeline runs in the exporter, where the items of every worker meet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.context import config_of
from crawler.duplicates import OWN_TEXT, Duplicates, duplicate_detail, kept_of, twins
from crawler.extensions.runstate import RunState
from crawler.items import PageFacts
from crawler.reasons import Excluded, Reason
from crawler.state.store import Unknown

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

__all__ = ["DuplicatePipeline"]


def _page(item: PageFacts) -> tuple[str, str, list[str], list[str]] | None:
    if not item.content_digest:
        return None  # not HTML, or read without a digest
    own_text = item.own_chars is not None and item.own_chars >= OWN_TEXT  # facts of an older run: links count
    return item.url, item.content_digest, item.images, [] if own_text else item.links


class DuplicatePipeline:
    def __init__(self, keep: bool, state: RunState | None):
        self.keep = keep
        self.state = state
        self.duplicates = Duplicates()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(config_of(crawler).keep_duplicates, RunState.of(crawler))

    def process_item(self, item: PageFacts) -> PageFacts:
        page = None if self.keep else _page(item)
        if page is None:
            return item
        kept = self.duplicates.find(*page)
        if kept is None:
            last = self._kept_last_time(item, page) if self.state is not None else None
            self.duplicates.remember(*(last or page))
            kept = last[0] if last is not None else None
        if kept is not None:
            item.detail = duplicate_detail(kept)  # stored with the facts: the next run reads it
            raise Excluded(Reason.DUPLICATE, item.detail)
        return item

    def _kept_last_time(
        self, item: PageFacts, page: tuple[str, str, list[str], list[str]]
    ) -> tuple[str, str, list[str], list[str]] | None:
        """The page listed in *item*'s stead last run, if it was the same content then and *item* still is."""
        assert self.state is not None
        previous = self.state.stored(item.url) if isinstance(item.stored, Unknown) else item.stored
        if previous is None or previous.reason != Reason.DUPLICATE:
            return None
        facts = self.state.facts(item.url)
        kept = kept_of(facts.get("detail") if facts else None)
        twin = self.state.stored(kept) if kept else None
        if kept is None or twin is None or twin.outcome != "listed":
            return None
        stored = self.state.facts(kept)
        last = _page(PageFacts.from_dict({**stored, "url": kept})) if stored else None
        return last if last is not None and twins(page, last) else None
