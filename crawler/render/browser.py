"""Chromium, driven by Playwright, rendering pages whose every byte its caller fetched.

The browser never touches the network: the page's own navigation is
fulfilled from the body Scrapy downloaded, each other request goes to
:func:`~crawler.render.guard.refusal` and then to the caller's *fetch*
(Scrapy, with every rule), and Chromium is launched behind a proxy that
does not exist, so a request that escaped interception (a worker's, a
WebSocket) fails instead of leaving; WebRTC may use no UDP of its own.

One browser per process, one context at a time, a new page per render,
closed after: a reused page grew without bound (475 to 930 MB over 500
renders). The context is replaced every :attr:`Chromium.recycle_after`
renders. While pages render, a watchdog reads the memory of the browser's
processes twice a second: a renderer over the page cap is ended (its page
fails with ``memory``), a browser over its cap restarted. A renderer that
crashes, or a browser that goes away, is noticed at once by Playwright's
events; that page is tried once more in a fresh context (and browser).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Container
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from crawler.render.memory import browser_processes, descendants_usage
from crawler.render.page import Bounds, Ended, Failure, Fetch, Fulfilment, Refused, Rendered, bounded, render_page

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

__all__ = ["Bounds", "Chromium", "Failure", "Fulfilment", "Refused", "Rendered"]

logger = logging.getLogger(__name__)

#: Where Chromium would send a request no route caught: the discard port, which nothing serves.
_NOWHERE = "http://127.0.0.1:9"
#: Chromium reads only the last --disable-features, and ours comes after Playwright's: so this list
#: repeats what Playwright disables for its interception to work (HTTP navigations kept on HTTP,
#: redirects of intercepted fetches) and for a quiet start, then adds ours (no DNS prefetch).
_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "PreconnectToSearch",
    "NetworkPrediction",
    "InterestFeedContentSuggestions",
)
_LAUNCH_ARGS = (
    f"--proxy-server={_NOWHERE}",
    "--proxy-bypass-list=<-loopback>",  # loopback too goes to the proxy, so nowhere
    "--disable-dev-shm-usage",  # containers give /dev/shm 64 MB
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-features=" + ",".join(_DISABLED_FEATURES),
    "--no-first-run",
    "--mute-audio",
    # WebRTC may use no UDP but through the proxy (there is none): no STUN, TURN, ICE check or mDNS.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
_LAUNCH_SECONDS = 60.0  # starting the browser on a loaded machine
_WATCH_EVERY = 0.5  # seconds between two looks at the browser's memory while pages render
_KILL_WINDOW = 5.0  # seconds after the watchdog ended a renderer in which a crash is its doing
_LAUNCHES_FAILED = 2  # browser starts failed in a row after which no page waits for another
_MiB = 1024 * 1024


def _one_line(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


@dataclass(slots=True, eq=False)  # by identity: kept in a set
class _Session:
    """One context of one browser, and the renders using it."""

    browser: Browser
    context: BrowserContext
    gone: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    pids: frozenset[int] = frozenset()  # the browser's own process, once known
    renders: int = 0
    users: int = 0
    retired: bool = False
    browser_retired: bool = False


class Chromium:
    def __init__(
        self,
        executable: str,
        user_agent: str,
        bounds: Bounds,
        roots: Container[str],
        *,
        recycle_after: int = 500,
        memory_cap: int = 1536 * _MiB,
        page_memory_cap: int = 1024 * _MiB,
    ) -> None:
        self.executable = executable
        self.user_agent = user_agent
        self.bounds = bounds
        self.roots = roots
        self.recycle_after = recycle_after
        self.memory_cap = memory_cap  # the browser's processes together (PSS)
        self.page_memory_cap = page_memory_cap  # one renderer process (PSS)
        self.launches = 0
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._session: _Session | None = None
        self._lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()
        self._active = 0  # renders under way
        self._watchdog: asyncio.Task[None] | None = None
        self._memory_kill = 0.0  # when the watchdog last ended a renderer (monotonic)
        self._pids: dict[Browser, frozenset[int]] = {}  # each browser's own process
        self._launch_failures = 0
        self._open_sessions: set[_Session] = set()  # not closed yet (a retired one may still render)

    async def render(self, url: str, headers: dict[str, str], body: bytes, fetch: Fetch) -> Rendered:
        """Render *body* (the 200 response of *url*) and return its DOM, or why not (``failure``);
        never raises for a page's fault. A crash or a lost browser is tried once more."""
        result = Rendered()
        self._active += 1
        if self._watchdog is None or self._watchdog.done():
            self._watchdog = asyncio.ensure_future(self._watch_memory())
            self._watchdog.add_done_callback(_retrieved)
        try:
            for attempt in (1, 2):
                result = Rendered(attempts=attempt)
                try:
                    if self._launch_failures >= _LAUNCHES_FAILED:
                        raise RuntimeError(f"{self._launch_failures} starts failed in a row")
                    session = await self._take()
                except Exception as error:  # noqa: BLE001 - a browser or driver that cannot start (a missing library)
                    self._launch_failures += 1
                    # Never started, or no longer: no page can be rendered (the crawl stops).
                    result.no_browser = self.launches == 0 or self._launch_failures >= _LAUNCHES_FAILED
                    result.failure, result.error = Failure.BROWSER, f"Chromium did not start: {_one_line(error)}"
                    return result
                self._launch_failures = 0
                started = time.monotonic()
                cause = await self._render_once(session, url, headers=headers, body=body, fetch=fetch, result=result)
                if cause is None:
                    return result
                killed = self._memory_kill  # a crash just after the watchdog ended a renderer
                if cause is Failure.CRASH and killed > started and time.monotonic() - killed < _KILL_WINDOW:
                    cause, result.error = Failure.MEMORY, f"its renderer passed {self.page_memory_cap // _MiB} MB"
                result.failure, result.html = cause, None
                if cause not in (Failure.CRASH, Failure.BROWSER):
                    return result
                logger.info("render of %s: %s; trying once more in a fresh context", url, result.error)
                session.retired = True  # the next take opens a fresh context (and browser, if it went away)
            return result
        finally:
            self._active -= 1

    async def _render_once(
        self, session: _Session, url: str, *, headers: dict[str, str], body: bytes, fetch: Fetch, result: Rendered
    ) -> Failure | None:
        """One render in *session*: ``None`` when the DOM came back, else why not (``result.error``)."""
        try:
            await render_page(
                session.context,
                url,
                headers=headers,
                body=body,
                fetch=fetch,
                roots=self.roots,
                bounds=self.bounds,
                result=result,
                gone=session.gone,
            )
        except Ended as ended:
            result.error = ended.detail
            if ended.cause is Failure.BROWSER or result.stuck:
                self._restart(session)
            return ended.cause
        except Exception as error:  # noqa: BLE001 - a page that breaks the browser is a finding
            result.error = _one_line(error)
            if session.gone.done():
                return Failure.BROWSER
            return Failure.ERROR
        finally:
            self._give_back(session)
        return None

    async def _take(self) -> _Session:
        async with self._lock:
            session = self._session
            if session is None or session.retired or session.gone.done():
                if session is not None:
                    session.retired = True
                    if session.gone.done():
                        self._restart(session)
                    self._retire(session)
                session = self._session = await self._open()
            session.users += 1
            return session

    def _give_back(self, session: _Session) -> None:
        session.users -= 1
        session.renders += 1
        if session.renders >= self.recycle_after:
            session.retired = True
        if session.retired:
            self._retire(session)

    async def _watch_memory(self) -> None:
        """While pages render: end a renderer over the page cap, restart a browser over its cap."""
        while self._active > 0:
            usage = await asyncio.to_thread(descendants_usage)
            for pid, used in usage.renderers:
                if used > self.page_memory_cap:
                    logger.info("a renderer uses %d MB, over the page cap: ending it", used // _MiB)
                    self._memory_kill = time.monotonic()
                    with suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            session = self._session
            # While a retired browser finishes its pages, their memory is no reason to retire this one.
            draining = any(other.users for other in self._open_sessions if other is not session)
            if usage.used > self.memory_cap and session is not None and not session.browser_retired and not draining:
                logger.info("Chromium uses %d MB, over its cap: restarting it", usage.used // _MiB)
                self._restart(session)
                self._retire(session)
            await asyncio.sleep(_WATCH_EVERY)

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

                self._playwright = await bounded(async_playwright().start(), _LAUNCH_SECONDS, "starting Playwright")
            before = set(await asyncio.to_thread(browser_processes))
            launch = self._playwright.chromium.launch(
                executable_path=self.executable,
                headless=True,
                args=list(_LAUNCH_ARGS),
                handle_sigint=False,
                handle_sigterm=False,
                handle_sighup=False,
            )
            browser = await bounded(launch, _LAUNCH_SECONDS, "starting Chromium")
            self.launches += 1
            self._browser = browser
            self._pids[browser] = frozenset(await asyncio.to_thread(browser_processes)) - before
        options = {"user_agent": self.user_agent, "service_workers": "block", "accept_downloads": False}
        context = await bounded(browser.new_context(**options), self.bounds.call, "a new context")  # type: ignore[arg-type]
        session = _Session(browser, context, pids=self._pids.get(browser, frozenset()))
        self._open_sessions.add(session)

        def disconnected(_: Browser) -> None:
            if not session.gone.done():
                session.gone.set_result(None)

        browser.on("disconnected", disconnected)
        return session

    def _retire(self, session: _Session) -> None:
        """Close *session* once its last render is done (never under a running one)."""
        if session.users > 0 or (session is self._session and not session.retired):
            return
        if session is self._session:
            self._session = None
        self._open_sessions.discard(session)
        task = asyncio.ensure_future(self._close(session))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close(self, session: _Session) -> None:
        """Close a context, and its browser when retired; a browser that does not answer is killed."""
        try:
            await bounded(session.context.close(), self.bounds.call, "closing a context")
            if session.browser_retired:
                await bounded(session.browser.close(), self.bounds.call, "closing the browser")
                self._pids.pop(session.browser, None)
        except Exception as error:  # noqa: BLE001 - gone already, or stuck
            logger.debug("closing a Chromium context: %s", error)
            if session.browser_retired and session.browser.is_connected():
                alive = set(browser_processes())  # still a browser of ours (not a reused PID)
                for pid in session.pids & alive:  # a browser that does not answer is ended
                    logger.info("Chromium (pid %d) does not answer: ending it", pid)
                    with suppress(OSError):
                        os.kill(pid, signal.SIGKILL)

    async def close(self) -> None:
        """Close the browser and Playwright's driver (at the end of the crawl)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            with suppress(asyncio.CancelledError):
                await self._watchdog
        async with self._lock:
            session, self._session = self._session, None
            if session is not None:
                self._restart(session)
                await self._close(session)
            if self._browser is not None:  # no session left on it
                with suppress(Exception):
                    await bounded(self._browser.close(), self.bounds.call, "closing the browser")
                self._browser = None
            if self._closing:
                await asyncio.gather(*self._closing, return_exceptions=True)
            if self._playwright is not None:
                with suppress(Exception):
                    await bounded(self._playwright.stop(), self.bounds.call, "stopping Playwright")
                self._playwright = None


def _retrieved(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.warning("the render memory watchdog stopped: %s", _one_line(error))
