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
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Response

from crawler.downloadermiddlewares.robotstxt import robots_user_agent
from crawler.extensions.runstate import RunState
from crawler.items import PageFacts
from crawler.modes import Replay, RunMode
from crawler.page.headers import is_html, last_modified, link_header_alternates, link_header_targets, robots_directives
from crawler.page.html import PageHtml, parse_html
from crawler.page.media import collect_media
from crawler.page.structured import modified_time
from crawler.protocol import to_w3c
from crawler.reasons import LimitReached, Reason, RobotsDisallowed
from crawler.scope import Scope
from crawler.spiders.seeds import SitemapSeeds
from crawler.state.store import UNKNOWN
from crawler.stats import Stat
from crawler.urls import normalize_or_raw, normalize_url, resolve_link
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http.headers import Headers
    from twisted.python.failure import Failure

__all__ = ["SiteSpider"]


class SiteSpider(SitemapSeeds):
    name = "site"
    config: SitemapConfig
    scope: Scope
    robots_agent: str
    seen: set[str]  # raw and normalised spellings of every URL already handled
    sitemap_files: int
    state: RunState | None
    mode: RunMode

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, url: str | None = None, **kwargs: Any) -> Self:
        if url:
            crawler.settings.set("SITEMAP_START_URL", url, priority="cmdline")
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.config = SitemapConfig.from_crawler(crawler)
        spider.scope = Scope(spider.config.start_url)
        spider.robots_agent = robots_user_agent(crawler)
        spider.seen = set()
        spider.sitemap_files = 0
        spider.state = RunState.of(crawler)
        if spider.state is not None:
            spider.mode = spider.state.mode
        else:
            spider.mode = RunMode.UPDATE if spider.config.updating else RunMode.CRAWL
        crawler.signals.connect(spider.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(spider.headers_received, signal=signals.headers_received)
        return spider

    async def start(self) -> AsyncIterator[Any]:
        if self.mode is RunMode.UPDATE:
            for url in self.config.update_remove:
                self.seen.add(url)
                yield PageFacts(url=url, error=Reason.REMOVED, detail="removed by update")
            for url in self.config.update_add:
                for output in self.follow_url(url, depth=0, referrer=None):
                    yield output
            return
        if self.mode is RunMode.RESUME:
            for output in self.resume():
                yield output
            return
        for item in self.follow_url(self.config.start_url, depth=0, referrer=None):
            yield item

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
            self.seen.add(url)
            stored = self.state.facts(url)
            if stored is None:
                continue
            facts = PageFacts.from_dict(stored)
            facts.replayed = Replay.RESUMED
            yield facts
            for target, target_depth in self.targets(facts):
                queue.append((normalize_or_raw(target, facts.encoding, self.config.strip_params), target_depth, url))

    # -- following ---------------------------------------------------------

    def follow_url(
        self,
        raw_url: str,
        *,
        depth: int,
        referrer: str | None,
        encoding: str = "utf-8",
        chain: list[str] | None = None,
    ) -> Iterator[Request | PageFacts]:
        """A Request for a URL not seen before, or a fact if it is out of scope."""
        seen = self.seen
        if raw_url in seen:
            return
        seen.add(raw_url)
        try:
            url = normalize_url(raw_url, encoding, self.config.strip_params)
        except ValueError:
            return  # not http(s), or a broken URL: nothing a sitemap could list
        if url in seen and url != raw_url:
            return
        seen.add(url)
        if not self.scope.contains(url):
            yield PageFacts(url=url, error=Reason.OUT_OF_SCOPE, depth=depth, referrer=referrer)
            return
        yield Request(
            url,
            callback=self.parse,
            errback=self.failed,
            meta={"depth": depth, "referrer": referrer, "redirect_chain": chain or [], "page": True},
            priority=-depth,  # breadth-first
        )

    # -- callbacks -----------------------------------------------------------

    def parse(self, response: Response) -> Iterator[Request | PageFacts]:
        meta = response.meta
        depth = meta.get("depth", 0)
        facts = self.replay_not_modified(response) if response.status == 304 else None
        if facts is None:
            facts = self.read_response(response)
        facts.depth, facts.referrer = depth, meta.get("referrer")
        facts.stored = meta.get("stored_state", UNKNOWN)
        yield facts
        yield from self.follow_targets(facts, response.url)

    def replay_not_modified(self, response: Response) -> PageFacts | None:
        """A 304 to our conditional request: the page is what the state store last saw."""
        stored = self.state.facts(response.url) if self.state is not None else None
        if stored is None:
            return None
        facts = PageFacts.from_dict(stored)
        facts.replayed = Replay.NOT_MODIFIED
        self.crawler.stats.inc_value(Stat.NOT_MODIFIED)
        return facts

    def read_response(self, response: Response) -> PageFacts:
        facts = PageFacts(
            url=response.url,
            status=response.status,
            content_type=_header(response, b"Content-Type"),
            redirect_chain=response.meta.get("redirect_chain", []),
            last_modified=last_modified(_header(response, b"Last-Modified"), _header(response, b"Date")),
        )
        if self.state is not None:
            facts.etag = _header(response, b"ETag")
            facts.header_last_modified = _header(response, b"Last-Modified")
        if 300 <= response.status < 400 and response.status != 304:
            location = _header(response, b"Location")
            target = resolve_link(response.url, location) if location else None
            if target:
                facts.redirect_to = normalize_or_raw(target, params=self.config.strip_params)
        elif response.status == 200 and is_html(facts.content_type):
            self.read_page(facts, response)
        return facts

    def targets(self, facts: PageFacts, known: AbstractSet[str] = frozenset()) -> list[tuple[str, int]]:
        """(URL, depth) of what a page leads to: its redirect target, its
        canonical and its links (unless it says nofollow), leaving out the
        *known* ones first, since on most pages nearly all links are."""
        if facts.redirect_to:
            # One hop at a time: every URL of a chain is reported.
            return [] if facts.redirect_to in known else [(facts.redirect_to, facts.depth)]
        urls = [facts.canonical] if facts.canonical and facts.canonical != facts.url else []
        if "nofollow" not in facts.robots or self.config.follow_nofollow:
            urls += facts.links
        depth = facts.depth + 1
        return [(url, depth) for url in urls if url not in known]

    def follow_targets(self, facts: PageFacts, referrer: str) -> Iterator[Request | PageFacts]:
        if self.mode is RunMode.UPDATE:
            return  # an update fetches the URLs it was given, nothing else
        chain = [*facts.redirect_chain, facts.url] if facts.redirect_to else None
        for target, depth in self.targets(facts, self.seen):
            yield from self.follow_url(target, depth=depth, referrer=referrer, encoding=facts.encoding, chain=chain)

    def read_page(self, facts: PageFacts, response: Response) -> None:
        """Everything an HTML page says: links, directives, canonical, media."""
        encoding = getattr(response, "encoding", None) or "utf-8"
        ignore = self.config.fingerprint_ignore if self.state is not None else None
        page = parse_html(response.body, response.url, encoding, ignore)
        facts.links, facts.encoding = page.links, encoding
        facts.content_digest = page.content_digest
        facts.modified_hint = to_w3c(modified_time(page.json_ld, page.properties))
        # The page's own date beats the header's: servers often stamp every response.
        facts.last_modified = facts.modified_hint or facts.last_modified
        facts.lang = page.lang
        link_headers = _headers(response, b"Link")
        self.add_media(facts, page, encoding, link_header_alternates(link_headers, response.url))
        facts.robots = robots_directives(page.meta, _headers(response, b"X-Robots-Tag"), self.config.robots_token)
        canonicals = link_header_targets(link_headers, response.url, "canonical") + page.canonicals
        normal = {normalize_or_raw(c, encoding, self.config.strip_params) for c in canonicals}
        if len(normal) == 1:
            facts.canonical = normal.pop()
        elif len(normal) > 1:
            # Conflicting canonicals are ignored by search engines.
            self.crawler.stats.inc_value(Stat.CANONICAL_CONFLICT)

    def add_media(
        self, facts: PageFacts, page: PageHtml, encoding: str, header_alternates: list[tuple[str, str]]
    ) -> None:
        """Images, videos, hreflang alternates and news facts of an HTML page."""
        config = self.config

        def normalize(url: str | None) -> str | None:
            if not url:
                return None
            try:
                return normalize_url(url, encoding, config.strip_params)
            except ValueError:
                return None

        page.alternates = header_alternates + page.alternates
        media = collect_media(page, normalize, news=config.news_candidate(facts.url))
        facts.images = media.images if config.images else []
        facts.videos = media.videos if config.videos else []
        if config.hreflang:
            facts.alternates = media.alternates
            facts.notes.extend(media.problems)
        facts.news = media.news

    def headers_received(self, headers: Headers, body_length: int, request: Request, spider: Spider) -> None:
        """Skip the body of a page that is not HTML: status and headers decide.

        A PDF or video is judged on its Content-Type alone, so it costs one
        round trip and no download (compressed bodies are left alone, since a
        truncated one cannot be decoded).
        """
        if request.callback != self.parse or headers.get(b"Content-Encoding"):
            return
        content_type = headers.get(b"Content-Type")
        if content_type is not None and not is_html(content_type.decode("latin-1")):
            raise StopDownload(fail=False)

    def failed(self, failure: Failure) -> Iterator[PageFacts]:
        """A request that got no response: robots, a limit, or a network error."""
        request = failure.request  # type: ignore[attr-defined]
        error = failure.value
        if isinstance(error, RobotsDisallowed):
            reason, detail = Reason.ROBOTS, str(error)
        elif isinstance(error, LimitReached):
            reason, detail = Reason.LIMIT, error.detail
        elif isinstance(error, IgnoreRequest):
            reason, detail = Reason.OUT_OF_SCOPE, str(error)
        else:
            reason, detail = Reason.FETCH_ERROR, f"{type(error).__name__}: {error}".strip()
        yield PageFacts(
            url=request.url,
            error=reason,
            detail=detail,
            depth=request.meta.get("depth", 0),
            referrer=request.meta.get("referrer"),
            redirect_chain=request.meta.get("redirect_chain", []),
            stored=request.meta.get("stored_state", UNKNOWN),
        )


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value is not None else None


def _headers(response: Response, name: bytes) -> list[str]:
    return [value.decode("latin-1") for value in response.headers.getlist(name)]
