"""Crawl seeds from the sitemaps that robots.txt names (SPEC S2), or when it names none,
from the conventional locations ``/sitemap.xml`` and ``/sitemap_index.xml`` (SPEC S11:
static site generators write one and no robots.txt; a 404 there is silent).

Their URLs are seeds like the start URL: they still pass every rule. Only
sitemaps on the crawl's own origin are read (for an IP host every port is
another site); the others are named in the report. A sitemap index may
list sitemaps, nothing deeper is read; at most 1,000 files, each at most
50 MiB after decompression; broken or hostile XML is skipped with a warning
(Scrapy's ``Sitemap`` parser resolves no entities). Once the page budget is
spent no more sitemap is fetched and the rest of a sitemap is only counted.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scrapy import Request, Spider
from scrapy.http import Response
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from crawler.items import PageFacts
from crawler.modes import RunMode
from crawler.protocol import MAX_BYTES
from crawler.reasons import Reason
from crawler.run.context import context_of
from crawler.run.robots import SiteRules
from crawler.signals import url_warning
from crawler.stats import Stat
from crawler.urls import UrlSet, normalize_or_raw, normalize_url, resolve_link, site_root

if TYPE_CHECKING:
    from scrapy.robotstxt import RobotParser
    from twisted.python.failure import Failure

    from crawler.hostmap import HostMap
    from crawler.scope import Scope
    from crawler.spiders.frontier import Frontier
    from settings.config import SitemapConfig

__all__ = ["MAX_HELD", "MAX_SITEMAP_FILES", "MAX_SITEMAP_LEVEL", "SitemapSeeds"]

logger = logging.getLogger(__name__)

#: A sitemap index may list sitemaps; nothing deeper is read.
MAX_SITEMAP_LEVEL = 2
MAX_SITEMAP_FILES = 1000
#: Where sites keep a sitemap that robots.txt does not name (sitemaps.org's example, and
#: the index name of the common CMS plugins).
CONVENTIONAL_SITEMAPS = ("/sitemap.xml", "/sitemap_index.xml")
#: Redirects followed for a sitemap file, on the crawl's origin (a CMS answers
#: /sitemap.xml with its own location).
MAX_SITEMAP_REDIRECTS = 5
#: Links over the query-variant cap held until the seed sitemaps are read (their facts, in memory).
MAX_HELD = 10_000


class SitemapSeeds(Spider):
    """The spider's part that reads robots.txt sitemaps; callbacks stay spider
    methods, so requests remain serialisable (``JOBDIR``, shared queues)."""

    config: SitemapConfig
    scope: Scope
    seen: UrlSet
    sitemap_files: int
    sitemaps_pending: int  # seed sitemaps scheduled and not yet read
    held: dict[str, PageFacts]  # links over the query-variant cap, until the site's sitemaps are read
    mode: RunMode
    frontier: Frontier
    robots: dict[str, RobotParser]  # origin -> its rules
    hosts: HostMap | None  # a staging audit: production locs are crawled on staging
    extra_sitemaps: tuple[str, ...]
    ignore_robots_rules: bool  # --ignore-robots: its Sitemap: lines are read, its rules not applied

    @abstractmethod
    def follow_url(
        self, raw_url: str, *, depth: int, referrer: str | None, listed_by_site: bool = False
    ) -> Iterator[Request | PageFacts]:
        """A Request for a URL not seen before, or a fact if it is out of scope (*listed_by_site*:
        the site's own sitemap lists it, so it is no trap's variant)."""

    def robots_parsed(self, robotparser: RobotParser, request: Request) -> None:
        """Keep an origin's rules, and schedule the sitemaps its robots.txt names (SPEC S2)."""
        if not self.scope.contains(request.url):
            return
        origin = site_root(request.url).rstrip("/")
        if not self.ignore_robots_rules:
            self.robots[origin] = robotparser
        if not self.config.follows_links:
            return  # an update, or list mode: the URLs given only
        named = robotparser.sitemaps if isinstance(robotparser, SiteRules) else []
        if origin == self.scope.origin:
            context_of(self.crawler).result.robots_sitemaps = [normalize_or_raw(u) for u in named[:MAX_SITEMAP_FILES]]
        seeds = [*named, *self.extra_sitemaps]
        if not seeds:
            seeds = [origin + path for path in CONVENTIONAL_SITEMAPS]  # the origin crawled (on staging, staging's)
        elif self.hosts is not None:
            seeds = [self.hosts.to_staging(url) for url in seeds]
        for url in seeds[:MAX_SITEMAP_FILES]:
            self.schedule_sitemap(url, level=1)

    def schedule_sitemap(self, raw_url: str, level: int, hops: int = 0) -> None:
        try:
            url = normalize_url(raw_url)
        except ValueError:
            logger.info("Ignoring sitemap with a bad URL: %r", raw_url)
            return
        if url in self.seen or self.sitemap_files >= MAX_SITEMAP_FILES:
            return
        if not self.scope.contains(url):
            self.seen.add(url)
            self.crawler.signals.send_catch_log(
                signal=url_warning, url=url, code="sitemap-other-origin", detail="named in robots.txt; not read"
            )
            return
        if self.frontier.full:
            logger.info("Page budget spent: sitemap %s not read", url)
            return
        self.seen.add(url)
        self.sitemap_files += 1
        self.sitemaps_pending += 1
        request = Request(
            url,
            callback=self.parse_sitemap,
            errback=self.sitemap_failed,
            # The robots middleware lets the files robots.txt names (or the user gives) through.
            meta={"sitemap_file": True, "sitemap_level": level, "sitemap_hops": hops},
            priority=100,
        )
        self.crawler.engine.crawl(request)

    def parse_sitemap(self, response: Response) -> Iterator[Request | PageFacts]:
        yield from self.read_sitemap(response)
        yield from self.sitemap_done()

    def may_hold(self) -> bool:
        """Whether a link over the query-variant cap waits for the seed sitemaps still to read: in one
        process only (a shared crawl's sitemaps are read by any worker), at most :data:`MAX_HELD`."""
        return self.sitemaps_pending > 0 and self.config.distributed is None and len(self.held) < MAX_HELD

    def sitemap_done(self) -> Iterator[PageFacts]:
        """One seed sitemap less to read; after the last, the links held over the query-variant cap
        that no sitemap listed are left out (SPEC S11: the site's own sitemap vouches for a URL,
        whether it comes before or after the links to it)."""
        self.sitemaps_pending -= 1
        if self.sitemaps_pending <= 0 and self.held:
            held, self.held = self.held, {}
            yield from held.values()

    def read_sitemap(self, response: Response) -> Iterator[Request | PageFacts]:
        frontier = self.frontier
        if frontier.full and frontier.saturated(Reason.LIMIT):
            logger.info("Page budget spent: sitemap %s not read", response.url)
            return
        level = response.meta.get("sitemap_level", 1)
        if 300 <= response.status < 400 and (location := response.headers.get(b"Location")):
            hops = response.meta.get("sitemap_hops", 0) + 1
            target = resolve_link(response.url, location.decode("latin-1"))
            if target and hops <= MAX_SITEMAP_REDIRECTS:
                self.schedule_sitemap(target, level, hops)  # off the origin: named in the report, not read
            return
        if response.status != 200:
            logger.info("Sitemap %s answered %s; ignored", response.url, response.status)
            return
        body = response.body
        if body[:2] == b"\x1f\x8b":
            try:
                body = gunzip(body, max_size=MAX_BYTES)
            except Exception as error:  # noqa: BLE001 - corrupt or oversized: skip it
                logger.warning("Sitemap %s could not be decompressed: %s", response.url, error)
                return
        try:
            sitemap = Sitemap(body)
        except Exception as error:  # noqa: BLE001 - hostile or broken XML: skip it
            logger.warning("Sitemap %s could not be parsed: %s", response.url, error)
            return
        if sitemap.type not in ("urlset", "sitemapindex"):  # a catch-all's HTML page at /sitemap.xml
            logger.info("Sitemap %s is no sitemap (%s); ignored", response.url, sitemap.type)
            return
        self.crawler.stats.inc_value(Stat.SEED_SITEMAPS)
        context_of(self.crawler).result.seed_sitemaps.append(response.url)
        entries = iter(sitemap)  # one entry at a time: 50,000 URLs never sit in a list
        for entry in entries:
            if frontier.full and frontier.saturated(Reason.LIMIT):
                rest = 1 + sum(1 for _ in entries)
                frontier.count_past_budget(rest)
                logger.info("Page budget spent: %d URLs of sitemap %s not read", rest, response.url)
                return
            loc = entry.get("loc")
            if not loc:
                continue
            if self.hosts is not None:
                loc = self.hosts.to_staging(loc)
            if sitemap.type == "sitemapindex":
                if level < MAX_SITEMAP_LEVEL:
                    self.schedule_sitemap(loc, level + 1)
            elif sitemap.type == "urlset":
                yield from self.follow_url(loc, depth=1, referrer=response.url, listed_by_site=True)

    def sitemap_failed(self, failure: Failure) -> Iterator[PageFacts]:
        logger.info("Sitemap %s not read: %s", failure.request.url, failure.value)  # type: ignore[attr-defined]
        yield from self.sitemap_done()
