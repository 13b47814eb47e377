"""``--render``: a page's response goes through Chromium before the spider reads it (SPEC S9).

Scrapy downloaded the page with every rule (robots.txt, scope, redirects,
status, size, politeness); here, on the way back, a 200 HTML page that needs
it is rendered from that very body. Every request the page makes is fetched
by Scrapy too, through :meth:`ExecutionEngine.download_async`: the same
downloader middlewares (scope, robots.txt, staging access, backoff, the
User-Agent) and the same download slot, so it counts against the site's
concurrency and delay. Redirects of those fetches are followed here, hop by
hop, each hop a new request through the same rules.

Rendering here, not in the spider's callback, bounds the pages waiting for
the browser: a response held here holds its place among Scrapy's
CONCURRENT_REQUESTS, so the crawl cannot download the site ahead of the
browser. ``--render-pages`` is how many render at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from scrapy.http.request import NO_CALLBACK

from crawler.page.headers import is_html, is_noindex, robots_directives
from crawler.page.html import parse_html
from crawler.reasons import OutOfScope, RobotsDisallowed
from crawler.render.browser import Bounds, Chromium, Fulfilment, Refused, Rendered
from crawler.render.evidence import Because, Groups, differences, script_group
from crawler.render.guard import BrowserRequest, Origins, refusal
from crawler.render.signs import ALWAYS, OWN_SCRIPT, render_signs
from crawler.run.context import config_of
from crawler.run.reading import html_source
from crawler.signals import url_warning
from crawler.urls import resolve_link, site_root

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from settings.config import SitemapConfig

__all__ = ["RenderMiddleware"]

logger = logging.getLogger(__name__)

#: Request headers of the page's script passed on to Scrapy: what an API may answer by. Cookies,
#: credentials and the browser's own identity are not (Scrapy sends the crawler's).
_PASSED_HEADERS = frozenset({"accept", "accept-language", "content-type", "x-requested-with"})
_CACHE_BYTES = 64 * 1024 * 1024  # scripts and data shared by the pages of a site, fetched once


class RenderMiddleware:
    def __init__(self, crawler: Crawler, config: SitemapConfig) -> None:
        self.crawler = crawler
        self.config = config
        render = config.render
        self.mode = render.mode
        self.roots = Origins(config.hosts.scope(config.start_url), render.allow_origins)
        self.allowed = frozenset(render.allow_origins)
        self.browser = Chromium(
            render.chromium,
            str(crawler.settings.get("USER_AGENT")),
            Bounds.from_budget(render.wait_budget, render.max_requests),
            self.roots,
            page_memory_cap=render.max_memory,
        )
        self.slots = asyncio.Semaphore(render.pages)
        self.groups = Groups()
        self.learnt = asyncio.Condition()  # a group's sample came back
        self.cache: OrderedDict[str, Fulfilment] = OrderedDict()
        self.cached_bytes = 0
        self.pending: dict[str, asyncio.Future[Fulfilment | Refused]] = {}
        self.reported: set[str] = set()
        self.stopping: asyncio.Task[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        if not config.render.enabled:
            raise NotConfigured
        middleware = cls(crawler, config)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    async def spider_closed(self) -> None:
        self.crawler.stats.set_value("render/browser_launches", self.browser.launches)
        await self.browser.close()

    # -- the page -------------------------------------------------------------

    async def process_response(self, request: Request, response: Response) -> Response:
        if not request.meta.get("page") or response.status != 200 or not isinstance(response, TextResponse):
            return response
        content_type = response.headers.get(b"Content-Type")
        if "download_stopped" in response.flags or not is_html((content_type or b"").decode("latin-1")):
            return response
        body, encoding, _ = html_source(response)
        raw = render_signs(body, response.url, encoding, self.allowed)
        header_robots = [value.decode("latin-1") for value in response.headers.getlist(b"X-Robots-Tag")]
        directives = robots_directives(
            raw.meta, header_robots, self.config.robots_token, self.config.audit.ignored_directives
        )
        why = [ALWAYS] if self.mode == ALWAYS else raw.signs
        stats = self.crawler.stats
        if is_noindex(directives) or not why:
            skipped = "raw-noindex" if is_noindex(directives) else "no-sign"
            stats.inc_value(f"render/skipped/{skipped}")
            request.meta["render"] = {"rendered": False, "skipped": skipped}
            return response
        group = script_group(raw.scripts)
        because = await self.decide(why, group, hashlib.blake2b(body, digest_size=16).digest())
        if because is Because.GROUP_UNCHANGED:
            stats.inc_value("render/skipped/group-unchanged")
            request.meta["render"] = {"rendered": False, "why": why, "skipped": str(because)}
            return response
        learning = because in (Because.SAMPLED, Because.RECHECK)
        changed: list[str] | None = None
        try:
            rendered = await self.render(response)
            if learning and rendered.html is not None:
                chain = request.meta.get("redirect_chain", [])
                changed = self.compare(body, encoding, rendered.html, response.url, chain)
        finally:
            if learning:
                await self.learn(group, changed)
        if rendered.html is None:
            cause = str(rendered.failure or "error")
            stats.inc_value("render/failed")
            stats.inc_value(f"render/failed/{cause}")
            request.meta["render"] = {
                "rendered": False,
                "why": why,
                "because": str(because),
                "failed": cause,
                "detail": rendered.error,
            }
            return response
        if rendered.attempts > 1:
            stats.inc_value("render/retried")
        stats.inc_value("render/rendered")
        stats.inc_value(f"render/because/{because}")
        request.meta["render"] = {"rendered": True, "why": why, "because": str(because)}
        if changed is not None:
            request.meta["render"]["changed"] = changed
        request.meta["rendered"] = rendered
        return response

    async def render(self, response: Response) -> Rendered:
        headers = {
            name.decode("latin-1"): (response.headers.get(name) or b"").decode("latin-1") for name in response.headers
        }
        async with self.slots:
            rendered = await self.browser.render(response.url, headers, response.body, self.fetch)
        self.account(rendered, response.url)
        if rendered.no_browser:
            self.stop(rendered.error or "Chromium did not start")
        return rendered

    # -- auto: by evidence, per group -----------------------------------------

    async def decide(self, why: list[str], group: str, body: bytes) -> Because:
        """Why this page is rendered (or not): always, an app shell, or what its group has shown
        (waiting while the group's samples are in the browser)."""
        if why == [ALWAYS]:
            return Because.ALWAYS
        if why != [OWN_SCRIPT]:
            return Because.APP_SHELL
        while (because := self.groups.plan(group, body)) is Because.WAIT:
            async with self.learnt:
                await self.learnt.wait()
        return because

    async def learn(self, group: str, changed: list[str] | None) -> None:
        self.groups.learn(group, changed)
        async with self.learnt:
            self.learnt.notify_all()

    def compare(self, body: bytes, encoding: str, html: str, url: str, chain: list[str]) -> list[str]:
        """What rendering changed on a sample, of what the sitemap depends on (the URLs that
        redirected to the page are the page)."""
        raw = parse_html(body, url, encoding)
        shown = parse_html(html.encode("utf-8"), url, "utf-8", form_links=False)
        return differences(raw, shown, url, self.config.robots_token, chain)

    def stop(self, why: str) -> None:
        """A browser that never started renders nothing: a crawl without it would publish the site
        as seen without JavaScript, which is what --render was asked to avoid. Stopped once, in a
        task of its own (closing waits for this very response)."""
        if self.stopping is None:
            logger.error("%s: the crawl stops (previous sitemaps kept)", why)
            engine = self.crawler.engine
            self.stopping = asyncio.get_event_loop().create_task(engine.close_spider_async(reason=f"stopped, {why}"))

    def account(self, rendered: Rendered, page: str) -> None:
        stats = self.crawler.stats
        for kind, count in rendered.aborted.items():
            stats.inc_value(f"render/aborted/{kind}", count)
        for url, why in rendered.refused:
            stats.inc_value("render/refused")
            if url in self.reported or len(self.reported) >= self.config.max_not_requested:
                continue
            self.reported.add(url)
            self.crawler.signals.send_catch_log(
                signal=url_warning, url=url, code="render-fetch", detail=f"{why} (asked by {page})"
            )

    # -- what the page asks for -----------------------------------------------

    async def fetch(self, wanted: BrowserRequest) -> Fulfilment | Refused:
        """*wanted*, through Scrapy: from the cache, or joined to the same fetch under way."""
        key = f"{wanted.method.upper()} {wanted.url}"
        if (hit := self.cache.get(key)) is not None:
            self.cache.move_to_end(key)
            self.crawler.stats.inc_value("render/cache_hit")
            return hit
        if (under_way := self.pending.get(key)) is not None:
            return await asyncio.shield(under_way)
        future: asyncio.Future[Fulfilment | Refused] = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        answer: Fulfilment | Refused = Refused("not fetched: the crawl stopped")
        try:
            answer = await self.download(wanted)
        finally:
            del self.pending[key]
            future.set_result(answer)
        if isinstance(answer, Fulfilment):
            self.remember(key, answer)
        return answer

    async def download(self, wanted: BrowserRequest) -> Fulfilment | Refused:
        """One fetch, its redirects followed hop by hop: each hop passes the guard and Scrapy's rules."""
        assert self.crawler.engine is not None
        headers = {name: value for name, value in wanted.headers if name.lower() in _PASSED_HEADERS}
        url = wanted.url
        for _ in range(self.config.max_redirects + 1):
            request = Request(
                url,
                method=wanted.method.upper(),
                headers=headers,
                callback=NO_CALLBACK,
                meta={"render_fetch": wanted.page, "allow_offsite": site_root(url) in self.allowed},
            )
            self.crawler.stats.inc_value("render/fetched")
            try:
                response = await self.crawler.engine.download_async(request)
            except RobotsDisallowed:
                return Refused("disallowed by robots.txt")
            except OutOfScope:
                return Refused("off scope")
            except IgnoreRequest as error:
                return Refused(f"not fetched: {error}")
            except Exception as error:  # noqa: BLE001 - a network error: the page goes without it
                return Refused(f"fetch failed: {type(error).__name__}")
            self.crawler.stats.inc_value("render/responses")  # not pages: the summary's rate leaves them out
            location = response.headers.get(b"Location")
            if not (300 <= response.status < 400 and location):
                return Fulfilment(response.status, _headers(response), response.body)
            target = resolve_link(response.url, location.decode("latin-1"))
            if target is None:
                return Refused(f"redirect to an unusable Location from {url}")
            why = refusal(BrowserRequest(target, wanted.method, wanted.resource_type), self.roots)
            if why is not None:
                return Refused(f"redirect from {url} to {target}: {why}")
            url = target
        return Refused(f"more than {self.config.max_redirects} redirects")

    def remember(self, key: str, answer: Fulfilment) -> None:
        """Keep a successful answer for the other pages, unless the site says not to store it."""
        no_store = "no-store" in answer.headers.get("cache-control", "").lower()
        if answer.status != 200 or no_store or len(answer.body) > _CACHE_BYTES // 8:
            return
        self.cache[key] = answer
        self.cached_bytes += len(answer.body)
        while self.cached_bytes > _CACHE_BYTES and self.cache:
            _, old = self.cache.popitem(last=False)
            self.cached_bytes -= len(old.body)


def _headers(response: Response) -> dict[str, Any]:
    return {
        name.decode("latin-1").lower(): b", ".join(response.headers.getlist(name)).decode("latin-1")
        for name in response.headers
    }
