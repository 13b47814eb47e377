"""Hostile sites for the end-to-end tests: a link farm, session-id and
redirect traps, pages in every charset, huge entries, a gzip bomb, and a
robots.txt that fails in every way RFC 9309 names or is huge. One small
stdlib server on 127.0.0.1, started and stopped by each test; every page is
generated.
"""

from __future__ import annotations

import gzip
import threading
import time
import uuid
from collections.abc import Callable
from functools import lru_cache
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from tests.local_server import LocalServer

#: New links on each link-farm page (which also links up to the page that led to it).
FARM_LINKS = 2000
#: Pages of the small ring site (``/ring/N``), all reached from ``/ring/0``.
RING_PAGES = 200
#: robots.txt rules for the ring: every page allowed but those whose number ends in 7. With
#: ``Allow: /`` every URL starts with a rule's plain prefix, so Protego walks all of a
#: group's rules for each match: the worst case of a huge robots.txt.
RING_RULES = "Allow: /\nDisallow: /ring/*7$\n"
Answer = tuple[int, dict[str, str], bytes]
HTML = {"Content-Type": "text/html; charset=utf-8"}


def html(body: str, head: str = "") -> bytes:
    return f"<html><head>{head}</head><body>{body}</body></html>".encode()


@lru_cache(maxsize=4)
def gzip_of_zeros(size: int) -> bytes:
    return gzip.compress(b"\0" * size, compresslevel=9)


@lru_cache(maxsize=4)
def _farm_tails(links: int) -> tuple[str, ...]:
    return tuple(f'{i}">{i}</a>' for i in range(links))


def farm_page(name: str, links: int) -> bytes:
    """A link up to the page that led here (a URL the crawl knows), then *links*
    new ones under ``/farm/name-``, built by one join, so that serving the
    farm costs the server little next to crawling it."""
    opening = f'<a href="/farm/{name}-'
    up = f'<a href="/farm/{name.rsplit("-", 1)[0]}">up</a>'
    return html(up + (opening + opening.join(_farm_tails(links)) if links else ""))


def ring_page(number: int, pages: int) -> bytes:
    """Page *number* of a site of *pages* pages: links to its two children in a
    binary tree (so a breadth-first crawl soon has many pages to fetch at once)
    and to the next three pages (so every page is reached, around any gap)."""
    targets = (2 * number + 1, 2 * number + 2, number + 1, number + 2, number + 3)
    links = "".join(f'<a href="/ring/{target % pages}">{target % pages}</a>' for target in targets)
    return html(f"<h1>Ring page {number}</h1>{links}")


def big_robots(rules: str, size: int = 500 * 1024) -> str:
    """*rules* for every user agent, padded to *size* bytes with rules no URL of
    the trap server matches: the same decisions as *rules* alone, but each URL
    matched against thousands of rules (RFC 9309 2.5 lets a crawler stop at 500 KiB)."""
    lines = [f"User-agent: *\n{rules}"]
    length = len(lines[0])
    while length < size - 40:  # room for one more line
        lines.append(f"Disallow: /no-such-path-{len(lines)}/x\n")
        length += len(lines[-1])
    return "".join(lines)


def charset_page(name: str, charset: str, codec: str) -> Answer:
    text = (
        f"<html><head><title>{name} ページ é ü</title></head>"
        f'<body><p>日本語 / Ünïcödé</p><a href="/enc/target-{name}.html">次へ</a></body></html>'
    )
    content_type = f"text/html; charset={charset}" if charset else "text/html"
    return 200, {"Content-Type": content_type}, text.encode(codec, "xmlcharrefreplace")


CHARSETS = {
    "euc-jp": ("EUC-JP", "euc_jp"),
    "iso-2022-jp": ("ISO-2022-JP", "iso2022_jp"),
    "utf-16": ("", "utf-16"),  # no header charset: the BOM says it
    "utf-32": ("utf-32", "utf-32"),
    "mac-roman": ("macintosh", "mac_roman"),
    "cp437": ("cp437", "cp437"),
}


def big_images_page(length: int) -> Answer:
    """1,000 image URLs full of apostrophes: each escaped character takes 6 bytes."""
    quotes = "'" * length
    images = "".join(f'<img src="/img/{i}/{quotes}.png">' for i in range(1000))
    return 200, HTML, html(f"<h1>Gallery</h1>{images}")


def overflow_page() -> Answer:
    video = (
        '{"@context": "https://schema.org", "@type": "VideoObject", "name": "Clip",'
        ' "description": "A clip", "thumbnailUrl": "/thumb.jpg", "contentUrl": "/clip.mp4",'
        ' "duration": "PT' + "9" * 400 + 'S", "interactionCount": "inf"}'
    )
    return 200, HTML, html("<h1>Clip</h1>", f'<script type="application/ld+json">{video}</script>')


class TrapServer(LocalServer):
    def __init__(
        self,
        robots: Callable[[TrapHandler], Answer | None] | None = None,
        *,
        farm_links: int = FARM_LINKS,
        ring_pages: int = RING_PAGES,
        image_url_length: int = 1500,
    ):
        super().__init__(TrapHandler)
        self.farm_links = farm_links
        self.ring_pages = ring_pages
        self.image_url_length = image_url_length
        self.robots = robots or (lambda handler: (200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"))
        self.lock = threading.Lock()
        self.paths: list[str] = []

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def requested(self, prefix: str = "") -> list[str]:
        with self.lock:
            return [path for path in self.paths if path.startswith(prefix)]


class TrapHandler(BaseHTTPRequestHandler):
    server: TrapServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm the body would wait for
    # the client's delayed ACK (40 ms on Linux), and the crawl would measure that stall.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.paths.append(self.path)
        path = urlsplit(self.path).path
        answer = self.server.robots(self) if path.endswith("robots.txt") else self.route(path)
        if answer is None:  # the connection was dropped or left to time out
            self.close_connection = True
            return
        status, headers, body = answer
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value.replace("{port}", str(self.server.port)))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def route(self, path: str) -> Answer:
        if path.startswith("/farm/"):
            return 200, HTML, farm_page(path.removeprefix("/farm/"), self.server.farm_links)
        if path.startswith("/ring/"):
            return 200, HTML, ring_page(int(path.removeprefix("/ring/") or 0), self.server.ring_pages)
        if path.startswith("/sess/"):
            fresh = uuid.uuid4().hex
            links = (
                f'<a href="/sess/page;jsessionid={fresh}">page</a><a href="/sess/list?sid={fresh}&p=1">list</a>'
                f'<a href="/sess/cart;token={fresh}">cart</a>'
            )
            return 200, HTML, html(links)
        if path.startswith("/rc/"):
            number = int(path.removeprefix("/rc/") or 0)
            return 301, {"Location": f"/rc/{number + 1}"}, b""
        if path.startswith("/enc/target-"):
            return 200, HTML, html("<h1>target</h1>")
        if path.startswith("/enc/"):
            name = path.removeprefix("/enc/").removesuffix(".html")
            charset, codec = CHARSETS[name]
            return charset_page(name, charset, codec)
        if path == "/big-images.html":
            return big_images_page(self.server.image_url_length)
        if path == "/overflow.html":
            return overflow_page()
        if path == "/bomb.html":
            return 200, {**HTML, "Content-Encoding": "gzip"}, gzip_of_zeros(40_000_000)
        if path == "/private/secret.html":
            return 200, HTML, html("<h1>secret</h1>")
        if path.startswith("/sm/"):
            return self.seed_sitemap(path)
        return 200, HTML, html("<h1>plain page</h1>")

    def seed_sitemap(self, path: str) -> Answer:
        number = path.removeprefix("/sm/").removesuffix(".xml")
        origin = f"http://127.0.0.1:{self.server.port}"
        urls = "".join(f"<url><loc>{origin}/seed/{number}/{i}</loc></url>" for i in range(50_000))
        body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        return 200, {"Content-Type": "application/xml"}, body.encode()

    # -- robots.txt behaviours ---------------------------------------------------

    def reset(self) -> None:
        """Drop the connection without an answer."""
        self.connection.close()

    def stall(self, seconds: float) -> None:
        """Answer nothing for *seconds* (past the crawler's timeout)."""
        time.sleep(seconds)


def robots_text(text: str, status: int = 200) -> Callable[[TrapHandler], Answer | None]:
    return lambda handler: (status, {"Content-Type": "text/plain"}, text.encode())
