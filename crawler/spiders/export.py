"""The exporter of a shared crawl: it fetches nothing, it takes the facts the
workers pushed and yields them, so they pass every pipeline of a local
crawl (listing rules, honest lastmod, the state store, the export) and the
crawl report, once per URL. Each item is acknowledged in Redis once its
pipelines are done with it; the spider ends when the crawl is over
everywhere and nothing is left to export.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from scrapy import Spider, signals
from scrapy.exceptions import CloseSpider

from crawler.distributed.client import connect, redis_failure
from crawler.distributed.coordination import Workers, crawl_finished
from crawler.distributed.exporter_lock import ExporterLock
from crawler.distributed.frontier import RedisFrontier
from crawler.distributed.items import ItemChannel
from crawler.distributed.vetting import Vetting
from crawler.items import PageFacts
from crawler.modes import Replay, RunMode
from crawler.run.context import CrawlContext
from crawler.run.robots import robots_agent_of
from crawler.stats import Stat
from settings.config import SitemapConfig
from settings.distributed import Distributed, masked_url

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from crawler.run.state import RunState

__all__ = ["ExportSpider"]

logger = logging.getLogger(__name__)


def replayed(state: RunState, urls: set[str]) -> Iterator[PageFacts]:
    """The facts an interrupted run recorded for *urls*, marked replayed: they pass the pipelines
    and the report again, and the state store keeps their outcome as recorded (not twice). A URL
    whose facts do not decode leaves *urls*: an item for it still to come is exported."""
    for url in sorted(urls):
        stored = state.facts(url)
        if stored is None:
            logger.warning("Resumed: the facts recorded for %s do not decode; it is left out of this run", url)
            urls.discard(url)
            continue
        facts = PageFacts.from_dict(stored)
        facts.replayed = Replay.RESUMED
        yield facts


class ExportSpider(Spider):
    name = "site-export"
    config: SitemapConfig
    context: CrawlContext
    channel: ItemChannel
    entries: dict[int, str]
    finished: list[str]  # entries whose items are through the pipelines, to acknowledge

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.context = CrawlContext.for_spider(crawler)
        spider.config = spider.context.config
        assert spider.config.distributed is not None
        _ = spider.context.run_state  # opened now: the state store is the exporter's alone
        spider.entries = {}
        spider.finished = []
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(spider.item_done, signal=signal)
        return spider

    def item_done(self, item: Any, **_: Any) -> None:
        """Its pipelines are done with it: acknowledged in Redis with the next batch."""
        entry = self.entries.pop(id(item), None)
        if entry is not None:
            self.finished.append(entry)

    async def start(self) -> AsyncIterator[Any]:
        """The facts, as workers push them; a Redis that goes away stops the crawl
        (reason ``redis-lost``), and the previous sitemap set stays published."""
        shared = self.config.distributed
        assert shared is not None
        redis = connect(shared.url, shared.ca_file)
        try:
            async for facts in self._exported(redis, shared):
                yield facts
        except (RedisError, OSError) as error:
            logger.error("%s; the crawl stops, previous sitemaps kept", redis_failure(masked_url(shared.url), error))
            raise CloseSpider("redis-lost") from None
        finally:
            await redis.aclose()

    async def _exported(self, redis: Redis, shared: Distributed) -> AsyncIterator[PageFacts]:
        self.channel = ItemChannel(redis, shared.crawl, secret=shared.sealing_key)
        frontier = RedisFrontier(redis, shared.crawl, "exporter", shared.lease_seconds, shared.sealing_key)
        workers = Workers(redis, shared.crawl)
        await self.channel.open()
        await frontier.open()
        vetting = Vetting(
            redis,
            shared.crawl,
            self.config.hosts.scope(self.config.start_url),
            robots_agent_of(self.crawler.settings),
            shared.sealing_key,
        )
        lock = ExporterLock(redis, shared.crawl)
        if not await lock.take():
            logger.error("Another coordinator exports this crawl now: this one stops, previous sitemaps kept")
            raise CloseSpider("exporter-busy")
        exported: set[str] = set()
        state = self.context.run_state
        if state is not None and state.mode is RunMode.RESUME:
            # What the interrupted run recorded counts as exported: replayed from the state store,
            # then the items its exporter had taken but not acknowledged, then new ones.
            exported = state.handled()
            self.crawler.stats.set_value(Stat.RESUMED_URLS, len(exported))
            for facts in replayed(state, exported):
                yield facts
            self.channel.resume()
        try:
            while True:
                taken = await self.channel.take(100)
                duplicates = []
                refusals = await vetting.refusals([facts for _, facts in taken])
                for (entry, facts), refused in zip(taken, refusals, strict=True):
                    if refused is not None or facts.url in exported:
                        # Not ours to list; or two workers met the same out-of-scope link, or a lease was redone.
                        duplicates.append(entry)
                        continue
                    exported.add(facts.url)
                    self.entries[id(facts)] = entry
                    yield facts
                done, self.finished = duplicates + self.finished, []
                if state is not None and done:
                    state.save()  # the store knows them before Redis lets them go
                await self.channel.done(done)
                if not await lock.renew():
                    logger.error("Another coordinator took this crawl over: this one stops, previous sitemaps kept")
                    raise CloseSpider("exporter-busy")
                if taken:
                    continue
                finished = not self.entries and await crawl_finished(frontier, workers, shared.grace)
                if finished and await self.channel.backlog() == 0:
                    break
                await asyncio.sleep(0.05)
            if state is not None:
                state.save()
            await self.channel.done(self.finished)
        finally:
            await lock.release()
            if vetting.refused + self.channel.refused:
                self.crawler.stats.set_value(Stat.SHARED_REFUSED, vetting.refused + self.channel.refused)
