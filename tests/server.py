"""A local test web server on 127.0.0.1 with a request log.

Static pages live in ``tests/site/<site>/``; the site is chosen by the Host
header (``127.0.0.1`` -> ``main``, ``localhost`` -> ``delay``), so one server
is two hosts of different scope. Behaviours that static files cannot show
(redirects, headers, failures) are routes in :data:`ROUTES`.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.local_server import LocalServer

SITE_ROOT = Path(__file__).parent / "site"
#: What a crawl asks a site for that is no page: robots.txt, and the sitemaps at their
#: conventional locations when robots.txt names none (the crawl's seeds).
NOT_PAGES = frozenset({"/robots.txt", "/sitemap.xml", "/sitemap_index.xml"})
SITES = {"127.0.0.1": "main", "localhost": "delay"}
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain",
    ".xml": "application/xml",
    ".pdf": "application/pdf",
}


@dataclass(frozen=True)
class Hit:
    time: float
    host: str
    path: str  # raw request target, still percent-encoded
    user_agent: str
    status: int = 0


def _calendar(handler: SiteHandler, query: str) -> tuple[int, dict[str, str], bytes]:
    month = int(query.partition("month=")[2] or 0)
    links = f'<a href="/calendar?month={month + 1}">next</a><a href="/calendar?month={month - 1}">prev</a>'
    body = f"<html><body>{links}</body></html>"
    return 200, {"Content-Type": "text/html"}, body.encode()


def _flaky(handler: SiteHandler, query: str) -> tuple[int, dict[str, str], bytes]:
    """Fails the first time it is asked for, then works (a transient 503)."""
    server = handler.server
    assert isinstance(server, SiteServer)
    with server.lock:
        server.flaky_calls += 1
        first = server.flaky_calls == 1
    if first:
        return 503, {"Content-Type": "text/html"}, b"try again"
    return 200, {"Content-Type": "text/html"}, b"<html><body>recovered</body></html>"


def _redirect(status: int, location: str):  # type: ignore[no-untyped-def]
    return lambda handler, query: (status, {"Location": location}, b"")


def _page(headers: dict[str, str], body: str = "<html><body>page</body></html>"):  # type: ignore[no-untyped-def]
    return lambda handler, query: (200, {"Content-Type": "text/html", **headers}, body.encode())


def _status(status: int):  # type: ignore[no-untyped-def]
    return lambda handler, query: (
        status,
        {"Content-Type": "text/html"},
        f"<html><body>{status}</body></html>".encode(),
    )


def _static_with_headers(name: str, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    def serve(handler: SiteHandler, query: str) -> tuple[int, dict[str, str], bytes]:
        body = (SITE_ROOT / "media" / name).read_bytes()
        return 200, {"Content-Type": "text/html; charset=utf-8", **headers}, body

    return serve


def _gzip_file(name: str):  # type: ignore[no-untyped-def]
    def serve(handler: SiteHandler, query: str) -> tuple[int, dict[str, str], bytes]:
        data = (SITE_ROOT / "main" / name).read_bytes().replace(b"{port}", str(handler.server.port).encode())
        return 200, {"Content-Type": "application/x-gzip"}, gzip.compress(data)

    return serve


@lru_cache(maxsize=1)
def _bomb() -> bytes:
    """A sitemap that is 60 MB once decompressed but 60 KB on the wire."""
    head = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    head += b"<url><loc>http://127.0.0.1:{port}/from-bomb.html</loc></url>"
    return gzip.compress(head + b" " * 60_000_000 + b"</urlset>", compresslevel=9)


ROUTES = {
    "main": {
        "/old": _redirect(301, "/older"),
        "/older": _redirect(302, "/new-page.html"),
        "/loop-a": _redirect(301, "/loop-b"),
        "/loop-b": _redirect(301, "/loop-a"),
        "/away": _redirect(301, "http://localhost:{port}/elsewhere.html"),
        "/Case.html": _redirect(301, "/case.html"),
        "/dir": _redirect(301, "/dir/"),
        "/xrobots-noindex": _page({"X-Robots-Tag": "noindex"}),
        "/xrobots-none": _page({"X-Robots-Tag": "none"}),
        "/xrobots-googlebot": _page({"X-Robots-Tag": "googlebot: noindex, nofollow"}),
        "/xrobots-otherbot": _page({"X-Robots-Tag": "otherbot: noindex"}),
        "/canon-header": _page({"Link": '</canon-target.html>; rel="canonical"'}),
        "/gone-404": _status(404),
        "/gone-410": _status(410),
        "/error-500": _status(500),
        "/flaky": _flaky,
        "/calendar": _calendar,
        "/seed-sitemap-2.xml.gz": _gzip_file("seed-sitemap-2.xml"),
        "/seed-bomb.xml.gz": lambda handler, query: (200, {"Content-Type": "application/x-gzip"}, _bomb()),
    },
    "delay": {},
    # A site whose robots.txt fails with a server error; a site whose home page moved away.
    "broken": {"/robots.txt": _status(503)},
    "moved": {"/": _redirect(301, "http://localhost:{port}/")},
    # hreflang from an HTTP Link header instead of the HTML.
    "media": {
        "/fr/": _static_with_headers(
            "fr/index.html", {"Link": '</en/>; rel="alternate"; hreflang="en", </fr/>; rel="alternate"; hreflang="fr"'}
        )
    },
}


class SiteServer(LocalServer):
    def __init__(self, sites: dict[str, str] | None = None, root: Path = SITE_ROOT) -> None:
        super().__init__(SiteHandler)
        self.sites = sites or SITES
        self.root = root  # a copy of tests/site that a test may change between crawls
        self.hits: list[Hit] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)  # notified on every request, and once it is answered
        self.flaky_calls = 0
        self.other_port = 0  # a second server, linked to as "another port"

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def reset(self) -> None:
        with self.lock:
            self.hits.clear()
            self.errors.clear()
            self.flaky_calls = 0

    def paths(self, host: str = "127.0.0.1") -> list[str]:
        with self.lock:
            return [hit.path for hit in self.hits if hit.host == host]

    def wait_for(self, count: int, host: str = "127.0.0.1", timeout: float = 60) -> list[str]:
        """The paths asked for on *host*, once there are at least *count* (an event, not a sleep;
        ``AssertionError`` after *timeout* seconds)."""
        with self.arrived:
            if not self.arrived.wait_for(lambda: sum(h.host == host for h in self.hits) >= count, timeout):
                raise AssertionError(f"fewer than {count} requests reached {host} in {timeout} s")
            return [hit.path for hit in self.hits if hit.host == host]


class SiteHandler(BaseHTTPRequestHandler):
    server: SiteServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def log_error(self, format: str, *args: object) -> None:
        with self.server.lock:
            self.server.errors.append(format % args)

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        with self.server.lock:
            index = len(self.server.hits)
            self.server.hits.append(Hit(time.monotonic(), host, self.path, self.headers.get("User-Agent", "")))
            self.server.arrived.notify_all()
        site = self.server.sites.get(host)
        target = urlsplit(self.path)
        route = ROUTES.get(site or "", {}).get(target.path)
        if site is None:
            status, headers, body = 404, {"Content-Type": "text/plain"}, b"unknown host"
        elif route is not None:
            status, headers, body = route(self, target.query)
        else:
            status, headers, body = self.static(site, unquote(target.path))
        headers = {k: v.replace("{port}", str(self.server.port)) for k, v in headers.items()}
        if status == 200 and "ETag" not in headers:
            # Validators as a real server sends them, so conditional requests get 304s.
            headers["ETag"] = '"' + hashlib.sha1(body, usedforsecurity=False).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == headers["ETag"]:
                status, body = 304, b""
        with self.server.lock:
            if index < len(self.server.hits):
                hit = self.server.hits[index]
                self.server.hits[index] = Hit(hit.time, hit.host, hit.path, hit.user_agent, status)
            self.server.arrived.notify_all()  # answered: its status is known
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def static(self, site: str, path: str) -> tuple[int, dict[str, str], bytes]:
        root = (self.server.root / site).resolve()
        file = (root / path.lstrip("/")).resolve()
        if file.is_dir():
            file = file / "index.html"
        if root not in file.parents or not file.is_file():
            return 404, {"Content-Type": "text/html"}, b"<html><body>not found</body></html>"
        content_type = TYPES.get(file.suffix, "application/octet-stream")
        if file.name.endswith(".cp1252.html"):
            content_type = "text/html; charset=windows-1252"
        body = file.read_bytes()
        if file.suffix in (".html", ".txt", ".xml"):
            # Absolute URLs in the pages need the ports chosen at run time.
            body = body.replace(b"{port}", str(self.server.port).encode())
            body = body.replace(b"{other_port}", str(self.server.other_port).encode())
            # News dates relative to now: one hour old ("fresh") and three days old.
            now = datetime.now(UTC).replace(microsecond=0)
            body = body.replace(b"{fresh}", (now - timedelta(hours=1)).isoformat().encode())
            body = body.replace(b"{old}", (now - timedelta(days=3)).isoformat().encode())
        return 200, {"Content-Type": content_type}, body
