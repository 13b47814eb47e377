"""The default speed adapts to the server: fewer requests in flight when its
latency grows under load, a pause for Retry-After, and Crawl-delay still a
floor; a --delay given by the user stays fixed. Real crawls against servers
on 127.0.0.1."""

from __future__ import annotations

import re
import statistics
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from scrapy.settings import Settings

from crawler.downloadermiddlewares.backoff import retry_after_seconds
from settings.values import adapts
from tests.conftest import run_cli, sitemap_locs
from tests.local_server import LocalServer
from tests.server import NOT_PAGES
from tests.timing import assert_paced

PAGES = 60


class LoadedServer(LocalServer):
    """Pages whose answer slows with the number of requests in flight (latency = k x in-flight²);
    optionally a page that first answers 503 with Retry-After, and a robots.txt."""

    def __init__(self, k: float = 0.004, robots: str = "User-agent: *\nAllow: /\n", retry_after: str | None = None):
        super().__init__(LoadedHandler)
        self.k, self.robots, self.retry_after = k, robots, retry_after
        self.lock = threading.Lock()
        self.in_flight = 0
        self.arrivals: list[tuple[float, str, int]] = []  # (time, path, requests in flight on arrival)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def pages(self) -> list[tuple[float, str, int]]:
        return [arrival for arrival in self.arrivals if arrival[1] not in NOT_PAGES]


class LoadedHandler(BaseHTTPRequestHandler):
    server: LoadedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.in_flight += 1
            load = self.server.in_flight
            first_time = all(path != self.path for _, path, _ in self.server.arrivals)
            self.server.arrivals.append((time.monotonic(), self.path, load))
        try:
            if self.path == "/robots.txt":
                self._answer(200, self.server.robots.encode(), "text/plain")
                return
            if self.path == "/busy.html" and first_time and self.server.retry_after is not None:
                self._answer(503, b"busy", "text/plain", {"Retry-After": self.server.retry_after})
                return
            time.sleep(self.server.k * load * load)
            found = re.fullmatch(r"/p(\d+)\.html", self.path)
            number = int(found.group(1)) if found else 0
            links = "".join(f'<a href="/p{(number * 7 + n) % PAGES}.html">p</a>' for n in range(1, 7))
            extra = '<a href="/busy.html">busy</a>' if self.server.retry_after is not None else ""
            title = f"Page {number}" if found else self.path  # busy.html is no copy of p0.html (a duplicate)
            body = f"<html><head><title>{title}</title></head><body>{links}{extra}</body></html>"
            self._answer(200, body.encode(), "text/html; charset=utf-8")
        finally:
            with self.server.lock:
                self.server.in_flight -= 1

    def _answer(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def serve(**options: object) -> Iterator[LoadedServer]:
    server = LoadedServer(**options).start()  # type: ignore[arg-type]
    yield server
    server.stop()


@pytest.fixture
def loaded() -> Iterator[LoadedServer]:
    yield from serve()


def crawl_at(server: LoadedServer, out: Path, *options: str) -> list[int]:
    """Crawl; the requests in flight at each page request's arrival."""
    server.arrivals.clear()
    result = run_cli("crawl", server.url(), "--out", str(out), "--no-state", "-q", *options)
    assert result.returncode == 0, result.stderr
    return [load for _, _, load in server.pages()]


def test_fewer_requests_are_in_flight_when_the_server_slows_under_load(loaded: LoadedServer, tmp_path: Path) -> None:
    fixed = crawl_at(loaded, tmp_path / "fixed", "--delay", "0", "--concurrency", "8")
    adaptive = crawl_at(loaded, tmp_path / "adaptive", "--concurrency", "8")
    assert len(fixed) == len(adaptive) == PAGES + 1  # the same pages either way
    # A fixed delay keeps the cap's 8 in flight, each answer slowing the next; the default
    # delay follows the latency and settles near its target of 2 in flight.
    assert statistics.mean(fixed) >= 5, fixed
    assert statistics.mean(adaptive) <= 0.6 * statistics.mean(fixed), (adaptive, fixed)
    assert statistics.median(adaptive) <= 3, adaptive


def test_retry_after_pauses_the_site_and_the_page_is_fetched_after(tmp_path: Path) -> None:
    for server in serve(k=0.0, retry_after="1"):
        out = tmp_path / "out"
        result = run_cli("crawl", server.url(), "--out", str(out), "--no-state", "-q", "--concurrency", "2")
        assert result.returncode == 0, result.stderr
        pages = server.pages()
        refused = next(index for index, (_, path, _) in enumerate(pages) if path == "/busy.html")
        again = next(index for index, (_, path, _) in enumerate(pages) if path == "/busy.html" and index > refused)
        # One second, as asked (the 503's arrival may be logged a little late on a loaded machine).
        assert pages[again][0] - pages[refused][0] >= 0.9
        # Nothing else was sent during the pause but the one request already on its way (--concurrency 2).
        start = pages[refused][0]
        assert sum(1 for when, _, _ in pages if start + 0.15 < when < start + 0.9) <= 1, " ".join(
            f"{when - start:.3f}:{path}" for when, path, _ in pages if start - 0.3 < when < start + 1.2
        )
        assert server.url("/busy.html") in sitemap_locs(out, server.url("").rstrip("/"))


def test_crawl_delay_stays_a_floor_for_the_adaptive_speed(tmp_path: Path) -> None:
    for server in serve(k=0.0, robots="User-agent: *\nCrawl-delay: 0.2\n"):
        run = run_cli("crawl", server.url(), "--out", str(tmp_path / "out"), "--no-state", "-q", "--max-pages", "8")
        assert run.returncode == 0, run.stderr
        times = [when for when, _, _ in server.pages()]
        assert len(times) >= 7
        assert_paced(times, 0.2)


def test_a_delay_the_user_gives_is_fixed() -> None:
    settings = Settings()
    settings.setmodule("settings", priority="project")
    assert adapts(settings)
    settings.set("DOWNLOAD_DELAY", 0.5, priority="cmdline")
    assert not adapts(settings)


def test_retry_after_is_read_as_seconds_or_as_a_date() -> None:
    now = time.time()
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert retry_after_seconds(formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds("-5") is None


def test_the_concurrency_limit_holds_without_a_delay(loaded: LoadedServer, tmp_path: Path) -> None:
    loads = crawl_at(loaded, tmp_path / "out", "--delay", "0", "--concurrency", "2")
    assert len(loads) == PAGES + 1 and max(loads) <= 2, loads  # 16 (CONCURRENT_REQUESTS) with Scrapy's downloader
