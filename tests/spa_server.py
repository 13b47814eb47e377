"""Single-page-application test sites on 127.0.0.1, each server with its own request log.

A real SPA host answers every extension-less path it has no file for with
the app's shell (200), and the app decides in the browser what the route
is; its JSON API (``/api/...``) is generated here from :data:`SHOP` and
:data:`MIXED`, the static files live in ``tests/site_spa/<site>/``
(``/static/`` is shared). A third server, the "CDN", serves an off-site
script and font: it must be asked for nothing unless the crawl allows its
origin. ``{port}`` and ``{cdn_port}`` in text files become the ports.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.local_server import LocalServer

SPA_ROOT = Path(__file__).parent / "site_spa"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "application/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".txt": "text/plain",
    ".woff2": "font/woff2",
    ".png": "image/png",
}
TEXT = (".html", ".js", ".css", ".json", ".txt")


@dataclass(frozen=True)
class Hit:
    time: float
    host: str
    method: str
    path: str
    user_agent: str
    status: int


@dataclass(frozen=True)
class App:
    """What an app's API answers: its menu, its pages (title, text, extras) and their late links."""

    nav: list[tuple[str, str]]
    pages: dict[str, dict[str, object]]
    related: dict[str, list[str]] = field(default_factory=dict)


def _page(title: str, text: str = "", **extras: object) -> dict[str, object]:
    return {"title": title, "text": text or f"This is {title}.", **extras}


SHOP = App(
    nav=[
        ("/", "Home"),
        ("/products", "Products"),
        ("/about", "About"),
        ("/blog", "Blog"),
        ("/contact", "Contact"),
        ("#/about", "About, the hash route"),
        ("/careers", "Careers"),  # disallowed by robots.txt
        ("/retired", "Old offers"),  # a route the app does not know: a soft 404
        ("/moved", "Moved"),  # its script sends the browser to /landing
        ("http://localhost:{port}/partner-site", "A partner"),  # another host
    ],
    pages={
        "/index": _page("Shop home", "Welcome to the shop."),
        "/products": _page("Products"),
        **{f"/products/{n}": _page(f"Product {n}", images=[f"/img/p{n}.png"]) for n in range(1, 7)},
        "/about": _page("About us", button="/members"),  # only a click reaches /members
        "/members": _page("Members only"),
        "/team": _page("The team"),
        "/contact": _page("Contact"),
        "/landing": _page("Landing", "Where /moved sends you."),
        "/blog": _page("Blog"),
        **{f"/blog/post-{n}": _page(f"Post {n}") for n in range(1, 6)},
        "/private-offer": _page("Private offer", robots="noindex"),
        "/print/about": _page("About us, printable", canonical="/about"),
        "/careers": _page("Careers"),
        "/partners": _page("Partners", "Linked only by the off-site widget."),
    },
    related={
        "/products": [f"/products/{n}" for n in range(1, 7)],
        **{f"/products/{n}": [f"/products/{n + 1}"] for n in range(1, 6)},
        "/about": ["/team", "/print/about"],
        "/blog": [f"/blog/post-{n}" for n in range(1, 6)],
        "/blog/post-5": ["/gone", "/private-offer"],
    },
)
#: Every page of the shop a crawl should list (one of /retired and /gone besides: the same soft 404).
SHOP_LISTED = {
    "/",
    "/products",
    *(f"/products/{n}" for n in range(1, 7)),
    "/about",
    "/team",
    "/contact",
    "/landing",
    "/blog",
    *(f"/blog/post-{n}" for n in range(1, 6)),
}

MIXED = App(
    nav=[("/app", "App home"), ("/app/x", "X"), ("/app/y", "Y"), ("/app/z", "Z")],
    pages={
        "/app": _page("App home"),
        "/app/x": _page("App X"),
        "/app/y": _page("App Y"),
        "/app/z": _page("App Z"),
        "/app/w": _page("App W", "Only X links here, late."),
    },
    related={"/app/x": ["/app/w"]},
)
MIXED_SERVER_RENDERED = {
    "/",
    "/guide/one.html",
    "/guide/two.html",
    "/plain/a.html",
    "/plain/b.html",
    "/extras/one.html",  # linked only by the script of /guide/one.html
    "/extras/two.html",
}
MIXED_APP = {"/app", "/app/x", "/app/y", "/app/z", "/app/w"}


class SpaServer(LocalServer):
    def __init__(self, site: str, app: App | None = None, cdn_port: int = 0) -> None:
        super().__init__(SpaHandler)
        self.site = site
        self.app = app
        self.cdn_port = cdn_port
        self.hits: list[Hit] = []
        self.lock = threading.Lock()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def reset(self) -> None:
        with self.lock:
            self.hits.clear()

    def log(self) -> list[Hit]:
        with self.lock:
            return list(self.hits)

    def fill(self, text: bytes) -> bytes:
        return text.replace(b"{port}", str(self.port).encode()).replace(b"{cdn_port}", str(self.cdn_port).encode())


class SpaHandler(BaseHTTPRequestHandler):
    server: SpaServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.answer(*self.route(unquote(urlsplit(self.path).path)))

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.answer(204, {}, b"")

    def answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        hit = Hit(time.monotonic(), host, self.command, self.path, self.headers.get("User-Agent", ""), status)
        with self.server.lock:
            self.server.hits.append(hit)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route(self, path: str) -> tuple[int, dict[str, str], bytes]:
        app = self.server.app
        if app is not None and path.startswith("/api/"):
            return self.api(app, path)
        root = SPA_ROOT / ("static" if path.startswith("/static/") else self.server.site)
        relative = path.removeprefix("/static/") if path.startswith("/static/") else path.lstrip("/")
        file = (root / relative).resolve()
        if file.is_dir():
            file = file / "index.html"
        if root.resolve() in file.parents and file.is_file():
            return self.file(file)
        if "." not in path.rsplit("/", 1)[-1] and app is not None:
            # The host's fallback: any route it has no file for is the app, with a 200.
            shell = SPA_ROOT / self.server.site / "shell.html"
            return self.file(shell if shell.is_file() else SPA_ROOT / self.server.site / "index.html")
        return 404, {"Content-Type": "text/plain"}, b"not found"

    def file(self, file: Path) -> tuple[int, dict[str, str], bytes]:
        body = file.read_bytes()
        if file.suffix in TEXT:
            body = self.server.fill(body)
        return 200, {"Content-Type": TYPES.get(file.suffix, "application/octet-stream")}, body

    def api(self, app: App, path: str) -> tuple[int, dict[str, str], bytes]:
        answer: object = None
        if path == "/api/nav.json":
            answer = [{"href": href, "label": label} for href, label in app.nav]
        elif path == "/api/private.json":
            answer = {"user": "someone"}
        elif path == "/api/config.json":  # moved to another host: the browser must not follow
            return 302, {"Location": f"http://localhost:{self.server.port}/api/config.json"}, b""
        elif path.startswith("/api/pages/") and path.endswith(".json"):
            answer = app.pages.get(path.removeprefix("/api/pages").removesuffix(".json"))
        elif path.startswith("/api/related/") and path.endswith(".json"):
            slug = path.removeprefix("/api/related").removesuffix(".json")
            if slug in app.pages:
                answer = [{"href": href, "label": href} for href in app.related.get(slug, [])]
        if answer is None:
            return 404, {"Content-Type": "application/json"}, b'{"error": "no such thing"}'
        body = self.server.fill(json.dumps(answer).encode())
        return 200, {"Content-Type": "application/json"}, body
