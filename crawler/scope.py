"""Crawl scope: the start URL's origin, or with ``--subdomains`` / ``--host`` several hosts
on its scheme and port (SPEC S2).

``www.example.com`` and ``example.com`` are different hosts, ``http`` and
``https`` different schemes, ``:8080`` a different origin. tldextract tells
which hosts belong to the same registrable domain (the public suffix list, its
private part too: two ``github.io`` users are two sites), for ``--subdomains``,
for the summary's hint at a likely wrong start URL, and for robots.txt
``Sitemap:`` files on a sister host.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

import tldextract

__all__ = ["Scope", "UrlPatterns", "public_suffix_free", "registrable_domain"]

# No network: use the public suffix list snapshot bundled with tldextract.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)
#: Hosts whose scope answer is remembered (a site has few; a trap's made-up hosts are many).
_MEMO = 4096


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """``example.co.uk`` for ``www.example.co.uk``; the host itself for an IP address; for a
    name outside the public suffixes (``www.shop.test``, ``intranet.corp``) its last two labels."""
    parts = _EXTRACT(host)
    if parts.top_domain_under_public_suffix:
        return parts.top_domain_under_public_suffix
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return ".".join(host.split(".")[-2:])
    return host


def public_suffix_free(name: str) -> bool:
    """Whether *name* is within one site: a registrable domain or under one (``example.com``,
    ``shop.example.co.uk``), not a public suffix (``com``, ``co.uk``, ``github.io``) nor a lone label."""
    return "." in name and bool(_EXTRACT(name).top_domain_under_public_suffix or not _EXTRACT(name).suffix)


class Scope:
    """The origins a crawl may request: the start URL's, and with *subdomains* every host of its
    registrable domain, and the *hosts* named (exact names, or ``*.example.com`` for any host
    under that name), always on the start URL's scheme and port."""

    def __init__(self, start_url: str, hosts: Iterable[str] = (), *, subdomains: bool = False):
        parts = urlsplit(start_url)
        self.scheme = parts.scheme
        self.netloc = parts.netloc.lower()
        self.host = (parts.hostname or "").lower()
        self.origin = f"{self.scheme}://{self.netloc}"
        self._prefix = self.origin + "/"
        self._port = self.netloc[len(self.host) :] if self.netloc.startswith(self.host) else ""  # ":8080" or ""
        names = [name.lower().rstrip(".") for name in hosts]
        self._names = frozenset(name for name in names if not name.startswith("*."))
        self._under = tuple(name[1:] for name in names if name.startswith("*."))  # ".example.com"
        self._domain = registrable_domain(self.host) if subdomains else None
        self.several = subdomains or bool(names)
        self._known: dict[str, bool] = {}

    @property
    def named_origins(self) -> list[str]:
        """The roots (``scheme://host[:port]/``) of the other hosts named exactly, to start from."""
        return [f"{self.scheme}://{name}{self._port}/" for name in sorted(self._names - {self.host})]

    def contains(self, url: str) -> bool:
        """True if normalised *url* is on an origin of the crawl."""
        if url.startswith(self._prefix) or url == self.origin:
            return True
        if not self.several or not url.startswith(self.scheme + "://"):
            return False
        netloc = url[len(self.scheme) + 3 :].split("/", 1)[0]
        known = self._known.get(netloc)
        if known is None:
            if len(self._known) >= _MEMO:
                self._known.clear()
            known = self._known[netloc] = self._netloc_in(netloc)
        return known

    def _netloc_in(self, netloc: str) -> bool:
        if "@" in netloc or not netloc.endswith(self._port) or "[" in netloc:
            return False
        host = netloc[: len(netloc) - len(self._port)] if self._port else netloc
        if not host or ":" in host:
            return False  # another port
        if host in self._names or host.endswith(self._under):
            return True
        return self._domain is not None and registrable_domain(host) == self._domain

    def same_site(self, url: str) -> bool:
        """True if *url* is on a host of the same registrable domain."""
        host = urlsplit(url).hostname or ""
        return registrable_domain(host) == registrable_domain(self.host)


class UrlPatterns:
    """User include/exclude patterns: regular expressions searched in the URL."""

    def __init__(self, include: Iterable[str | re.Pattern[str]] = (), exclude: Iterable[str | re.Pattern[str]] = ()):
        self.include = [re.compile(p) for p in include]
        self.exclude = [re.compile(p) for p in exclude]

    def excluded(self, url: str) -> str | None:
        """The pattern that leaves *url* out, or ``None`` if it may be listed."""
        for pattern in self.exclude:
            if pattern.search(url):
                return f"matches exclude {pattern.pattern!r}"
        if self.include and not any(p.search(url) for p in self.include):
            return "matches no include pattern"
        return None
