"""One render of one page, bounded: every browser call has a deadline, and the page ends early on
a crash, a stall (scripts that never yield), or too many requests.

The page runs on virtual time (``Emulation.setVirtualTimePolicy``): its timers run as fast as
the CPU allows and the clock stops while a fetch is pending, so a slow, polite fetch costs no
budget. The budget's expiry is the normal end. A page whose main thread never yields (``while
(true) {}``, an endless chain of microtasks) lets no virtual time pass, so that event never
comes: the page is ended once it has run :attr:`Bounds.stall` real seconds with no fetch of its
own pending. Every call to the browser (a new page, the policy, the content, closing) is awaited
for at most :attr:`Bounds.call` seconds: a renderer that stopped answering cannot hold a crawl.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Container
from contextlib import suppress
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from crawler.render.guard import BrowserRequest, refusal

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request, Route

__all__ = ["Bounds", "Ended", "Failure", "Fetch", "Fulfilment", "Refused", "Rendered", "bounded", "render_page"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Headers of a downloaded response that describe the transfer, not the (decoded) body.
_HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "set-cookie"})
_TICK = 0.25  # seconds between two looks at a page that has not settled
_STALL_GRACE = 15.0  # real seconds past the wait budget a page may run with no fetch pending
_CALL_SECONDS = 10.0  # the least any one call to the browser is given


class Failure(StrEnum):
    """Why a render failed: the report's ``render.failed`` and the stats' ``render/failed/<cause>``."""

    TIMEOUT = "timeout"  # did not settle: scripts that never yield, or a browser call unanswered
    CRASH = "crash"  # its renderer crashed, and again in a fresh context
    MEMORY = "memory"  # its renderer passed the memory cap and was ended
    REQUESTS = "requests"  # it asked for more than --render-max-requests
    BROWSER = "browser"  # the browser went away, and again once restarted
    ERROR = "error"  # anything else the browser raised


@dataclass(frozen=True, slots=True)
class Fulfilment:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Refused:
    why: str


Fetch = Callable[[BrowserRequest], Awaitable[Fulfilment | Refused]]


@dataclass(slots=True)
class Rendered:
    """What one render gave: the DOM as HTML, and what the page asked for."""

    html: str | None = None
    navigated_to: str | None = None  # the first navigation the page's script started
    refused: list[tuple[str, str]] = field(default_factory=list)  # (URL, why) of fetches not made
    aborted: Counter[str] = field(default_factory=Counter)  # resource types never fetched
    fetched: int = 0
    failure: Failure | None = None  # set with error when no DOM came back
    error: str | None = None
    attempts: int = 0
    stuck: bool = False  # the page could not be closed: its browser must go
    no_browser: bool = False  # the browser could not be started: no page can be rendered


@dataclass(frozen=True, slots=True)
class Bounds:
    wait_budget: float  # seconds of virtual time the page's timers may run
    stall: float  # real seconds a page may run with no fetch pending and its budget unspent
    wall: float  # real seconds a render may take, fetches included
    call: float  # real seconds any one call to the browser may take
    max_requests: int  # fetches one page may ask for

    @classmethod
    def from_budget(cls, wait_budget: float, max_requests: int) -> Bounds:
        """The deadlines of a render, from ``--render-wait-budget``: a stall once the budget plus
        15 s have passed with no fetch pending, two minutes in all (or four budgets), each call
        to the browser at least 10 s (or two budgets)."""
        return cls(
            wait_budget=wait_budget,
            stall=wait_budget + _STALL_GRACE,
            wall=max(120.0, 4 * wait_budget),
            call=max(_CALL_SECONDS, 2 * wait_budget),
            max_requests=max_requests,
        )


class Ended(Exception):
    """The render ended before the page settled."""

    def __init__(self, cause: Failure, detail: str) -> None:
        super().__init__(detail)
        self.cause, self.detail = cause, detail


async def bounded(call: Awaitable[T], seconds: float, what: str) -> T:
    """*call*, or :class:`Ended` after *seconds* (the call is cancelled)."""
    try:
        return await asyncio.wait_for(call, timeout=seconds)
    except TimeoutError:
        raise Ended(Failure.TIMEOUT, f"{what}: no answer from the browser in {seconds:g} s") from None


def fulfilment_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.lower() not in _HOP_HEADERS}


@dataclass(slots=True)
class _Watch:
    """What the render's waiting looks at: fetches pending, since when none, and an early end."""

    ended: asyncio.Future[tuple[Failure, str]]
    pending: int = 0
    quiet_since: float = field(default_factory=time.monotonic)
    asked: int = 0

    def end(self, cause: Failure, detail: str) -> None:
        if not self.ended.done():
            self.ended.set_result((cause, detail))


async def render_page(
    context: BrowserContext,
    url: str,
    *,
    headers: dict[str, str],
    body: bytes,
    fetch: Fetch,
    roots: Container[str],
    bounds: Bounds,
    result: Rendered,
    gone: asyncio.Future[None],
) -> None:
    """Render *body* as *url* in a new page of *context*; :class:`Ended` when it cannot settle.

    *gone* is done when the browser disconnects. The page is closed before this returns; a page
    that cannot be closed sets ``result.stuck`` (its browser must be restarted).
    """
    watch = _Watch(asyncio.get_running_loop().create_future())

    def browser_gone(_: object) -> None:
        watch.end(Failure.BROWSER, "the browser went away")

    gone.add_done_callback(browser_gone)
    try:
        page = await bounded(context.new_page(), bounds.call, "a new page")
        page.on("crash", lambda _: watch.end(Failure.CRASH, "the page's renderer crashed"))
        try:
            await _PageRender(
                page=page,
                url=url,
                headers=headers,
                body=body,
                fetch=fetch,
                roots=roots,
                bounds=bounds,
                result=result,
                watch=watch,
            ).load()
        finally:
            watch.end(Failure.ERROR, "closed")  # requests still routed are answered with an abort
            try:
                await bounded(page.close(), bounds.call, "closing the page")
            except Exception as error:  # noqa: BLE001 - a page that will not close takes its browser with it
                logger.debug("render of %s: the page did not close: %s", url, error)
                result.stuck = True
        if result.stuck:
            raise Ended(Failure.TIMEOUT, "the page could not be closed")
    finally:
        gone.remove_done_callback(browser_gone)


@dataclass(kw_only=True)  # no slots: Playwright marks its route handler with an attribute
class _PageRender:
    """One page in the browser: its requests answered, its time budget awaited."""

    page: Page
    url: str
    headers: dict[str, str]
    body: bytes
    fetch: Fetch
    roots: Container[str]
    bounds: Bounds
    result: Rendered
    watch: _Watch
    served: bool = False

    async def load(self) -> None:
        page, bounds, watch = self.page, self.bounds, self.watch
        await self.call(page.route("**/*", self.route), "routing")
        cdp = await self.call(page.context.new_cdp_session(page), "a DevTools session")
        expired: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_expired(_: Any) -> None:
            if not expired.done():
                expired.set_result(None)

        cdp.on("Emulation.virtualTimeBudgetExpired", on_expired)
        await self.call(cdp.send("Emulation.setVirtualTimePolicy", {"policy": "pause"}), "pausing time")
        await self.call(page.goto(self.url, wait_until="commit", timeout=bounds.call * 1000), "loading the page")
        budget = {"policy": "pauseIfNetworkFetchesPending", "budget": round(bounds.wait_budget * 1000)}
        await self.call(cdp.send("Emulation.setVirtualTimePolicy", budget), "the time budget")
        started = time.monotonic()
        while not expired.done():
            if watch.ended.done():
                raise Ended(*watch.ended.result())
            now = time.monotonic()
            if now - started > bounds.wall:
                raise Ended(Failure.TIMEOUT, f"not settled after {bounds.wall:g} s")
            if watch.pending == 0 and now - max(watch.quiet_since, started) > bounds.stall:
                raise Ended(Failure.TIMEOUT, f"its scripts ran {bounds.stall:g} s without yielding")
            waited: set[asyncio.Future[Any]] = {expired, watch.ended}
            await asyncio.wait(waited, timeout=_TICK)
        self.result.html = await self.call(page.content(), "reading the DOM")

    async def call(self, call: Awaitable[T], what: str) -> T:
        """*call* under the call deadline, ended at once by a crash or a disconnect."""
        watch = self.watch
        task = asyncio.ensure_future(call)
        waited: set[asyncio.Future[Any]] = {task, watch.ended}
        done, _ = await asyncio.wait(waited, timeout=self.bounds.call, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            if task.exception() is not None and not watch.ended.done():
                # A call to a page whose renderer just died fails before the crash event comes.
                await asyncio.wait({watch.ended}, timeout=_TICK)
            if task.exception() is not None and watch.ended.done():
                raise Ended(*watch.ended.result())
            return task.result()
        task.cancel()
        task.add_done_callback(_retrieved)
        if watch.ended.done():
            raise Ended(*watch.ended.result())
        # A renderer answers between two tasks of the page: one that never ends keeps it from answering.
        raise Ended(Failure.TIMEOUT, f"its scripts do not yield: {what} got no answer in {self.bounds.call:g} s")

    async def route(self, route: Route, request: Request) -> None:
        """Every request the page makes: its own navigation from the body, the rest through the
        guard and the fetch, at most :attr:`Bounds.max_requests` of them."""
        result, watch = self.result, self.watch
        try:
            if watch.ended.done():
                await route.abort("aborted")
                return
            if request.is_navigation_request() and request.frame is self.page.main_frame:
                if not self.served and request.url == self.url:
                    self.served = True
                    await route.fulfill(status=200, headers=fulfilment_headers(self.headers), body=self.body)
                    return
                if result.navigated_to is None and request.url != self.url:
                    result.navigated_to = request.url  # a script redirect: Scrapy follows it
                await route.abort("aborted")
                return
            wanted = BrowserRequest(
                request.url, request.method, request.resource_type, tuple(request.headers.items()), self.url
            )
            why = refusal(wanted, self.roots)
            if why is not None:
                if why.startswith("resource type"):
                    result.aborted[request.resource_type] += 1
                else:
                    result.refused.append((request.url, why))
                await route.abort("blockedbyclient")
                return
            if watch.asked >= self.bounds.max_requests:
                watch.end(Failure.REQUESTS, f"more than {self.bounds.max_requests} requests (--render-max-requests)")
                await route.abort("blockedbyclient")
                return
            watch.asked += 1
            watch.pending += 1
            try:
                answer = await self.fetch(wanted)
            finally:
                watch.pending -= 1
                watch.quiet_since = time.monotonic()
            if isinstance(answer, Refused):
                result.refused.append((request.url, answer.why))
                await route.abort("blockedbyclient")
                return
            result.fetched += 1
            await route.fulfill(status=answer.status, headers=fulfilment_headers(answer.headers), body=answer.body)
        except Exception as error:  # noqa: BLE001 - the page closed meanwhile, or the fetch failed
            logger.debug("render of %s: request %s not answered: %s", self.url, request.url, error)
            with suppress(Exception):  # already closed
                await route.abort("failed")


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Read a given-up call's outcome, so asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()
