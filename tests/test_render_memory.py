"""Chromium's life over many renders (SPEC S9): its context is replaced every ``recycle_after``
renders, the whole browser when its processes pass the memory cap, and no render fails for it.

Each page's script counts its renders in ``localStorage``, which lives as long as the context:
the count a page shows says how many renders its context has served, so a recycle is seen in
the pages themselves. Real Debian chromium-headless-shell; every byte comes from memory.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil

import pytest

from crawler.render.browser import Bounds, Chromium, Fulfilment
from crawler.render.guard import BrowserRequest

CHROMIUM = shutil.which("chromium-headless-shell")
if CHROMIUM is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium-headless-shell (apt-get install chromium-headless-shell)")
    pytest.skip("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)",
                allow_module_level=True)  # fmt: skip

ORIGIN = "http://render-memory.invalid/"
PAGE = (
    b"<!DOCTYPE html><html><head><title>count</title></head><body>"
    b'<script>var n = Number(localStorage.getItem("n") || 0) + 1; localStorage.setItem("n", n);'
    b'document.body.setAttribute("data-n", n);</script></body></html>'
)
_COUNT = re.compile(r'data-n="(\d+)"')


async def _nothing(wanted: BrowserRequest) -> Fulfilment:
    return Fulfilment(404, {"content-type": "text/plain"}, b"")


def _renders(browser: Chromium, count: int, parallel: int = 1) -> list[int]:
    """The count each of *count* renders showed, in order, *parallel* at a time."""

    async def run() -> list[int]:
        slots = asyncio.Semaphore(parallel)

        async def one(number: int) -> int:
            async with slots:
                rendered = await browser.render(f"{ORIGIN}p/{number}", {"content-type": "text/html"}, PAGE, _nothing)
            assert rendered.error is None and rendered.html is not None, (number, rendered.error)
            match = _COUNT.search(rendered.html)
            assert match, rendered.html
            return int(match.group(1))

        try:
            return list(await asyncio.gather(*(one(n) for n in range(count))))
        finally:
            await browser.close()

    return asyncio.run(run())


def _browser(**options: int) -> Chromium:
    assert CHROMIUM is not None
    return Chromium(CHROMIUM, "sitemap-crawler-test", Bounds.from_budget(0.5, 300), {ORIGIN}, **options)


def test_the_context_is_replaced_every_recycle_after_renders_in_the_same_browser() -> None:
    browser = _browser(recycle_after=10)
    assert _renders(browser, 30) == [*range(1, 11)] * 3
    assert browser.launches == 1


def test_renders_under_way_when_the_context_retires_finish_in_it() -> None:
    browser = _browser(recycle_after=10)
    counts = _renders(browser, 30, parallel=4)
    # a context takes renders while it has served fewer than 10: at most 3 more are already inside
    assert max(counts) <= 10 + 3
    assert counts.count(1) >= 3  # three contexts at least
    assert browser.launches == 1


def test_a_browser_over_its_memory_cap_is_restarted_and_renders_go_on() -> None:
    browser = _browser(memory_cap=1)  # looked at twice a second while pages render: always over
    counts = _renders(browser, 30)  # every render gave its DOM
    assert browser.launches >= 2
    assert counts.count(1) == browser.launches  # each browser's first context counts from 1 again
