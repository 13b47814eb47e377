"""Politeness for each site as a whole in a shared crawl (SPEC S8), kept at the
moment each request goes out.

A worker's downloads pass through this handler, which wraps the one Scrapy
would use for the scheme. With a delay to keep (a fixed ``--delay``, a
``Crawl-delay``), or more workers than the site's concurrency limit allows,
it takes the site's slot in Redis right before the download and gives it
back as the download ends: one next-allowed time and one in-flight count per
site (per origin: a crawl of several hosts keeps each one's pace), on
Redis's clock. A grant taken any earlier (in a downloader
middleware) waits in the worker's own queue behind that worker's other
downloads, and two workers' requests then reach the site closer than the
delay. Otherwise nothing is asked of Redis: each worker's downloader keeps
its share of the limit (the limit divided by the live workers, counted four
times a second), which the Politeness extension applies to its slots.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object

from crawler.extensions.politeness import Politeness
from crawler.failures import ConfigError
from crawler.run.context import config_of
from crawler.run.worker import worker_name
from crawler.signals import site_held
from crawler.urls import site_root

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawler.distributed.coordination import SitePace, Workers

__all__ = ["SharedPaceHandler"]

logger = logging.getLogger(__name__)

#: How often a worker counts the live workers it shares the site's limit with.
RECOUNT_SECONDS = 0.25
#: The grants of this process, counted across its handlers (one per scheme): no two share a token.
_GRANTS = itertools.count(1)


@dataclass(slots=True)
class _Site:
    """One origin's pace in Redis, as this worker last read it."""

    pace: SitePace
    read_at: float = -1e9  # when its hold was last read (monotonic)
    held_until: float = 0.0  # a monotonic moment: the site held by a Retry-After until then


class SharedPaceHandler:
    lazy = False  # built with the crawler: a missing Politeness extension is said at once

    def __init__(self, crawler: Crawler, politeness: Politeness, paces: Callable[[str], SitePace], workers: Workers,
                 worker: str):  # fmt: skip
        self.crawler = crawler
        self.politeness = politeness
        self.paces = paces  # origin -> its pace in Redis
        self.sites: dict[str, _Site] = {}  # origin -> its pace, by the requests of this worker
        self.workers = workers
        self.worker = worker  # this worker's heartbeat name: its grants lapse with it
        shared = config_of(crawler).distributed
        assert shared is not None
        self.delay = shared.shared_delay
        self.per_site = crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        self.live = 1  # workers alive in the crawl, counted every RECOUNT_SECONDS
        self.counted_at = -1e9
        self.wrapped = dict(crawler.settings.getdict("SITEMAP_SHARED_DOWNLOAD_HANDLERS"))
        self.inner: dict[str, Any] = {}
        self.holding: set[asyncio.Task[None]] = set()  # Retry-Afters being told to Redis
        crawler.signals.connect(self.site_held, signal=site_held)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        shared = config.distributed
        if shared is None or not shared.worker:
            raise ConfigError("the shared pace handler is a shared-crawl worker's (worker_settings installs it)")
        from crawler.distributed.client import connect  # noqa: PLC0415 - a shared crawl only: no redis import else
        from crawler.distributed.coordination import SitePace, Workers  # noqa: PLC0415

        redis = connect(shared.url, shared.ca_file)
        hold = crawler.settings.getfloat("DOWNLOAD_TIMEOUT") + 10  # a grant outlives no download
        paces = partial(SitePace, redis, shared.crawl, hold=hold, longest_delay=max(config.max_crawl_delay, 1.0))
        politeness = crawler.get_extension(Politeness)
        if politeness is None:
            raise ConfigError("the Politeness extension keeps the pace; a shared crawl needs it")
        return cls(crawler, politeness, paces, Workers(redis, shared.crawl), worker_name(crawler))

    def _site(self, url: str) -> _Site:
        origin = site_root(url)
        if origin not in self.sites:
            self.sites[origin] = _Site(self.paces(origin))
        return self.sites[origin]

    def _handler(self, scheme: str) -> Any:
        if scheme not in self.inner:
            self.inner[scheme] = build_from_crawler(load_object(self.wrapped[scheme]), self.crawler)
        return self.inner[scheme]

    async def download_request(self, request: Request) -> Response:
        handler = self._handler(request.url.split(":", 1)[0])
        site = self._site(request.url)
        # robots.txt always takes the slot: the Crawl-delay it brings counts from its download.
        robots = urlparse_cached(request).path == "/robots.txt"
        token = await self._slot(site, self.crawler.engine.downloader.get_slot_key(request), always=robots)
        try:
            response: Response = await handler.download_request(request)
            return response
        finally:
            if token is not None:
                await self._release(site, token)

    async def _release(self, site: _Site, token: str) -> None:
        """The download is over; a Redis that cannot be told lets the grant lapse with this worker's
        heartbeat or its hold time (the download's outcome stands)."""
        try:
            await site.pace.release(token)
        except (RedisError, OSError) as error:
            logger.warning("Could not give the site's slot back in Redis (%s): it lapses by itself", error)

    def site_held(self, seconds: float, url: str) -> None:
        """This worker heard a Retry-After: the site of *url* is held for every worker, in Redis."""
        task = asyncio.get_running_loop().create_task(self._hold(self._site(url), seconds))
        self.holding.add(task)
        task.add_done_callback(self.holding.discard)

    async def _hold(self, site: _Site, seconds: float) -> None:
        try:
            await site.pace.hold(seconds)
        except (RedisError, OSError) as error:
            logger.warning("Could not hold the site for the other workers in Redis (%s)", error)

    async def _slot(self, site: _Site, key: str, *, always: bool = False) -> str | None:
        """The slot of *site*, taken now (its grant's token), or ``None`` when the shares suffice; a
        site held by a Retry-After (any worker's) is waited for first, checked at each recount.
        *key*: the downloader slot of the request, whose Crawl-delay Politeness knows."""
        now = time.monotonic()
        if now - self.counted_at >= RECOUNT_SECONDS:
            self.counted_at = now
            self.live = max(1, len(await self.workers.alive()))
            # Each worker's own downloader keeps its share of each site's limit in flight.
            self.politeness.share(max(1, self.per_site // self.live))
        if now - site.read_at >= RECOUNT_SECONDS:
            site.read_at = now
            site.held_until = now + await site.pace.held_for()
        if (held := site.held_until - time.monotonic()) > 0:
            await asyncio.sleep(held)
        delay, concurrency = self.politeness.site_pace(self.delay, key)
        if delay <= 0 and concurrency >= self.live and not always:
            return None  # the shares add up to the limit: nothing to ask Redis
        token = site.pace.token(self.worker, next(_GRANTS))
        while (wait := await site.pace.try_acquire(delay, concurrency, token)) > 0:
            await asyncio.sleep(wait)
        return token

    async def close(self) -> None:
        for handler in self.inner.values():
            closing = getattr(handler, "close", None)
            if closing is not None:
                result = closing()
                if asyncio.iscoroutine(result):
                    await result
                elif hasattr(result, "addCallback"):  # a Deferred
                    from twisted.internet.defer import Deferred  # noqa: PLC0415

                    assert isinstance(result, Deferred)
                    await result.asFuture(asyncio.get_running_loop())
        await self.workers.redis.aclose()
