"""A site of several named hosts on one server on 127.0.0.1, told apart by the Host header.

The crawl reaches every name through ``--resolve NAME:PORT:127.0.0.1`` (:func:`resolve_options`),
so no name is ever looked up. Each host's pages are a dict path -> (status, headers, body),
``*`` its answer to any other path; ``{port}`` in a body or header is the server's port. Every
request is logged with its host and the server's own clock (:class:`Hit`), so politeness is
asserted on what the server saw.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.local_server import LocalServer

__all__ = ["Hit", "HostsSite", "Page", "html", "link", "plain", "resolve_options"]

#: (status, headers, body)
Page = tuple[int, dict[str, str], str]


@dataclass(frozen=True)
class Hit:
    time: float  # the server's monotonic clock, as the request arrived
    host: str
    path: str
    authorization: str = ""  # the Authorization header the request carried
    cookie: str = ""  # and its Cookie header


def html(body: str, head: str = "", lang: str = "en") -> Page:
    return (
        200,
        {"Content-Type": "text/html; charset=utf-8"},
        f'<html lang="{lang}"><head>{head}</head><body>{body}</body></html>',
    )


def link(host: str, path: str = "") -> str:
    """A link to *host*, on the port the server fills in."""
    return f"http://{host}:{{port}}/{path}"


def plain() -> dict[str, dict[str, Page]]:
    """www links to three hosts of its domain; blog is linked from nowhere."""
    others = ("a.plain.test", "b.plain.test", "c.plain.test")
    home = "".join(f'<a href="{link(host)}">{host}</a>' for host in others) + '<a href="/about">about</a>'
    hosts = {"www.plain.test": {"/": html(home), "/about": html("about www")}}
    hosts.update({host: {"/": html(f"home of {host}")} for host in others})
    hosts["blog.plain.test"] = {"/": html('<a href="/post">post</a> the blog'), "/post": html("a post")}
    return hosts


def big() -> dict[str, dict[str, Page]]:
    """www links to a forum of nine posts and a blog of one: a host that would take a page budget."""
    forum = "".join(f'<a href="/p{n}">{n}</a>' for n in range(1, 10))
    return {
        "www.big.test": {"/": html(f'<a href="{link("forum.big.test")}">f</a><a href="{link("blog.big.test")}">b</a>')},
        "forum.big.test": {"/": html(forum), **{f"/p{n}": html(f"post {n}") for n in range(1, 10)}},
        "blog.big.test": {"/": html('<a href="/post">post</a>'), "/post": html("the post")},
    }


def resolve_options(names: list[str], port: int) -> list[str]:
    options = []
    for name in names:
        options += ["--resolve", f"{name}:{port}:127.0.0.1"]
    return options


class _Handler(BaseHTTPRequestHandler):
    server: HostsSite
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        """A POST is kept with its body, then answered as a GET of its path would be."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.posts.append(((self.headers.get("Host") or "").rsplit(":", 1)[0], self.path, body))
        self.do_GET()

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        authorization = self.headers.get("Authorization") or ""
        with self.server.lock:
            self.server.hits.append(
                Hit(time.monotonic(), host, self.path, authorization, self.headers.get("Cookie") or "")
            )
        pages = self.server.hosts.get(host)
        guarded = not self.server.protected or host in self.server.protected
        if self.server.authorization and guarded and authorization != self.server.authorization:
            status, headers, body = 401, {"WWW-Authenticate": 'Basic realm="staging"'}, "who are you?"
        elif pages is None:
            status, headers, body = 421, {"Content-Type": "text/plain"}, "no such host here"
        else:
            missing = pages.get("*", (404, {"Content-Type": "text/html"}, "<html>not found</html>"))  # its own 404
            status, headers, body = pages.get(self.path, missing)
        port = str(self.server.port)
        data = body.replace("{port}", port).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value.replace("{port}", port))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class HostsSite(LocalServer):
    def __init__(self, hosts: dict[str, dict[str, Page]]):
        super().__init__(_Handler)
        self.hosts = hosts
        self.hits: list[Hit] = []
        self.posts: list[tuple[str, str, bytes]] = []  # (host, path, body) of every POST
        self.authorization = ""  # when set, the Authorization header every request needs (else 401)
        self.protected: set[str] = set()  # with authorization: the hosts that need it (none named: all)
        self.lock = threading.Lock()

    def root(self, host: str) -> str:
        return f"http://{host}:{self.port}/"

    def hits_of(self, host: str) -> list[Hit]:
        with self.lock:
            return [hit for hit in self.hits if hit.host == host]
