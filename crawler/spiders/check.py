"""The HTTP side of ``check``: a small spider that fetches what :class:`~crawler.check.plan.SetCheck`
asks for, exactly as served (no redirect followed, no decompression, no retry), and
:func:`check_published`, the check run in this process (or, when this process's reactor
has already run, as a crawl's is, in a child process: a reactor never starts twice).
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

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response
from scrapy.settings import Settings
from twisted.python.failure import Failure

from crawler.check.plan import PAGE_BYTES, Fetch, SetCheck
from crawler.check.result import CheckResult
from crawler.protocol import MAX_BYTES

__all__ = ["CheckSpider", "check_published", "check_settings"]


def check_settings(user_agent: str, timeout: float) -> Settings:
    """Scrapy's defaults trimmed to a plain client: answers reach the spider as the server sent them."""
    settings = Settings()
    settings.setdict(
        {
            "USER_AGENT": user_agent,
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
            "DOWNLOAD_TIMEOUT": timeout,
            "DOWNLOAD_MAXSIZE": MAX_BYTES + 1,  # compressed never more than the 50 MiB it may hold
            "DOWNLOAD_WARNSIZE": 0,
            "RETRY_ENABLED": False,
            "COOKIES_ENABLED": False,
            "CONCURRENT_REQUESTS": 8,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
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

    def __init__(self, plan: SetCheck, deadline: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.deadline = deadline
        self._stopping: list[asyncio.Task[None]] = []  # a reference, or the loop may drop the task

    async def start(self) -> AsyncIterator[Any]:
        loop = asyncio.get_event_loop()
        self._timer = loop.call_later(self.deadline, self._out_of_time)
        for fetch in self.plan.start():
            yield self.request(fetch)

    def request(self, fetch: Fetch) -> Request:
        meta: dict[str, Any] = {"fetch": fetch, "dont_redirect": True, "handle_httpstatus_all": True}
        if fetch.role == "page":
            meta["download_maxsize"] = PAGE_BYTES
        return Request(fetch.url, callback=self.parse, errback=self.failed, meta=meta, dont_filter=True)

    def parse(self, response: Response) -> Iterator[Request]:
        fetch: Fetch = response.meta["fetch"]
        for following in self.plan.answered(fetch, response.status, _headers(response), response.body):
            yield self.request(following)

    def failed(self, failure: Failure) -> Iterator[Request]:
        request = getattr(failure, "request", None)
        if request is None:
            return
        message = failure.getErrorMessage() or type(failure.value).__name__
        oversized = "larger than download max size" in message  # Scrapy's words for DOWNLOAD_MAXSIZE
        for following in self.plan.failed(request.meta["fetch"], message.splitlines()[0][:200], oversized=oversized):
            yield self.request(following)

    def _out_of_time(self) -> None:
        """The total deadline: what is left is reported unchecked, before Scrapy cancels it."""
        self.plan.interrupted(self.deadline)
        engine = self.crawler.engine
        assert engine is not None
        self._stopping.append(asyncio.get_event_loop().create_task(engine.close_spider_async(reason="deadline")))

    def closed(self, reason: str) -> None:
        self._timer.cancel()


def _reactor_has_run() -> bool:
    if "twisted.internet.reactor" not in sys.modules:
        return False
    from twisted.internet import reactor  # noqa: PLC0415 - only to ask whether it ran

    return bool(getattr(reactor, "_startedBefore", False))


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
) -> CheckResult:
    """Check the set published at *url* (a site root or a sitemap URL) as a search engine reads it."""
    options: dict[str, Any] = {
        "user_agent": user_agent, "expect": expect, "sample": sample, "extra_urls": extra_urls,
        "timeout": timeout, "deadline": deadline, "robots_agent": robots_agent,
    }  # fmt: skip
    if _reactor_has_run():
        return _in_child(url, options)
    plan = SetCheck(
        url, user_agent=user_agent, robots_agent=robots_agent, sample=sample, extra_urls=extra_urls, expect=expect
    )
    process = CrawlerProcess(check_settings(user_agent, timeout))
    process.crawl(CheckSpider, plan=plan, deadline=deadline)
    started = time.monotonic()
    process.start()
    return plan.finish(time.monotonic() - started)


_CHILD = """\
import json, sys
from pathlib import Path
from crawler.spiders.check import check_published
url, options = json.loads(sys.stdin.read())
options["expect"] = Path(options["expect"]) if options["expect"] else None
options["extra_urls"] = tuple(options["extra_urls"])
print(json.dumps(check_published(url, **options).as_json()))
"""


def _in_child(url: str, options: dict[str, Any]) -> CheckResult:
    given = {**options, "expect": str(options["expect"]) if options["expect"] else None}
    try:
        child = subprocess.run(  # noqa: S603 - this Python, our own code, the options as JSON on stdin
            [sys.executable, "-c", _CHILD], input=json.dumps([url, given]), capture_output=True, text=True,
            timeout=options["deadline"] + options["timeout"] + 60, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise RuntimeError("the check's child process outlived its deadline") from None
    lines = child.stdout.splitlines()
    if child.returncode != 0 or not lines:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the check's child process failed (exit status {child.returncode}): {last}")
    return CheckResult.from_json(json.loads(lines[-1]))
