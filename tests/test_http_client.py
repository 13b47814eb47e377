"""Every request the crawler sends outside Scrapy's downloader (``crawler/services/http.py``):
the project's User-Agent, one deadline over connect, headers and body, a capped body,
redirects on the same origin only, and IndexNow off the reactor's thread.

The trap servers below log every request with its arrival, its end and whether the client
cut it; times are ``time.monotonic()``, one clock for every process on Linux.
"""

from __future__ import annotations

import gc
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

import settings as project_settings
from crawler.protocol import MAX_BYTES
from crawler.services.http import DeadlineExceeded, FetchError, RedirectRefused, fetch
from settings import USER_AGENT
from tests.conftest import crawl, run_cli
from tests.reactor_ticks import TICK, read_ticks

ROOT = Path(__file__).parent.parent
#: How far from the deadline a cut may be seen (a loaded 2-core machine, a trickle step, Python's start).
TOLERANCE = 1.0
GAP = 0.05  # seconds between two bytes of a trickle
PAD = "a" * 400  # a header of 400 bytes: 20 s at a byte every 50 ms
KEY = "0123456789abcdef"
XML = {"Content-Type": "application/xml"}
HTML = {"Content-Type": "text/html; charset=utf-8"}


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    gap: float = 0.0  # > 0: the whole answer, status line and headers too, a byte at a time
    hold: float = 0.0  # seconds of silence before answering
    repeat: int = 1  # the body is sent this many times (a large body without a large string)

    def head(self) -> bytes:
        lines = [f"HTTP/1.1 {self.status} X", *(f"{k}: {v}" for k, v in self.headers.items())]
        lines += [f"Content-Length: {len(self.body) * self.repeat}", "Connection: close", "", ""]
        return "\r\n".join(lines).encode()


@dataclass
class Hit:
    method: str
    path: str
    agent: str | None
    arrived: float
    ended: float = 0.0
    cut: bool = False  # the client closed the connection before the whole answer was sent
    sent: int = 0  # bytes written before the end
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def took(self) -> float:
        assert self.done.wait(30), f"{self.path} still being answered"
        return self.ended - self.arrived


class Trap(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Answer] = {}
        self.log: list[Hit] = []

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def hits(self, path: str) -> list[Hit]:
        return [hit for hit in self.log if hit.path == path]


class _Handler(BaseHTTPRequestHandler):
    server: Trap
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        hit = Hit(self.command, self.path, self.headers.get("User-Agent"), time.monotonic())
        self.server.log.append(hit)
        answer = self.server.routes.get(self.path, Answer(404, HTML, b"missing"))
        head = answer.head()
        parts = [head[i : i + 1] for i in range(len(head))] if answer.gap else [head]
        parts += [answer.body] * answer.repeat
        self.close_connection = True
        try:
            time.sleep(answer.hold)
            for part in parts:  # bounded: the answer's own bytes
                self.wfile.write(part)
                hit.sent += len(part)
                time.sleep(answer.gap)
        except OSError:  # the client closed the connection: EPIPE or ECONNRESET on the next write
            hit.cut = True
        finally:
            hit.ended = time.monotonic()
            hit.done.set()


def _serve() -> Iterator[Trap]:
    server = Trap()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def trap() -> Iterator[Trap]:
    yield from _serve()


@pytest.fixture
def other() -> Iterator[Trap]:
    """A server on another origin (another port)."""
    yield from _serve()


def urlset(*locs: str) -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return (
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()
    )


def index(*locs: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>'.encode()


# -- the deadline ---------------------------------------------------------------------------


def test_headers_sent_a_byte_at_a_time_are_cut_at_the_deadline(trap: Trap) -> None:
    body = urlset(trap.url("/a"))
    trap.routes["/slow.xml"] = Answer(200, {**XML, "X-Pad": PAD}, body, gap=GAP)
    trap.routes["/fast.xml"] = Answer(200, {**XML, "X-Pad": PAD}, body)  # the same answer, at once
    slow = run_cli("validate", trap.url("/slow.xml"), "--timeout", "2", timeout=60)
    assert slow.returncode == 1
    assert f"cannot read: {trap.url('/slow.xml')} did not answer in full within 2 s" in slow.stdout
    (hit,) = trap.hits("/slow.xml")
    assert 2 - TOLERANCE <= hit.took <= 2 + TOLERANCE
    assert hit.cut and hit.sent < len(PAD)  # cut inside the headers
    # Control: the same server, fast, is read in full.
    fast = run_cli("validate", trap.url("/fast.xml"), "--timeout", "2", timeout=60)
    assert fast.returncode == 0, fast.stdout + fast.stderr
    (hit,) = trap.hits("/fast.xml")
    assert not hit.cut and hit.took < 2


def test_a_connect_that_never_completes_is_cut_at_the_deadline() -> None:
    """A listening socket whose accept queue is full: the kernel drops the SYN, so connect hangs."""
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        fillers = [socket.socket() for _ in range(3)]
        for filler in fillers:
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="within 1 s"):
            fetch(f"http://127.0.0.1:{port}/", user_agent=USER_AGENT, deadline=1.0)
        assert time.monotonic() - started <= 1 + TOLERANCE
        for filler in fillers:
            filler.close()


def test_a_failed_connection_says_why_in_the_system_s_words() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once the socket is closed
    with pytest.raises(FetchError, match=r"\(Connection refused\)$"):
        fetch(f"http://127.0.0.1:{port}/", user_agent=USER_AGENT, deadline=5)
    with pytest.raises(ValueError, match="not a valid port"):
        fetch("http://127.0.0.1:99999/", user_agent=USER_AGENT)  # httpx takes it; the socket would not


def test_a_remote_body_is_cut_at_the_size_cap(trap: Trap) -> None:
    chunk = b" " * 65536
    trap.routes["/huge.xml"] = Answer(200, XML, chunk, repeat=4 * MAX_BYTES // len(chunk))  # 200 MiB of spaces
    result = run_cli("validate", trap.url("/huge.xml"), timeout=60)
    assert result.returncode == 1 and ": error: size: " in result.stdout, result.stdout
    (hit,) = trap.hits("/huge.xml")
    assert hit.took < 30
    assert hit.cut and hit.sent < MAX_BYTES + 16 * 1024 * 1024  # what socket buffers hold past the cap


def test_a_body_read_in_part_leaves_nothing_on_stderr(trap: Trap, caplog: pytest.LogCaptureFixture) -> None:
    """The audit's preflight reads one byte of /sitemap.xml (its status is enough): the stream
    stopped early is closed in the loop, not left for asyncio to log "Task was destroyed" (the
    first line on a user's terminal)."""
    trap.routes["/big"] = Answer(200, HTML, b"x" * 65536, repeat=4)
    for _ in range(3):
        assert fetch(trap.url("/big"), user_agent=USER_AGENT, max_bytes=1).body == b"x"
    gc.collect()
    assert [record.getMessage() for record in caplog.records if record.name == "asyncio"] == []


# -- redirects and the User-Agent -------------------------------------------------------------


def test_a_redirect_to_another_origin_is_not_followed(trap: Trap, other: Trap) -> None:
    trap.routes["/sitemap.xml"] = Answer(200, XML, index(trap.url("/here.xml"), trap.url("/away.xml")))
    trap.routes["/here.xml"] = Answer(302, {"Location": "/real.xml"})  # same origin: followed
    trap.routes["/real.xml"] = Answer(200, XML, urlset(trap.url("/a")))
    trap.routes["/away.xml"] = Answer(302, {"Location": other.url("/theirs.xml")})
    other.routes["/theirs.xml"] = Answer(200, XML, urlset(trap.url("/b")))
    result = run_cli("validate", trap.url("/sitemap.xml"), timeout=60)
    assert result.returncode == 1
    refused = f"redirected to another origin: {other.url('/theirs.xml')} (not followed)"
    assert result.stdout.splitlines() == [f"{trap.url('/away.xml')}:1:1: error: read: cannot read: {refused}"]
    assert [hit.path for hit in trap.log] == ["/sitemap.xml", "/here.xml", "/real.xml", "/away.xml"]
    assert other.log == []
    assert {hit.agent for hit in trap.log} == {USER_AGENT}
    # Control: a client that follows every redirect reaches the other origin from the same URL.
    assert httpx.get(trap.url("/away.xml"), follow_redirects=True, trust_env=False).status_code == 200
    assert [hit.path for hit in other.log] == ["/theirs.xml"]


def test_a_same_origin_redirect_loop_ends_after_ten_hops(trap: Trap) -> None:
    trap.routes["/loop"] = Answer(301, {"Location": "/loop"})
    with pytest.raises(RedirectRefused, match="more than 10 redirects"):
        fetch(trap.url("/loop"), user_agent=USER_AGENT, deadline=10)
    assert len(trap.hits("/loop")) == 11  # the first request and ten hops


# -- IndexNow, after the crawl --------------------------------------------------------------


def site(trap: Trap, endpoint: Answer) -> None:
    trap.routes["/robots.txt"] = Answer(200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n")
    trap.routes["/"] = Answer(200, HTML, b'<html><body><a href="/a">a</a></body></html>')
    trap.routes["/a"] = Answer(200, HTML, b"<html><body>the page a</body></html>")  # not a copy of /
    trap.routes[f"/{KEY}.txt"] = Answer(200, {"Content-Type": "text/plain"}, KEY.encode())
    trap.routes["/indexnow"] = endpoint


def notify(trap: Trap, out: Path, *options: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = crawl(trap.url("/"), out, "--indexnow-endpoint", trap.url("/indexnow"), "--indexnow-key", KEY, *options,
                   env={"PYTHONPATH": str(ROOT), **(env or {})})  # fmt: skip
    assert "Traceback" not in result.process.stderr and "Warning" not in result.process.stderr, result.process.stderr
    return result.code, result.process.stderr


def test_indexnow_runs_beside_the_reactor(trap: Trap, tmp_path: Path) -> None:
    site(trap, Answer(200, hold=2.0))  # the endpoint thinks for 2 s
    ticks = tmp_path / "ticks"
    extensions = {**project_settings.EXTENSIONS, "tests.reactor_ticks.ReactorTicks": 0}
    config = tmp_path / "ticks.toml"
    table = "".join(f'"{name}" = {order}\n' for name, order in extensions.items() if order is not None)
    config.write_text(f"[settings.EXTENSIONS]\n{table}")
    code, stderr = notify(trap, tmp_path / "public", "--config", str(config), env={"TEST_REACTOR_TICKS": str(ticks)})
    assert code == 0, stderr
    assert "IndexNow: 2 URLs sent in 1 batch(es)" in stderr  # the crawl waited for the outcome
    (post,) = trap.hits("/indexnow")
    assert post.took >= 2.0
    during = [tick for tick in read_ticks(str(ticks)) if post.arrived + TICK < tick < post.ended - TICK]
    assert len(during) >= 10, len(during)  # ~36 at 50 ms a tick; a reactor blocked by the POST has none
    assert [(hit.method, hit.agent) for hit in [*trap.hits(f"/{KEY}.txt"), post]] == [
        ("GET", USER_AGENT),
        ("POST", USER_AGENT),
    ]


def test_an_indexnow_endpoint_trickling_its_headers_is_cut_at_the_deadline(trap: Trap, tmp_path: Path) -> None:
    site(trap, Answer(200, {"X-Pad": PAD}, gap=GAP))
    code, stderr = notify(trap, tmp_path / "public", "--set", "SITEMAP_INDEXNOW_TIMEOUT=1.5")
    assert code == 0, stderr  # published; the notification failed and says so
    assert "IndexNow: not sent: batch of 2 URLs failed" in stderr and "within 1.5 s" in stderr
    posts = trap.hits("/indexnow")
    assert len(posts) == 3  # tried three times
    for post in posts:
        assert 1.5 - TOLERANCE <= post.took <= 1.5 + TOLERANCE
        assert post.cut
