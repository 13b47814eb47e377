"""Conditional requests from the validators of the last fetch (SPEC S6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.run.context import required_run_state
from crawler.run.state import RunState
from crawler.state.lastmod import made_another_way

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["ConditionalRequestMiddleware"]


class ConditionalRequestMiddleware:
    """Ask again with the validators of the last fetch (RFC 9110 section 13.1).

    An unchanged page then answers 304 without a body, and the spider
    replays what the state store knows about it. The stored state travels in
    ``request.meta["stored_state"]`` so that nothing downstream reads it again.
    """

    def __init__(self, state: RunState):
        self.state = state

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(required_run_state(crawler))

    def process_request(self, request: Request) -> None:
        if not request.meta.get("page"):
            return
        if request.meta.get("unconditional"):
            request.meta["stored_state"] = self.state.stored(request.url)
            return  # its stored facts are gone: the whole page is needed
        stored = request.meta["stored_state"] = self.state.stored(request.url)
        if stored is None or made_another_way(stored.listing_digest):
            return  # nothing stored, or a digest of an earlier version: the page's own is needed
        if stored.etag:
            request.headers.setdefault(b"If-None-Match", stored.etag.encode("latin-1"))
        if stored.last_modified:
            request.headers.setdefault(b"If-Modified-Since", stored.last_modified.encode("latin-1"))
