"""A small site on 127.0.0.1 whose pages behave as real applications' do (routes keyed by
path AND query string, as a CMS with plain permalinks needs), with a request log."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Self

from tests.local_server import LocalServer

Answer = tuple[int, dict[str, str], str]
Route = Answer | Callable[[str], Answer]
HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(title: str, body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html lang=en><head><title>{title}</title>{head}</head><body>{body}</body></html>"


class _Handler(BaseHTTPRequestHandler):
    server: AppSite

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        with server.lock:
            server.log.append(self.path)
        route = server.routes.get(self.path, server.routes.get(self.path.split("?")[0] + "?*"))
        if route is None:
            status, headers, body = 404, HTML, page("Not found", "<main><p>Nothing here.</p></main>")
        else:
            status, headers, body = route(self.path) if callable(route) else route
        data = body.encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class AppSite(LocalServer):
    """Routes: ``/path?query`` -> answer, or ``/path?*`` for any query of a path (a callable
    gets the request target)."""

    def __init__(self, routes: dict[str, Route]):
        super().__init__(_Handler)
        self.routes = routes
        self.log: list[str] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
