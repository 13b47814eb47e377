"""Request fingerprints on the exact, already normalised URL.

Scrapy's default fingerprint canonicalises the URL again (sorting query
arguments, among other things), so two URLs that the crawler keeps apart,
``?a=1&b=2`` and ``?b=2&a=1``, would collide and one would vanish from the
report. Every page URL is normalised once by :mod:`crawler.urls`; the
dupefilter, ``JOBDIR`` resumes and shared frontiers key on that spelling.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["UrlFingerprinter", "url_fingerprint"]


def url_fingerprint(url: str, method: str = "GET") -> bytes:
    """The fingerprint of a request for *url* (the shared frontier's seen set holds these)."""
    return hashlib.sha1(f"{method} {url}".encode(), usedforsecurity=False).digest()


class UrlFingerprinter:
    def __init__(self) -> None:
        self._cache: WeakKeyDictionary[Request, bytes] = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def fingerprint(self, request: Request) -> bytes:
        cached = self._cache.get(request)
        if cached is None:
            cached = url_fingerprint(request.url, request.method)
            self._cache[request] = cached
        return cached
