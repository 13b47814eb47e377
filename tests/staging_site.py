"""A staging copy of www.example.com on 127.0.0.1, behind basic auth, with
every problem the audit must find planted in it.

``blocker`` picks the staging blocker: ``header`` (X-Robots-Tag: noindex on
every response), ``meta`` (a robots meta tag on every page), ``robots``
(Disallow: /) or ``None``. Every request is logged with its headers, so
tests can tell where credentials went.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from tests.local_server import LocalServer

PROD = "https://www.example.com"
USER, PASSWORD = "preview", "s3cret-Pa55"
EVIL_TITLE = (
    "</script><script>document.title='pwned'</script>"
    '<img src=x onerror="document.title=\'pwned\'">x" onfocus="alert(1)'
)


@dataclass(frozen=True)
class Request:
    port: int
    path: str
    authorization: str | None
    cookie: str | None
    agent: str | None = None  # the User-Agent header
    headers: tuple[tuple[str, str], ...] = ()  # every header, as sent


def page(title: str, body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html lang=en><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def links(*paths: str) -> str:
    return "".join(f'<a href="{path}">{path}</a> ' for path in paths)


def urlset(entries: list[tuple[str, str]]) -> str:
    body = "".join(f"<url><loc>{PROD}{path}</loc><lastmod>{lastmod}</lastmod></url>\n" for path, lastmod in entries)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{body}</urlset>\n'


class StagingSite:
    """The routes of the staging site; ``other`` is the port of a server on another origin."""

    def __init__(self, blocker: str | None, other: int):
        self.blocker = blocker
        self.other = other

    def routes(self) -> dict[str, tuple[int, dict[str, str], str]]:
        html = {"Content-Type": "text/html; charset=utf-8"}
        meta = '<meta name="robots" content="noindex, nofollow">' if self.blocker == "meta" else ""
        hreflang = "".join(
            f'<link rel="alternate" hreflang="{tag}" href="{PROD}/{path}/">'
            for tag, path in (("en", "en"), ("de", "de"), ("fr", "fr"), ("xx-YY", "xx"))
        )
        deep = {f"/deep/{n}": (200, html, page(f"Deep {n}", links(f"/deep/{n + 1}"), meta)) for n in range(1, 8)}
        nav = links(
            "/about",
            f"{PROD}/products",  # an absolute production link: crawled on staging
            "/old-page",
            "/loop-a",
            "/missing",
            "/gone",
            "/canon-a",
            "/canon-dead",
            "/soft",
            "/en/",
            "/private",
            "/deep/1",
            "/temp",
            "/away",
            f"http://127.0.0.1:{self.other}/elsewhere",  # another port
            f"http://localhost:{self.other}/other-host",  # another host
            "http://www.example.com/about",  # mixed content: http:// to the https production site
        )
        sitemap_one = urlset(
            [
                (p, "2026-11-20T10:00:00+00:00")
                for p in (
                    "/",
                    "/about",
                    "/old-page",
                    "/missing",
                    "/orphan",
                    "/private",
                    "/en/",
                    "/de/",
                    "/products",
                    "/soft",
                )
            ]
        )
        sitemap_two = urlset([("/about", "2026-11-21"), ("/canon-a", "2099-01-01")])
        index = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{PROD}/sitemap-one.xml</loc></sitemap><sitemap><loc>{PROD}/sitemap-two.xml</loc></sitemap>"
            "</sitemapindex>\n"
        )
        robots = "User-agent: *\n" + ("Disallow: /\n" if self.blocker == "robots" else "Disallow: /cart\n")
        robots += f"Sitemap: {PROD}/sitemap.xml\n"
        xml = {"Content-Type": "application/xml"}
        return {
            "/": (200, html, page(EVIL_TITLE, nav, meta + f'<link rel="canonical" href="{PROD}/">')),
            "/about": (200, html, page("About", links("/", "/contact"), meta)),
            "/contact": (200, html, page("Contact", links("/"), meta)),
            "/products": (200, html, page("Products", links("/"), meta)),
            "/orphan": (200, html, page("Orphan", links("/"), meta)),
            "/old-page": (301, {"Location": "/interim"}, ""),
            "/interim": (302, {"Location": "/final"}, ""),
            "/final": (200, html, page("Final", links("/"), meta)),
            "/temp": (307, {"Location": "/about"}, ""),
            "/away": (302, {"Location": f"http://127.0.0.1:{self.other}/landing"}, ""),  # a redirect that leaves
            "/loop-a": (301, {"Location": "/loop-b"}, ""),
            "/loop-b": (301, {"Location": "/loop-a"}, ""),
            "/missing": (404, html, page("Not here", "gone")),
            "/gone": (410, html, page("Gone", "gone")),
            "/canon-a": (200, html, page("A", "", meta + '<link rel="canonical" href="/canon-b">')),
            "/canon-b": (200, html, page("B", "", meta + '<link rel="canonical" href="/canon-c">')),
            "/canon-c": (200, html, page("C", "", meta)),
            "/canon-dead": (200, html, page("Dead end", "", meta + '<link rel="canonical" href="/missing">')),
            "/soft": (200, html, page("Page not found", "Sorry, nothing here.", meta)),
            "/private": (200, html, page("Private", "", '<meta name="robots" content="noindex">')),
            "/en/": (200, html, page("English", links("/de/"), meta + hreflang)),
            "/de/": (
                200,
                html,
                page("Deutsch", links("/en/"), meta + f'<link rel="alternate" hreflang="de" href="{PROD}/de/">'),
            ),
            "/fr/": (404, html, page("Not here", "")),
            **deep,
            "/robots.txt": (200, {"Content-Type": "text/plain"}, robots),
            "/sitemap.xml": (200, xml, index),
            "/sitemap-one.xml": (200, xml, sitemap_one),
            "/sitemap-two.xml": (200, xml, sitemap_two),
        }


class _Handler(BaseHTTPRequestHandler):
    server: StagingServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        if server.watch_pid and not server.cmdlines:
            with open(f"/proc/{server.watch_pid}/cmdline", "rb") as file:
                server.cmdlines.append(file.read().replace(b"\0", b" ").decode())
        server.log.append(
            Request(
                server.server_address[1],
                self.path,
                self.headers.get("Authorization"),
                self.headers.get("Cookie"),
                self.headers.get("User-Agent"),
                tuple(self.headers.items()),
            )
        )
        if server.password and self.headers.get("Authorization") != server.expected:
            self._send(401, {"WWW-Authenticate": 'Basic realm="staging"', "Content-Type": "text/plain"}, "login")
            return
        status, headers, body = server.routes.get(
            self.path.split("?")[0], (404, {"Content-Type": "text/html"}, page("Oops, 404", "The page is missing"))
        )
        if server.header_blocker:
            headers = {**headers, "X-Robots-Tag": "noindex"}
        self._send(status, headers, body)

    def _send(self, status: int, headers: dict[str, str], body: str) -> None:
        data = body.encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class StagingServer(LocalServer):
    def __init__(
        self,
        routes: dict[str, tuple[int, dict[str, str], str]] | None = None,
        *,
        password: bool = True,
        header_blocker: bool = False,
    ):
        super().__init__(_Handler)
        self.routes = routes or {}
        self.password = password
        self.header_blocker = header_blocker
        self.expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        self.log: list[Request] = []
        self.watch_pid = 0  # a process whose command line is read at the first request
        self.cmdlines: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
