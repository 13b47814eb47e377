"""Which requests of a page in the browser may be fetched at all.

Scrapy fetches each allowed one (robots.txt, politeness, size cap and the
User-Agent then apply as to any page); this decides first, from the request
alone, what can never help find a link: images, media, fonts and beacons, a
method that could change something on the site, an origin out of scope.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from crawler.scope import Scope
from crawler.urls import site_root

__all__ = ["FETCHED_TYPES", "BrowserRequest", "Origins", "refusal"]

#: Resource types that can add links: scripts and the data they load, frames, and stylesheets
#: (a bundler's lazy chunk waits for its CSS, and fails without it).
FETCHED_TYPES = frozenset({"script", "xhr", "fetch", "document", "stylesheet"})
_SAFE_METHODS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True, slots=True)
class BrowserRequest:
    """A request a rendered page made, as the guard and the fetcher see it."""

    url: str
    method: str
    resource_type: str
    headers: tuple[tuple[str, str], ...] = ()
    page: str = ""  # the page being rendered


class Origins:
    """The roots (``scheme://host[:port]/``) a rendered page may fetch from: every origin of the
    crawl's scope (its hosts, with ``--subdomains`` or ``--host``), and the ones the user allowed."""

    def __init__(self, scope: Scope, allowed: Iterable[str] = ()):
        self.scope = scope
        self.allowed = frozenset(allowed)

    def __contains__(self, root: object) -> bool:
        return isinstance(root, str) and (root in self.allowed or self.scope.contains(root))


def refusal(request: BrowserRequest, roots: Container[str]) -> str | None:
    """Why *request* is not fetched, or ``None``; *roots* are the ``scheme://host[:port]/`` it may
    go to (the site's, and the origins the user allowed)."""
    if not request.url.startswith(("http://", "https://")):
        return f"not http(s): {request.url.partition(':')[0]}"
    if request.resource_type not in FETCHED_TYPES:
        return f"resource type {request.resource_type}"
    if request.method.upper() not in _SAFE_METHODS:
        return f"method {request.method.upper()}"
    if site_root(request.url) not in roots:
        return "off scope"
    return None
