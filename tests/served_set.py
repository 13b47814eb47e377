"""A small site on 127.0.0.1 that serves its pages and its published sitemap set, each
answer breakable by a test (a route in :attr:`SetServer.routes`); and a real caching
proxy to put in front of it, which keeps the first copy of everything it forwards."""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.local_server import LocalServer

Answer = tuple[int, dict[str, str], bytes]
Route = Callable[["SetServer", bytes], Answer]

#: The pages: a home page linking to every article (13 URLs in all).
ARTICLES = [f"/article-{number}.html" for number in range(1, 13)]
TYPES = {".xml": "application/xml", ".gz": "application/gzip"}


def page(path: str) -> bytes:
    links = "".join(f'<a href="{target}">{target}</a>' for target in ARTICLES) if path == "/" else ""
    return f"<html><head><title>{path}</title></head><body><p>{path}</p>{links}</body></html>".encode()


class _Handler(BaseHTTPRequestHandler):
    server: SetServer

    def do_GET(self) -> None:
        status, headers, body = self.server.answer(self.path.split("?", 1)[0], self.headers.get("User-Agent", ""))
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (a body over its limit, a deadline): its right

    def log_message(self, *args: object) -> None:
        pass


class _Server(LocalServer):
    def __init__(self) -> None:
        super().__init__(_Handler)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def answer(self, path: str, user_agent: str) -> Answer:
        raise NotImplementedError


class SetServer(_Server):
    """Pages, robots.txt (:attr:`robots`, ``None``: 404) and the files of *folder* at ``/``."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.robots: str | None = "User-agent: *\nAllow: /\n"
        self.routes: dict[str, Route] = {}
        self.hits: list[tuple[str, str]] = []  # (path, User-Agent)
        self.arrivals: list[tuple[float, str]] = []  # (time.monotonic() as the request arrived, path)
        self.lock = threading.Lock()

    def answer(self, path: str, user_agent: str) -> Answer:
        with self.lock:
            self.hits.append((path, user_agent))
            self.arrivals.append((time.monotonic(), path))
        plain = self.plain(path)
        route = self.routes.get(path)
        return route(self, plain[2]) if route else plain

    def plain(self, path: str) -> Answer:
        """The answer a correctly configured server gives."""
        if path == "/robots.txt":
            if self.robots is None:
                return 404, {"Content-Type": "text/plain"}, b"not found"
            return 200, {"Content-Type": "text/plain"}, self.robots.encode()
        if path == "/" or path in ARTICLES:
            return 200, {"Content-Type": "text/html; charset=utf-8"}, page(path)
        file = self.folder / path.lstrip("/")
        if path.count("/") == 1 and file.suffix in TYPES and file.is_file():
            return 200, {"Content-Type": TYPES[file.suffix]}, file.read_bytes()
        return 404, {"Content-Type": "text/html"}, b"<html><body>not found</body></html>"


class CachingProxy(_Server):
    """A reverse proxy to *origin* that answers every path it has fetched once from its cache."""

    def __init__(self, origin: str) -> None:
        super().__init__()
        self.origin = origin
        self.cache: dict[str, Answer] = {}
        self.lock = threading.Lock()

    def answer(self, path: str, user_agent: str) -> Answer:
        with self.lock:
            cached = self.cache.get(path)
        if cached is not None:
            return cached
        request = urllib.request.Request(self.origin.rstrip("/") + path, headers={"User-Agent": user_agent})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, headers, body = response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            status, headers, body = error.code, dict(error.headers), error.read()
        kept = {name: value for name, value in headers.items() if name.lower() in ("content-type", "content-encoding")}
        answer = (status, kept, body)
        if status == 200:
            with self.lock:
                self.cache[path] = answer
        return answer
