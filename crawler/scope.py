"""Crawl scope: the exact scheme, host and port of the start URL (SPEC S2).

``www.example.com`` and ``example.com`` are different hosts, ``http`` and
``https`` different schemes, ``:8080`` a different origin. tldextract tells
which out-of-scope hosts still belong to the same registrable domain, so the
summary can point at a likely wrong start URL and robots.txt ``Sitemap:``
files on a sister host can be read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

import tldextract

__all__ = ["Scope", "UrlPatterns", "registrable_domain"]

# No network: use the public suffix list snapshot bundled with tldextract.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """``example.co.uk`` for ``www.example.co.uk``; the host itself for IPs."""
    parts = _EXTRACT(host)
    return parts.top_domain_under_public_suffix or host


class Scope:
    """The origin a crawl may request: scheme + host + port of the start URL."""

    def __init__(self, start_url: str):
        parts = urlsplit(start_url)
        self.scheme = parts.scheme
        self.netloc = parts.netloc.lower()
        self.host = (parts.hostname or "").lower()
        self.origin = f"{self.scheme}://{self.netloc}"
        self._prefix = self.origin + "/"

    def contains(self, url: str) -> bool:
        """True if normalised *url* has exactly this scheme, host and port."""
        return url.startswith(self._prefix) or url == self.origin

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
