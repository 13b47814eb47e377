"""The one owner of the downloader slots' delay and concurrency (SPEC S2, S8).

Scrapy lets whoever is configured set a slot's delay; here that is this
extension alone, so one place says why a site is fetched at this rate. The
rule itself is :class:`crawler.pace.Pace`; the other components only report
to it: robots.txt's ``Crawl-delay`` (the ``robots_parsed`` signal), answer
latencies (``response_downloaded``), the backoff middleware's server
trouble and good answers, and a shared crawl's pace middleware with this
worker's share of the site's limit. Each slot is set as its first request
reaches the downloader and after every change.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from scrapy import signals

from crawler.pace import Pace, span_words
from crawler.run.context import config_of
from crawler.run.robots import robots_user_agent
from crawler.signals import site_held
from crawler.stats import Stat
from settings.values import adapts

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

__all__ = ["Politeness"]

logger = logging.getLogger(__name__)

#: A crawl the Crawl-delay alone makes last longer than this is announced.
LONG_CRAWL_SECONDS = 3600.0
#: Without a page budget, the estimate is given per this many pages.
PAGES_PER_ESTIMATE = 10_000


class Politeness:
    def __init__(self, crawler: Crawler, template: Pace, jitter: float):
        self.crawler = crawler
        self.template = template  # the pace of a site not yet heard of
        self.jitter = jitter  # Scrapy's randomisation of a delay that need not be exact
        self.paces: dict[str, Pace] = {}  # downloader slot key -> its pace
        self.agent = robots_user_agent(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        config = config_of(crawler)
        template = Pace(
            fixed=not adapts(settings),
            base=settings.getfloat("DOWNLOAD_DELAY"),
            concurrency=settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
            cap=config.max_crawl_delay or settings.getfloat("AUTOTHROTTLE_MAX_DELAY"),
            start=settings.getfloat("AUTOTHROTTLE_START_DELAY"),
            target=settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY") or 1.0,
            adaptive_max=settings.getfloat("AUTOTHROTTLE_MAX_DELAY"),
        )
        jitter = 0.5 if settings.getbool("RANDOMIZE_DOWNLOAD_DELAY") else 0.0
        owner = cls(crawler, template, jitter)
        crawler.signals.connect(owner.request_reached_downloader, signal=signals.request_reached_downloader)
        crawler.signals.connect(owner.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(owner.robots_parsed, signal=signals.robots_parsed)
        return owner

    def pace(self, key: str) -> Pace:
        found = self.paces.get(key)
        if found is None:
            found = self.paces[key] = replace(self.template)  # its delay starts afresh
        return found

    def site_pace(self, delay: float, key: str | None = None) -> tuple[float, int]:
        """A site's pace for a whole shared crawl: seconds between two downloads (the fixed
        *delay*, or robots.txt's Crawl-delay once known, one at a time) and how many may be in
        flight; of the slot *key* (one host), else of the slowest site met."""
        crawl_delay = self.pace(key).crawl_delay if key is not None else self.crawl_delay
        if crawl_delay > delay:
            return crawl_delay, 1
        return delay, self.crawler.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")

    @property
    def crawl_delay(self) -> float:
        """The longest Crawl-delay any site of this crawl asked for (capped), 0 without one."""
        return max((pace.crawl_delay for pace in self.paces.values()), default=0.0)

    def _apply(self, key: str) -> None:
        """The slot of *key*, set from its pace: the one place a slot's delay and concurrency are written."""
        slot = self.crawler.engine.downloader.slots.get(key) if self.crawler.engine else None
        if slot is None:
            return  # set as its first request reaches the downloader
        pace = self.pace(key)
        slot.delay = pace.delay
        slot.concurrency = pace.in_flight
        slot.jitter = 0.0 if pace.exact(time.monotonic()) else self.jitter

    @staticmethod
    def _key(request: Request) -> str | None:
        key = request.meta.get("download_slot")
        return key if isinstance(key, str) else None

    # --- the inputs ---
    def request_reached_downloader(self, request: Request, spider: Spider) -> None:
        key = self._key(request)
        if key is not None:
            self._apply(key)

    def response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        key, latency = self._key(request), request.meta.get("download_latency")
        if key is None or latency is None:
            return
        self.pace(key).latency(float(latency), response.status, time.monotonic())
        self._apply(key)

    def robots_parsed(self, robotparser: RobotParser, request: Request) -> None:
        asked = robotparser.crawl_delay(self.agent)
        if not asked or asked <= 0:
            return
        key = self.crawler.engine.downloader.get_slot_key(request)
        kept = self.pace(key).robots(float(asked))
        if kept < asked:
            logger.warning("Crawl-delay %.1fs is capped at %.1fs on %s (SITEMAP_MAX_CRAWL_DELAY)", asked, kept, key)
        if self.crawler.stats:
            self.crawler.stats.set_value(Stat.CRAWL_DELAY, kept)  # for people: nothing decides on it
        logger.info("robots.txt asks for Crawl-delay %.2fs on %s", kept, key)
        self._say_how_long(kept, key)
        self._apply(key)

    def _say_how_long(self, crawl_delay: float, key: str) -> None:
        """A Crawl-delay makes a big site's crawl last days: said up front, not found out at the end."""
        budget = config_of(self.crawler).max_pages
        pages = budget or PAGES_PER_ESTIMATE
        if crawl_delay * pages < LONG_CRAWL_SECONDS:
            return
        what = f"the page budget of {budget:,} (--max-pages)" if budget else f"every {PAGES_PER_ESTIMATE:,} pages"
        logger.warning("robots.txt asks for Crawl-delay %gs, one request at a time, on %s: %s takes %s at that pace",
                       crawl_delay, key, what, span_words(crawl_delay * pages))  # fmt: skip

    def trouble(self, request: Request, why: str, retry_after: float | None) -> None:
        """The server answered 429/5xx, or the request timed out or was refused (the backoff middleware)."""
        key = self._key(request)
        if key is None:
            return
        pace = self.pace(key)
        before = pace.delay
        now = time.monotonic()
        pace.trouble(now, retry_after)
        if retry_after and pace.held(now):
            logger.info("%s %s with Retry-After: nothing sent to %s for %.0f s", request.url, why, key,
                        pace.held_until - now)  # fmt: skip
            self.crawler.signals.send_catch_log(signal=site_held, seconds=pace.held_until - now, url=request.url)
        if pace.delay > before:
            logger.info("%s %s: %.2f s between requests from now on", request.url, why, pace.delay)
        if self.crawler.stats:
            self.crawler.stats.inc_value(Stat.BACKOFF)
        self._apply(key)

    def answered(self, request: Request) -> None:
        """A good answer (the backoff middleware): a raised fixed delay comes back down."""
        key = self._key(request)
        if key is not None:
            self.pace(key).answered(time.monotonic())
            self._apply(key)

    def share(self, count: int) -> None:
        """A shared crawl: this worker keeps *count* of the site's limit in flight (its pace middleware)."""
        for key, pace in self.paces.items():
            if pace.share != count:
                pace.share = count
                self._apply(key)
        self.template.share = count
