"""One URL per content (SPEC S3, S7): after every other listing rule, a page that
duplicates one already listed is excluded with reason ``duplicate``, naming the kept URL.

Which one is kept: the first listed, since the report is written as pages come and a
listed URL cannot be taken back. The start URL is the first page of a crawl and the crawl
is breadth-first, so the shortest path wins in the usual case. A page waits (a while, a few
at a time) for the simpler URLs it adds to that are still being fetched: a WordPress post's
``/comment-page-1/`` is linked from every page's "Recent Comments" and may come first, but
the post is the one to keep. Pages at the same depth
may come in either order, so with a state store the choice of the last run holds: a page
that was the duplicate of a URL listed last time, which still has the same content then,
stays the duplicate even if it comes first (should that URL not come back this run, the
page is missing for one run; the next one lists it). ``--keep-duplicates`` turns it off.

The pages kept so far (two 32-byte keys and the URL each) wait in an SQLite table in the
run's scratch folder (crawler/scratch.py), not in memory: about 270 bytes a listed page
otherwise, a quarter of a gigabyte at a million. In a shared crawl this pipeline runs in the
exporter, where the items of every worker meet.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals

from crawler.duplicates import OWN_TEXT, Duplicates, duplicate_detail, kept_of, simpler_urls, twins
from crawler.items import PageFacts
from crawler.reasons import Excluded, Reason
from crawler.run.context import context_of, run_state_of
from crawler.run.state import RunState
from crawler.scratch import done_with, scratch_entry
from crawler.state.store import Unknown
from crawler.urls import UrlSet

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

__all__ = ["DuplicatePipeline"]

#: Pages that wait at once for a simpler URL of theirs, and for how long at most: a request
#: the queue holds far back is not worth more.
MAX_WAITING = 16
WAIT_SECONDS = 15.0


def _page(item: PageFacts) -> tuple[str, str, list[str], list[str]] | None:
    if not item.content_digest:
        return None  # not HTML, or read without a digest
    own_text = item.own_chars is not None and item.own_chars >= OWN_TEXT  # facts of an older run: links count
    return item.url, item.content_digest, item.images, [] if own_text else item.links


class DuplicatePipeline:
    def __init__(self, keep: bool, state: RunState | None, in_flight: UrlSet | None = None, table: Path | None = None):
        self.keep = keep
        self.state = state
        self.table = table
        self.duplicates = Duplicates(table)
        self.in_flight = in_flight if in_flight is not None else UrlSet()
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._waiting = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        context = context_of(crawler)
        keep = context.config.keep_duplicates
        if not keep and context.in_flight is None:
            context.in_flight = UrlSet()  # the spider adds the page requests it makes
        table = None if keep else scratch_entry(context.config.output_dir, "duplicates.sqlite3")
        pipeline = cls(keep, run_state_of(crawler), context.in_flight, table)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(pipeline.item_done, signal=signal)
        return pipeline

    def close_spider(self) -> None:
        self.duplicates.close()
        if self.table is not None:
            done_with(self.table)

    def item_done(self, item: Any, **_: Any) -> None:
        """An item passed the pipelines (or was dropped): who waited for its URL goes on."""
        url = getattr(item, "url", None)
        if not isinstance(url, str):
            return
        self.in_flight.discard(url)
        for future in self._waiters.pop(url, ()):
            if not future.done():
                future.set_result(None)

    async def process_item(self, item: PageFacts) -> PageFacts:
        page = None if self.keep else _page(item)
        if page is None:
            return item
        kept = self.duplicates.find(*page)
        if kept is None and await self._simpler_first(item.url):  # a copy of a page kept already needs no wait
            kept = self.duplicates.find(*page)
        if kept is None:
            last = self._kept_last_time(item, page) if self.state is not None else None
            self.duplicates.remember(*(last or page))
            kept = last[0] if last is not None else None
        if kept is not None:
            item.detail = duplicate_detail(kept)  # stored with the facts: the next run reads it
            raise Excluded(Reason.DUPLICATE, item.detail)
        return item

    async def _simpler_first(self, url: str) -> bool:
        """Wait until the simpler URLs of *url* still being fetched have passed (bounded);
        whether it waited."""
        pending = [simpler for simpler in simpler_urls(url) if simpler in self.in_flight]
        if not pending or self._waiting >= MAX_WAITING:
            return False
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[None]] = []
        for simpler in pending:
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.setdefault(simpler, []).append(future)
            futures.append(future)
        self._waiting += 1
        try:
            await asyncio.wait(futures, timeout=WAIT_SECONDS)
        finally:
            self._waiting -= 1
        return True

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
