"""robots.txt by RFC 9309, parsed with Protego.

Fetched once per origin before its first page. The outcome decides the
rules (section 2.3.1): a 2xx is parsed, its first 500 KiB only (2.5, as
Google does; the cut is noted in the report); redirects are followed up to
five hops on the same site; a 4xx means everything is allowed, whatever its
body says; a 5xx, or no answer at all (reset, timeout, a body over the size
cap), means nothing may be crawled. A disallowed request fails with
:class:`~crawler.reasons.RobotsDisallowed`, so the report can say ``robots``.

The sitemap files robots.txt names, and those the user gives, are meant to
be read and pass whatever its rules say; every other URL, the files a
sitemap index lists among them, obeys them. That is decided here, from the
rules themselves, never from a flag a request carries: a request from a
shared frontier is data, not an order. ``SITEMAP_ROBOTS_IGNORE_RULES`` (the
audit's ``--ignore-robots``) lets every request pass, yet robots.txt is still
fetched and parsed: its ``Sitemap:`` lines seed the crawl and its
Crawl-delay (politeness, not a rule of access) is kept.

Each URL is matched once (a match against a 500 KiB robots.txt costs
milliseconds): the spider matches a link before it builds its Request, and
:class:`SiteRules` gives it a mark (in its meta), a MAC of its URL and agent under a
key it drew at random, so the middleware lets it pass without a second match,
even after it waited in the disk frontier. Only these rules in this process
can make a mark they accept; a request read back from Redis, or a retry's
copy (the mark is taken off when used), is matched again.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from crawler.audit.blockers import without_disallow_all
from crawler.failures import failure_text
from crawler.page.headers import media_type
from crawler.reasons import RobotsDisallowed
from crawler.robots_rules import MAX_ROBOTS_BYTES, MAX_ROBOTS_REDIRECTS, redirect_followed, truncated
from crawler.run.context import config_of, context_of
from crawler.run.robots import SiteRules, robots_user_agent
from crawler.signals import url_warning
from crawler.urls import normalize_or_raw, resolve_link, site_root

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from crawler.distributed.robots import SharedRobots

__all__ = ["MAX_ROBOTS_BYTES", "MAX_ROBOTS_REDIRECTS", "SiteRobotsTxtMiddleware"]

logger = logging.getLogger(__name__)

_DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


def _pass_on(rules: SiteRules, waiter: Deferred[SiteRules]) -> SiteRules:
    waiter.callback(rules)
    return rules


def _origin(request: Request) -> str:
    parts = urlparse_cached(request)
    return f"{parts.scheme}://{parts.netloc}"


def _shared_robots(crawler: Crawler) -> SharedRobots | None:
    """robots.txt once for all the workers of a shared crawl (SPEC S8), else ``None``."""
    shared = config_of(crawler).distributed
    if shared is None or not shared.worker:
        return None
    from crawler.distributed.client import connect  # noqa: PLC0415
    from crawler.distributed.robots import SharedRobots  # noqa: PLC0415 - a shared crawl only

    redis = connect(shared.url, shared.ca_file)
    return SharedRobots(redis, shared.crawl, f"{os.getpid()}-{id(crawler):x}", secret=shared.sealing_key)


def html_instead(response: Response) -> bool:
    """Whether a robots.txt answer is an HTML page: served as HTML and reading like one. A real
    robots.txt mislabelled ``text/html`` (a careless server) still has its rules obeyed."""
    kind = response.headers.get(b"Content-Type") or b""
    if not media_type(kind.decode("latin-1")).endswith("html"):
        return False
    head = response.body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype", b"<html", b"<head", b"<body", b"<!--", b"<?xml"))


class SiteRobotsTxtMiddleware:
    def __init__(self, crawler: Crawler):
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.agent = robots_user_agent(crawler)
        self._rules: dict[str, SiteRules | Deferred[SiteRules]] = {}
        self._why: dict[str, str] = {}  # origin -> why its robots.txt could not be read
        self.as_if_no_blocker = config_of(crawler).audit.ignore_disallow_all
        self.shared = _shared_robots(crawler)
        config = config_of(crawler)
        self.hosts = config.audit.hosts
        self.given_sitemaps = config.audit.seed_sitemaps
        # --ignore-robots: still fetched once per origin, for its Sitemap: lines and Crawl-delay.
        self.ignore_rules = config.audit.ignore_robots_rules
        self.audit = config.audit.record_path is not None  # a staging audit's redirects stay on the host
        if self.ignore_rules:  # loud wherever it is set: the audit's --ignore-robots, or the setting itself
            logger.warning(
                "robots.txt of %s is IGNORED (--ignore-robots): its rules are not applied (its Sitemap: lines"
                " and Crawl-delay still are)",
                site_root(config.start_url),
            )
        self._named: dict[str, frozenset[str]] = {}  # origin -> the sitemap files robots.txt names or the user gave

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        if request.meta.get("dont_obey_robotstxt") or request.url.startswith(("data:", "file:")):
            return
        rules = await self.rules_for(request)
        if self.ignore_rules:
            return
        if request.meta.get("sitemap_file") and request.url in self._named.get(_origin(request), ()):
            return
        if rules.vouched(request, self.agent):
            self.crawler.stats.inc_value("robotstxt/allowed_by_spider")  # matched once, by the spider
            return
        if not rules.allowed(request.url, self.agent):
            self.crawler.stats.inc_value("robotstxt/forbidden")
            why = self._why.get(_origin(request))
            raise RobotsDisallowed(
                f"robots.txt of {why}: nothing may be crawled" if why else "disallowed by robots.txt"
            )

    async def rules_for(self, request: Request) -> SiteRules:
        """The rules of *request*'s origin, fetched on first use (once, whoever asks meanwhile)."""
        origin = _origin(request)
        known = self._rules.get(origin)
        if isinstance(known, Deferred):
            # A Deferred hands its result to one awaiter only: each waits on a copy of its own.
            mine: Deferred[SiteRules] = Deferred()
            known.addCallback(_pass_on, mine)
            rules: SiteRules = await maybe_deferred_to_future(mine)
            return rules
        if known is not None:
            return known
        waiting: Deferred[SiteRules] = Deferred()
        self._rules[origin] = waiting
        rules = self._parse(await self._decided(origin), request)
        self._rules[origin] = rules
        waiting.callback(rules)
        return rules

    async def _decided(self, origin: str) -> bytes:
        """The body that decides: fetched here, or once for all the workers of a shared crawl."""
        if self.shared is None:
            return await self._fetch(origin)

        async def fetch() -> tuple[bytes, str | None]:
            return await self._fetch(origin), self._why.get(origin)

        body, why = await self.shared.decided(origin, fetch)
        if why is not None and origin not in self._why:
            self._unavailable(origin, why)  # another worker found it unreadable: say so here too
        return body

    async def _fetch(self, origin: str) -> bytes:
        """The robots.txt body that decides, by RFC 9309 section 2.3.1."""
        url = f"{origin}/robots.txt"
        netloc = origin.split("://", 1)[1]
        stats = self.crawler.stats
        for _ in range(MAX_ROBOTS_REDIRECTS + 1):
            request = Request(
                url,
                priority=1000,
                meta={"dont_obey_robotstxt": True, "allow_offsite": True},
                callback=NO_CALLBACK,
                dont_filter=True,
            )
            stats.inc_value("robotstxt/request_count")
            try:
                response: Response = await self.crawler.engine.download_async(request)
            except Exception as error:  # noqa: BLE001 - reset, timeout, DNS, over the size cap: unreachable
                return self._unavailable(origin, f"{netloc} is unreachable ({failure_text(error)})")
            status = response.status
            stats.inc_value(f"robotstxt/response_status_count/{status}")
            if 300 <= status < 400:
                location = response.headers.get(b"Location")
                target = resolve_link(url, location.decode("latin-1")) if location else None
                if target is None or not redirect_followed(origin, target, same_host=self.audit):
                    return self._allow_all(url, f"answered {status} to {target or 'nowhere'}, off the site")
                url = normalize_or_raw(target)
                continue
            if 200 <= status < 300:
                if html_instead(response):
                    # A CMS's page (a redirect to the home page, a catch-all route): no rules in it.
                    shown = f" ({url})" if url != f"{origin}/robots.txt" else ""
                    why = f"answered with an HTML page{shown}: read as no robots.txt"
                    self._note(f"{origin}/robots.txt", "robots-not-text", why)
                    return b""
                body = truncated(response.body)
                if len(body) < len(response.body):
                    self._note(url, "robots-truncated", f"{len(response.body)} bytes; only the first {len(body)} read")
                # The site's own Disallow: /, never the one standing for an unreadable file.
                return without_disallow_all(body) if self.as_if_no_blocker else body
            if status >= 500:
                return self._unavailable(origin, f"{netloc} answered {status}")
            return b""  # 4xx (or an odd status): no rules, everything may be crawled
        return self._allow_all(url, f"more than {MAX_ROBOTS_REDIRECTS} redirects")

    def _unavailable(self, origin: str, why: str) -> bytes:
        """Nothing may be crawled while robots.txt cannot be read (RFC 9309 2.3.1.4)."""
        logger.warning("robots.txt of %s: nothing may be crawled (RFC 9309)", why)
        self._why[origin] = why
        result = context_of(self.crawler).result
        result.robots_unavailable = result.robots_unavailable or why
        result.unreadable_robots[origin] = why
        return _DISALLOW_ALL

    def _allow_all(self, url: str, why: str) -> bytes:
        """RFC 9309 2.3.1.2: robots.txt out of reach by redirects counts as unavailable, i.e. absent."""
        self._note(url, "robots-unavailable", f"{why}: treated as no robots.txt (everything allowed)")
        return b""

    def _note(self, url: str, code: str, detail: str) -> None:
        logger.warning("%s: %s", url, detail)
        self.crawler.signals.send_catch_log(signal=url_warning, url=url, code=code, detail=detail)

    def _parse(self, body: bytes, request: Request) -> SiteRules:
        rules = SiteRules.from_crawler(self.crawler, body)
        named = [*rules.sitemaps, *self.given_sitemaps]
        if self.hosts is not None:
            named = [self.hosts.to_staging(url) for url in named]
        self._named[_origin(request)] = frozenset(normalize_or_raw(url) for url in named)
        self.crawler.signals.send_catch_log(signal=signals.robots_parsed, robotparser=rules, request=request)
        return rules
