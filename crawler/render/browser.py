"""Chromium, driven by Playwright, rendering pages whose every byte its caller fetched.

The browser never touches the network: the page's own navigation is
fulfilled from the body Scrapy downloaded, each other request goes to
:func:`~crawler.render.guard.refusal` and then to the caller's *fetch*
(Scrapy, with every rule), and Chromium is launched behind a proxy that
does not exist, so a request that escaped interception (a worker's, a
WebSocket) fails instead of leaving. The page runs on virtual time: its
timers run as fast as the CPU allows, and the clock stops while a fetch is
pending, so a slow, polite fetch costs no budget.

One browser per process, one context at a time, a new page per render,
closed after: a reused page grew without bound (475 to 930 MB over 500
renders). The context is replaced every :attr:`Chromium.recycle_after`
renders and the browser when its processes pass a memory cap (their PSS).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Collection
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crawler.render.guard import BrowserRequest, refusal
from crawler.render.memory import descendants_usage

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Request, Route

__all__ = ["Chromium", "Fulfilment", "Refused", "Rendered"]

logger = logging.getLogger(__name__)

#: Where Chromium would send a request no route caught: the discard port, which nothing serves.
_NOWHERE = "http://127.0.0.1:9"
_LAUNCH_ARGS = (
    f"--proxy-server={_NOWHERE}",
    "--proxy-bypass-list=<-loopback>",  # loopback too goes to the proxy, so nowhere
    "--disable-dev-shm-usage",  # containers give /dev/shm 64 MB
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-features=NetworkPrediction,InterestFeedContentSuggestions",
    "--no-first-run",
    "--mute-audio",
)
#: Headers of a downloaded response that describe the transfer, not the (decoded) body.
_HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "set-cookie"})
_MEMORY_EVERY = 25  # renders between two looks at the browser's memory


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
    error: str | None = None
    no_browser: bool = False  # the browser could not be started: no page can be rendered


def _one_line(error: Exception) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


def fulfilment_headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.lower() not in _HOP_HEADERS}


@dataclass(slots=True)
class _Session:
    """One context of one browser, and the renders using it."""

    browser: Browser
    context: BrowserContext
    renders: int = 0
    users: int = 0
    retired: bool = False
    browser_retired: bool = False


class Chromium:
    def __init__(
        self,
        executable: str,
        user_agent: str,
        wait_budget: float,
        roots: Collection[str],
        *,
        recycle_after: int = 500,
        memory_cap: int = 1536 * 1024 * 1024,
        wall_limit: float = 120.0,
    ) -> None:
        self.executable = executable
        self.user_agent = user_agent
        self.wait_budget = wait_budget
        self.roots = frozenset(roots)
        self.recycle_after = recycle_after
        self.memory_cap = memory_cap
        self.wall_limit = wall_limit  # real seconds a render may take, fetches included
        self.launches = 0
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._session: _Session | None = None
        self._lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()

    async def render(self, url: str, headers: dict[str, str], body: bytes, fetch: Fetch) -> Rendered:
        """Render *body* (the 200 response of *url*) and return its DOM; never raises for a page's fault."""
        result = Rendered()
        try:
            session = await self._take()
        except Exception as error:  # noqa: BLE001 - a browser or driver that cannot start (a missing library)
            result.error, result.no_browser = f"Chromium did not start: {_one_line(error)}", True
            return result
        page: Page | None = None
        try:
            page = await session.context.new_page()
            await self._run(page, url, headers=headers, body=body, fetch=fetch, result=result)
        except Exception as error:  # noqa: BLE001 - a page that breaks the browser is a finding
            result.error = result.error or _one_line(error)
        finally:
            if page is not None:
                try:
                    await page.close()
                except Exception:  # noqa: BLE001 - the browser went away: replaced next time
                    self._restart(session)
            await self._give_back(session)
        return result

    async def _run(
        self, page: Page, url: str, *, headers: dict[str, str], body: bytes, fetch: Fetch, result: Rendered
    ) -> None:
        served = False

        async def route(route: Route, request: Request) -> None:
            nonlocal served
            try:
                if request.is_navigation_request() and request.frame is page.main_frame:
                    if not served and request.url == url:
                        served = True
                        await route.fulfill(status=200, headers=fulfilment_headers(headers), body=body)
                        return
                    if result.navigated_to is None and request.url != url:
                        result.navigated_to = request.url  # a script redirect: Scrapy follows it
                    await route.abort("aborted")
                    return
                wanted = BrowserRequest(
                    request.url, request.method, request.resource_type, tuple(request.headers.items()), url
                )
                why = refusal(wanted, self.roots)
                if why is not None:
                    if why.startswith("resource type"):
                        result.aborted[request.resource_type] += 1
                    else:
                        result.refused.append((request.url, why))
                    await route.abort("blockedbyclient")
                    return
                answer = await fetch(wanted)
                if isinstance(answer, Refused):
                    result.refused.append((request.url, answer.why))
                    await route.abort("blockedbyclient")
                    return
                result.fetched += 1
                await route.fulfill(status=answer.status, headers=fulfilment_headers(answer.headers), body=answer.body)
            except Exception as error:  # noqa: BLE001 - the page closed meanwhile, or the fetch failed
                logger.debug("render of %s: request %s not answered: %s", url, request.url, error)
                with suppress(Exception):  # already closed
                    await route.abort("failed")

        await page.route("**/*", route)
        cdp = await page.context.new_cdp_session(page)
        expired: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_expired(_: Any) -> None:
            if not expired.done():
                expired.set_result(None)

        cdp.on("Emulation.virtualTimeBudgetExpired", on_expired)
        await cdp.send("Emulation.setVirtualTimePolicy", {"policy": "pause"})
        await page.goto(url, wait_until="commit", timeout=self.wall_limit * 1000)
        budget = {"policy": "pauseIfNetworkFetchesPending", "budget": round(self.wait_budget * 1000)}
        await cdp.send("Emulation.setVirtualTimePolicy", budget)
        try:
            await asyncio.wait_for(expired, timeout=self.wall_limit)
        except TimeoutError:
            result.error = f"not settled after {self.wall_limit:g} s: the DOM as it was then"
        result.html = await page.content()

    async def _take(self) -> _Session:
        async with self._lock:
            session = self._session
            if session is None or session.retired or not session.browser.is_connected():
                if session is not None:
                    session.retired = True
                    if not session.browser.is_connected():
                        self._restart(session)
                    self._retire(session)
                session = self._session = await self._open()
            session.users += 1
            return session

    async def _give_back(self, session: _Session) -> None:
        session.users -= 1
        session.renders += 1
        if session.renders >= self.recycle_after:
            session.retired = True
        elif session.renders % _MEMORY_EVERY == 0 and not session.retired:
            used = (await asyncio.to_thread(descendants_usage)).used
            if used > self.memory_cap:
                logger.info("Chromium uses %d MB, over its cap: restarting it", used // 2**20)
                self._restart(session)
        if session.retired:
            self._retire(session)

    def _restart(self, session: _Session) -> None:
        """Close *session*'s browser with it; the next render launches another."""
        session.retired = session.browser_retired = True
        if self._browser is session.browser:
            self._browser = None

    async def _open(self) -> _Session:
        browser = self._browser
        if browser is None or not browser.is_connected():
            if self._playwright is None:
                from playwright.async_api import async_playwright  # noqa: PLC0415 - only when rendering

                self._playwright = await async_playwright().start()
            browser = await self._playwright.chromium.launch(
                executable_path=self.executable,
                headless=True,
                args=list(_LAUNCH_ARGS),
                handle_sigint=False,
                handle_sigterm=False,
                handle_sighup=False,
            )
            self.launches += 1
            self._browser = browser
        context = await browser.new_context(user_agent=self.user_agent, service_workers="block", accept_downloads=False)
        return _Session(browser, context)

    def _retire(self, session: _Session) -> None:
        """Close *session* once its last render is done (never under a running one)."""
        if session.users > 0 or (session is self._session and not session.retired):
            return
        if session is self._session:
            self._session = None
        task = asyncio.ensure_future(self._close(session))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close(self, session: _Session) -> None:
        try:
            await session.context.close()
            if session.browser_retired:
                await session.browser.close()
        except Exception as error:  # noqa: BLE001 - gone already
            logger.debug("closing a Chromium context: %s", error)

    async def close(self) -> None:
        """Close the browser and Playwright's driver (at the end of the crawl)."""
        async with self._lock:
            session, self._session = self._session, None
            if session is not None:
                self._restart(session)
                await self._close(session)
            if self._browser is not None:  # no session left on it
                await self._browser.close()
                self._browser = None
            if self._closing:
                await asyncio.gather(*self._closing, return_exceptions=True)
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None
