"""The HTTP side of ``check``: a small spider that fetches what :class:`~crawler.check.plan.SetCheck`
asks for, exactly as served (no redirect followed, no decompression, no retry), and
:func:`check_published`, the check run in this process (or, when this process's reactor
has already run, as a crawl's is, in a child process: a reactor never starts twice).

The spider is the one owner of its downloader slot's pace: :class:`crawler.pace.Pace`, the
crawl's rule, fed robots.txt's Crawl-delay and the server's trouble. The deadline is a bound:
every request carries it to the download handler (crawler/downloadhandlers/deadline.py),
which ends a transfer there, and requests still waiting in the slot are failed at once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import DownloadCancelledError
from scrapy.http import Response
from scrapy.settings import Settings
from twisted.python.failure import Failure

from crawler import reactor_runs
from crawler.check.findings import ServedFinding
from crawler.check.plan import PAGE_BYTES, Fetch, SetCheck
from crawler.check.result import CheckResult
from crawler.failures import DeadlineReached
from crawler.pace import Pace
from crawler.protocol import MAX_BYTES
from settings import SITEMAP_MAX_CRAWL_DELAY

__all__ = ["CheckSpider", "check_published", "check_settings"]

#: Requests in flight without a Crawl-delay (one with it).
CHECK_CONCURRENCY = 4
_HANDLER = "crawler.downloadhandlers.deadline.DeadlineHandler"


def check_settings(user_agent: str, timeout: float, resolve: tuple[str, ...] = ()) -> Settings:
    """Scrapy's defaults trimmed to a plain client: answers reach the spider as the server sent them;
    *resolve* pins names to addresses (``--resolve``, crawler/resolver.py)."""
    settings = Settings()
    settings.setdict(
        {
            "USER_AGENT": user_agent,
            "TWISTED_DNS_RESOLVER": "crawler.resolver.PinnedResolver",
            "SITEMAP_RESOLVE": list(resolve),
            "ROBOTSTXT_OBEY": False,  # robots.txt is one of the things checked, read by the plan
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "ERROR",
            "DOWNLOADER_MIDDLEWARES_BASE": {
                "scrapy.downloadermiddlewares.downloadtimeout.DownloadTimeoutMiddleware": 350,
                "scrapy.downloadermiddlewares.defaultheaders.DefaultHeadersMiddleware": 400,
                "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": 500,
            },
            "SPIDER_MIDDLEWARES_BASE": {},
            "EXTENSIONS_BASE": {
                "scrapy.extensions.corestats.CoreStats": 0,
            },
            "DEFAULT_REQUEST_HEADERS": {"Accept": "*/*", "Accept-Encoding": "gzip, deflate"},
            "DOWNLOAD_HANDLERS": {"http": _HANDLER, "https": _HANDLER},
            "DOWNLOAD_TIMEOUT": timeout,
            "DOWNLOAD_MAXSIZE": MAX_BYTES + 1,  # compressed never more than the 50 MiB it may hold
            "DOWNLOAD_WARNSIZE": 0,
            "RETRY_ENABLED": False,
            "COOKIES_ENABLED": False,
            "CONCURRENT_REQUESTS": CHECK_CONCURRENCY,  # one origin: every request is the slot's
            "CONCURRENT_REQUESTS_PER_DOMAIN": CHECK_CONCURRENCY,
            "DOWNLOAD_DELAY": 0,
        },
        priority="cmdline",
    )
    return settings


def _headers(response: Response) -> dict[str, list[str]]:
    return {
        bytes(name).decode("latin-1").lower(): [bytes(value).decode("latin-1") for value in values]
        for name, values in response.headers.items()
    }


class CheckSpider(Spider):
    name = "check"

    def __init__(self, plan: SetCheck, deadline: float, max_crawl_delay: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.deadline = deadline
        self.pace = Pace(fixed=True, base=0.0, concurrency=CHECK_CONCURRENCY, cap=max_crawl_delay)
        self._stopping: list[asyncio.Task[None]] = []  # a reference, or the loop may drop the task

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> CheckSpider:
        spider: CheckSpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._reached, signal=signals.request_reached_downloader)
        return spider

    async def start(self) -> AsyncIterator[Any]:
        loop = asyncio.get_event_loop()
        self._ends = time.monotonic() + self.deadline
        self._timer = loop.call_later(self.deadline, self._out_of_time)
        self.plan.fits = self._fits
        for fetch in self.plan.start():
            yield self.request(fetch)

    def request(self, fetch: Fetch) -> Request:
        meta: dict[str, Any] = {
            "fetch": fetch, "dont_redirect": True, "handle_httpstatus_all": True, "download_slot": self.plan.origin,
            "deadline": self._ends,
        }  # fmt: skip
        if fetch.role == "page":
            meta["download_maxsize"] = PAGE_BYTES
        return Request(fetch.url, callback=self.parse, errback=self.failed, meta=meta, dont_filter=True)

    def parse(self, response: Response) -> Iterator[Request]:
        fetch: Fetch = response.meta["fetch"]
        following = self.plan.answered(fetch, response.status, _headers(response), response.body)
        if fetch.role == "robots":
            self.pace.robots(self.plan.crawl_delay)
        elif response.status == 429 or response.status >= 500:
            self.pace.trouble(time.monotonic())
        else:
            self.pace.answered(time.monotonic())
        self._apply()
        for request in following:
            yield self.request(request)

    def failed(self, failure: Failure) -> Iterator[Request]:
        request = getattr(failure, "request", None)
        if request is None:
            return
        message = failure.getErrorMessage() or type(failure.value).__name__
        # DOWNLOAD_MAXSIZE: Scrapy's words when Content-Length says so, a cancelled download when
        # the body only grows past it (an endless chunked body); nothing else cancels a check's.
        oversized = "larger than download max size" in message or isinstance(failure.value, DownloadCancelledError)
        if not oversized:
            self.pace.trouble(time.monotonic())
            self._apply()
        for following in self.plan.failed(request.meta["fetch"], message.splitlines()[0][:200], oversized=oversized):
            yield self.request(following)

    def _fits(self, wanted: int) -> int:
        """How many of *wanted* requests, one at a time at the pace's delay, end well within the
        deadline (a fifth of the time left is kept for their answers)."""
        if self.pace.delay <= 0:
            return wanted
        left = self._ends - time.monotonic()
        return min(wanted, int(left * 0.8 / self.pace.delay))

    def _reached(self, request: Request, spider: Spider) -> None:
        self._apply()  # the slot exists from its first request on

    def _apply(self) -> None:
        """The slot's delay and concurrency, from the pace: the one place they are written."""
        engine = self.crawler.engine
        slot = engine.downloader.slots.get(self.plan.origin) if engine else None
        if slot is not None:
            slot.delay = self.pace.delay
            slot.concurrency = self.pace.in_flight
            slot.jitter = 0.0  # a Crawl-delay is a minimum; without one the delay is 0

    def _out_of_time(self) -> None:
        """The total deadline: what is left is reported unchecked; requests waiting in the slot
        are failed (a Crawl-delay may hold them long), those in transfer end by their deadline."""
        self.plan.interrupted(self.deadline)
        engine = self.crawler.engine
        assert engine is not None
        for slot in engine.downloader.slots.values():
            slot.close()  # its delayed start of the next request
            while slot.queue:
                request, waiting = slot.queue.popleft()
                waiting.errback(DeadlineReached(f"the deadline came before {request.url} was fetched"))
        self._stopping.append(asyncio.get_event_loop().create_task(engine.close_spider_async(reason="deadline")))

    def closed(self, reason: str) -> None:
        self._timer.cancel()


def check_published(
    url: str,
    *,
    user_agent: str,
    expect: Path | None = None,
    sample: int = 50,
    extra_urls: tuple[str, ...] = (),
    timeout: float = 30.0,
    deadline: float = 600.0,
    robots_agent: str = "googlebot",
    max_crawl_delay: float = SITEMAP_MAX_CRAWL_DELAY,
    resolve: tuple[str, ...] = (),
) -> CheckResult:
    """Check the set published at *url* (a site root or a sitemap URL) as a search engine reads it."""
    options: dict[str, Any] = {
        "user_agent": user_agent, "expect": expect, "sample": sample, "extra_urls": extra_urls,
        "timeout": timeout, "deadline": deadline, "robots_agent": robots_agent, "max_crawl_delay": max_crawl_delay,
        "resolve": resolve,
    }  # fmt: skip
    if reactor_runs.has_run():
        return _in_child(url, options)
    plan = SetCheck(
        url, user_agent=user_agent, robots_agent=robots_agent, sample=sample, extra_urls=extra_urls, expect=expect
    )
    process = CrawlerProcess(check_settings(user_agent, timeout, resolve))
    process.crawl(CheckSpider, plan=plan, deadline=deadline, max_crawl_delay=max_crawl_delay)
    started = time.monotonic()
    reactor_runs.start(process)
    return plan.finish(time.monotonic() - started)


_CHILD = """\
import json, sys
from pathlib import Path
from crawler.spiders.check import check_published
url, options = json.loads(sys.stdin.read())
options["expect"] = Path(options["expect"]) if options["expect"] else None
options["extra_urls"] = tuple(options["extra_urls"])
options["resolve"] = tuple(options["resolve"])
print(json.dumps(check_published(url, **options).as_json()))
"""


def _in_child(url: str, options: dict[str, Any]) -> CheckResult:
    """The check run by a child process; one that outlives its deadline or fails is a finding
    (the copy is not known to be right), never a traceback."""
    given = {**options, "expect": str(options["expect"]) if options["expect"] else None}
    try:
        child = subprocess.run(  # noqa: S603 - this Python, our own code, the options as JSON on stdin
            [sys.executable, "-c", _CHILD], input=json.dumps([url, given]), capture_output=True, text=True,
            timeout=options["deadline"] + options["timeout"] + 60, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return _unfinished(url, "its process outlived the deadline")
    lines = child.stdout.splitlines()
    if child.returncode != 0 or not lines:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return _unfinished(url, f"its process failed (exit status {child.returncode}): {last[:300]}")
    return CheckResult.from_json(json.loads(lines[-1]))


def _unfinished(url: str, why: str) -> CheckResult:
    return CheckResult(url, findings=[ServedFinding.at(url, "deadline", f"the check did not finish: {why}")])
