"""The one spider: follows links inside the site and yields facts per URL.

It decides nothing about listing; every URL it meets becomes exactly one
:class:`~crawler.items.PageFacts` item (fetched, failed, or never requested
because it is out of scope), and the pipelines judge them. Links are parsed
once per page with lxml and de-duplicated on their normal form before any
Request is built, which is where a crawler spends its CPU.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import StopDownload
from scrapy.http import Response

from crawler.items import PageFacts
from crawler.modes import Replay, RunMode
from crawler.page.headers import is_html
from crawler.reasons import Reason
from crawler.run.context import CrawlContext
from crawler.run.reading import ResponseReader
from crawler.run.robots import robots_user_agent
from crawler.run.state import RunState
from crawler.signals import url_warning
from crawler.sitemaps.publish import MANIFEST_NAME, STAGING_PREFIX
from crawler.spiders.errors import failure_reason, render_failed
from crawler.spiders.following import Following
from crawler.spiders.frontier import Frontier
from crawler.spiders.loops import Leads
from crawler.spiders.seeds import SitemapSeeds
from crawler.spiders.url_list import listed_batches
from crawler.state.store import UNKNOWN
from crawler.stats import Stat, key
from crawler.urls import UrlSet, normalize_or_raw
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http.headers import Headers
    from scrapy.robotstxt import RobotParser
    from twisted.python.failure import Failure

    from crawler.scope import Scope

__all__ = ["SiteSpider"]


class SiteSpider(Following, SitemapSeeds):
    name = "site"
    config: SitemapConfig
    context: CrawlContext
    scope: Scope
    robots_agent: str
    seen: UrlSet  # raw and normalised spellings of every URL already handled
    sitemap_files: int
    state: RunState | None
    mode: RunMode
    frontier: Frontier
    leads_to: Leads  # where redirects and canonicalised pages lead, for canonical loops
    reader: ResponseReader
    robots: dict[str, RobotParser]  # origin -> its rules, once its robots.txt is read
    own_files: tuple[str, ...]

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, *args: Any, url: str | None = None, config: SitemapConfig | None = None, **kwargs: Any
    ) -> Self:
        if url:
            crawler.settings.set("SITEMAP_START_URL", url, priority="cmdline")
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.context = CrawlContext.for_spider(crawler, config)  # what every other component finds
        spider.config = spider.context.config
        spider.scope = spider.config.hosts.scope(spider.config.start_url)
        spider.robots_agent = robots_user_agent(crawler)
        spider.seen = UrlSet()
        spider.sitemap_files = 0
        spider.sitemaps_pending = 0
        spider.held = {}
        config = spider.config
        limits = (config.max_pages, config.max_depth, config.max_url_length, config.max_query_variants)
        # A shared crawl's worker: the hosts and their budgets are counted in Redis, for all workers.
        several = config.hosts.several and not (config.distributed is not None and config.distributed.worker)
        spider.frontier = Frontier(
            *limits,
            config.max_not_requested,
            max_hosts=config.hosts.max_hosts if several else 0,
            max_pages_per_host=config.hosts.max_pages if several else 0,
        )
        spider.leads_to = Leads()
        spider.robots = {}
        spider.hosts = config.audit.hosts
        spider.extra_sitemaps = config.audit.seed_sitemaps
        spider.ignore_robots_rules = config.audit.ignore_robots_rules
        # Our staging folders and manifest, should a host serve the output folder with a listing.
        folder = urlsplit(config.base_url).path
        spider.own_files = (folder + STAGING_PREFIX, folder + MANIFEST_NAME)
        spider.state = spider.context.run_state
        # Content digests serve the state store (here, or the exporter's of a shared crawl), the
        # duplicates pipeline (here, or the exporter's), and the audit's soft-404 check.
        exporter_state = config.distributed is not None and config.distributed.exporter_state
        digest = spider.state is not None or exporter_state or config.audit.record_path is not None
        digest = digest or not config.keep_duplicates
        spider.reader = ResponseReader(config, crawler, digest=digest)
        if spider.state is not None:
            spider.mode = spider.state.mode
        else:
            spider.mode = RunMode.UPDATE if spider.config.updating else RunMode.CRAWL
        crawler.signals.connect(spider.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(spider.headers_received, signal=signals.headers_received)
        return spider

    async def start(self) -> AsyncIterator[Any]:
        if self.mode is RunMode.CRAWL and self.config.urls_file:
            async for batch in listed_batches(self.config.urls_file, self.config.start_url):
                for output in self.listed_outputs(batch):
                    yield output
            return
        for output in self.first_outputs():
            yield output

    def listed_outputs(self, batch: list[tuple[str, str | None]]) -> Iterator[Request | PageFacts]:
        """List mode's URLs (a window of lines read off the reactor); a line that is none is said."""
        for url, why in batch:
            if why is None:
                yield from self.follow_url(url, depth=0, referrer=None)
            else:
                self.crawler.signals.send_catch_log(signal=url_warning, url=url, code="list-invalid", detail=why)

    def first_outputs(self) -> Iterator[Request | PageFacts]:
        """The start URL; an update's URLs; or a resumed frontier."""
        if self.mode is RunMode.UPDATE:
            for url in self.config.update_remove:
                self.seen.add(url)
                yield PageFacts(url=url, error=Reason.REMOVED, detail="removed by update")
            for url in self.config.update_add:
                yield from self.follow_url(url, depth=0, referrer=None)
        elif self.mode is RunMode.RESUME:
            yield from self.resume()
        else:
            for url in (self.config.start_url, *self.scope.named_origins):  # and each host named (--host)
                yield from self.follow_url(url, depth=0, referrer=None)

    def resume(self) -> Iterator[Request | PageFacts]:
        """Continue an interrupted run: URLs it already handled are replayed
        from the state store (no request), the rest of the frontier is fetched."""
        assert self.state is not None
        done = self.state.handled()
        self.crawler.stats.set_value(Stat.RESUMED_URLS, len(done))
        queue: deque[tuple[str, int, str | None]] = deque([(self.config.start_url, 0, None)])
        while queue:
            url, depth, referrer = queue.popleft()
            if url in self.seen:
                continue
            if url not in done:
                yield from self.follow_url(url, depth=depth, referrer=referrer)
                continue
            stored = self.state.facts(url)
            if stored is None:  # handled before the interruption, but its facts do not decode
                yield from self.follow_url(url, depth=depth, referrer=referrer)
                continue
            self.seen.add(url)
            facts = PageFacts.from_dict(stored)
            facts.replayed = Replay.RESUMED
            yield facts
            for target, target_depth in self.targets(facts):
                queue.append((normalize_or_raw(target, facts.encoding, self.config.strip_params), target_depth, url))

    # -- callbacks -----------------------------------------------------------

    def parse(self, response: Response) -> Iterator[Request | PageFacts]:
        meta = response.meta
        depth = meta.get("depth", 0)
        facts = self.replay_not_modified(response) if response.status == 304 else None
        if facts is None and response.status == 304 and not meta.get("unconditional"):
            # No stored facts to replay (lost or corrupt): ask again, without validators.
            assert response.request is not None
            again = response.request.replace(meta={**meta, "unconditional": True}, dont_filter=True)
            for name in (b"If-None-Match", b"If-Modified-Since"):
                again.headers.pop(name, None)
            yield again
            return
        if facts is None:
            facts = self.reader.read(response)
            if facts.render is not None and facts.render.get("failed"):
                facts = render_failed(facts, self.state.facts(response.url) if self.state is not None else None)
                self.crawler.stats.inc_value("render/kept" if facts.replayed else "render/left_out")
            if facts.redirect_to and len(facts.redirect_chain) >= self.config.max_redirects:
                facts.detail = (
                    f"chain too long: {facts.redirect_to} not followed after {len(facts.redirect_chain)} hops"
                )
        facts.depth, facts.referrer = depth, meta.get("referrer")
        facts.stored = meta.get("stored_state", UNKNOWN)
        self.settle_canonical(facts)
        # Links first: the page's item may wait in the pipelines (a simpler URL of it in flight).
        yield from self.follow_targets(facts, response.url)
        yield facts

    def settle_canonical(self, facts: PageFacts) -> None:
        """A canonical that leads back to the page makes it self-canonical, with a warning (SPEC S11)."""
        if detail := self.leads_to.settle(facts, self.config.max_redirects):
            self.crawler.signals.send_catch_log(
                signal=url_warning, url=facts.url, code="canonical-redirects-back", detail=detail
            )

    def replay_not_modified(self, response: Response) -> PageFacts | None:
        """A 304 to our conditional request: the page is what the state store last saw."""
        stored = self.state.facts(response.url) if self.state is not None else None
        if stored is None:
            return None
        facts = PageFacts.from_dict(stored)
        facts.replayed = Replay.NOT_MODIFIED
        self.crawler.stats.inc_value(Stat.NOT_MODIFIED)
        return facts

    def headers_received(self, headers: Headers, body_length: int, request: Request, spider: Spider) -> None:
        """Skip the body of a page that is not HTML: a PDF or video is judged on its Content-Type
        alone, one round trip and no download (a compressed body is read: a cut one cannot be)."""
        if request.callback != self.parse or headers.get(b"Content-Encoding"):
            return
        content_type = headers.get(b"Content-Type")
        if content_type is not None and not is_html(content_type.decode("latin-1")):
            raise StopDownload(fail=False)

    def failed(self, failure: Failure) -> Iterator[PageFacts]:
        """A request that got no response: robots, scope, or a network error.

        Only a request that was never sent gives its page budget back.
        """
        request = failure.request  # type: ignore[attr-defined]
        reason, detail = failure_reason(failure.value, self.crawler.settings.getint("DOWNLOAD_MAXSIZE"))
        if reason is not Reason.FETCH_ERROR and request.callback == self.parse:
            self.frontier.release(request.url)
        yield PageFacts(
            url=request.url,
            error=reason,
            detail=detail,
            depth=request.meta.get("depth", 0),
            referrer=request.meta.get("referrer"),
            redirect_chain=request.meta.get("redirect_chain", []),
            stored=request.meta.get("stored_state", UNKNOWN),
        )

    def closed(self, reason: str) -> None:
        """One report line for the URLs only counted, not itemised."""
        if self.held:  # the crawl stopped before its sitemaps were read: those links are only counted
            self.frontier.count(Reason.LIMIT, len(self.held))
            self.held.clear()
        for kind, count in self.frontier.not_itemised.items():
            self.crawler.stats.set_value(key("not_itemised", kind), count)
        self.crawler.stats.set_value(Stat.PAST_BUDGET, self.frontier.past_budget)
        if detail := self.frontier.not_itemised_detail():
            signals = self.crawler.signals
            signals.send_catch_log(signal=url_warning, url=self.config.start_url, code="not-itemised", detail=detail)
