"""A site on 127.0.0.1 whose pages attack the browser that renders them (issue 36, SPEC S9).

Each page is an app shell of a few lines: one loops forever, one loops once a timer fires, one
chains microtasks without end, one allocates until something stops it, one asks for hundreds of
data files, one waits on ``/hold.json`` (held by the server until the test lets it go, so the
test can kill its renderer while the page is in the browser). The good pages build their one
link by script, so a test can tell a rendered page from its shell. Every request is logged with
the server's own clock.
"""

from __future__ import annotations

import threading
import time
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from tests.local_server import LocalServer

HOLD_SECONDS = 60.0  # the longest /hold.json is held when the test never lets it go


def shell(script: str, raw_link: str = "") -> str:
    """An app shell: an empty mount point, an inline script, and perhaps one raw link."""
    link = f'<p><a href="{raw_link}">raw</a></p>' if raw_link else ""
    return (
        "<!doctype html><html><head><title>app</title></head><body>"
        f'<div id="root"></div>{link}<script>{script}</script></body></html>'
    )


def adds_link(target: str, title: str) -> str:
    """A good page's script: the page's text and its one link, built in the browser."""
    return (
        "document.getElementById('root').innerHTML = "
        f"'<h1>{title}</h1><p>Text of {title}, built by its script.</p><a href=\"{target}\">next</a>';"
    )


GOOD = {f"/good-{n}": shell(adds_link(f"/good-{n}-child", f"Good {n}")) for n in range(1, 4)}
CHILDREN = {f"/good-{n}-child": shell(adds_link("/", f"Child {n}")) for n in range(1, 4)}
HOSTILE = {
    "/loop": shell("while (true) {}", raw_link="/after-loop"),
    "/late-loop": shell("setTimeout(() => { while (true) {} }, 300);"),  # within the budget
    "/microtasks": shell("function again() { Promise.resolve().then(again); } again();"),
    "/allocates": shell("const kept = []; while (true) { kept.push(new Float64Array(1 << 20).fill(1)); }"),
    "/many-requests": shell("for (let n = 0; n < 400; n++) { fetch('/data/' + n + '.json'); }"),
}
VICTIM = shell(
    "fetch('/hold.json?' + Math.random()).then((r) => r.json()).then(() => {"
    + adds_link("/victim-child", "Victim")
    + "});"
)


@dataclass(frozen=True)
class Hit:
    time: float  # the server's monotonic clock
    path: str  # with its query
    user_agent: str


class HostileSite(LocalServer):
    def __init__(self, pages: dict[str, str], scripts: dict[str, str] | None = None) -> None:
        super().__init__(HostileHandler)
        self.pages = dict(pages)
        self.scripts = dict(scripts or {})  # path -> JavaScript served
        self.hits: list[Hit] = []
        self.lock = threading.Lock()
        self.asked = threading.Condition(self.lock)
        self.release = threading.Event()  # lets /hold.json answer

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.release.set()
        super().stop()

    def paths(self) -> list[str]:
        with self.lock:
            return [hit.path for hit in self.hits]

    def wait_for(self, prefix: str, count: int = 1, timeout: float = 60.0) -> list[Hit]:
        """The hits whose path starts with *prefix*, once there are *count* (an event, not a sleep)."""
        with self.asked:
            self.asked.wait_for(lambda: len(self._matching(prefix)) >= count, timeout=timeout)
            return self._matching(prefix)

    def _matching(self, prefix: str) -> list[Hit]:
        return [hit for hit in self.hits if hit.path.startswith(prefix)]


class HostileHandler(BaseHTTPRequestHandler):
    server: HostileSite
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        with server.asked:
            server.hits.append(Hit(time.monotonic(), self.path, self.headers.get("User-Agent", "")))
            server.asked.notify_all()
        path = urlsplit(self.path).path
        if path == "/robots.txt":
            self.answer(200, "text/plain", "User-agent: *\nAllow: /\n")
        elif path == "/hold.json":
            server.release.wait(HOLD_SECONDS)
            self.answer(200, "application/json", "{}")
        elif path.startswith("/data/"):
            self.answer(200, "application/json", "{}")
        elif path in server.scripts:
            self.answer(200, "application/javascript", server.scripts[path])
        elif path in server.pages:  # with an ETag, answered 304 to a request that has it
            text = server.pages[path]
            etag = f'"{zlib.crc32(text.encode()):08x}"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.answer(200, "text/html; charset=utf-8", text, {"ETag": etag})
        else:
            self.answer(404, "text/html; charset=utf-8", "<html><body>not found</body></html>")

    def answer(self, status: int, content_type: str, text: str, headers: dict[str, str] | None = None) -> None:
        body = text.encode("utf-8")
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def index(paths: list[str]) -> str:
    """The home page: raw links to *paths* (no script of its own)."""
    links = "".join(f'<li><a href="{path}">{path}</a></li>' for path in paths)
    return f"<!doctype html><html><head><title>Home</title></head><body><ul>{links}</ul></body></html>"
