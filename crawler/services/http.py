"""One bounded HTTP GET or POST with the standard library (no Scrapy).

urllib's ``timeout`` is per socket operation: a server sending one byte a
second never trips it. Here the whole exchange has a deadline, the body is
read as it arrives (``read1``) and capped, so a slow, silent or endless
server costs at most *deadline* seconds and *max_bytes* of memory.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urlsplit

__all__ = ["DeadlineExceeded", "Fetched", "fetch", "fetch_response"]


class DeadlineExceeded(OSError):
    """The server did not finish within the deadline."""


@dataclass(frozen=True, slots=True)
class Fetched:
    status: int
    headers: Message
    body: bytes


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer, not a hop: urllib would carry every header
    (credentials too) to wherever Location points."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_DIRECT = urllib.request.build_opener(_NoRedirects)


def fetch(
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    deadline: float = 30.0,
    max_bytes: int = 1_000_000,
) -> tuple[int, bytes]:
    """(status, at most *max_bytes* of body) of a GET, or a POST of *body*; an HTTP
    error status is returned, not raised. Raises ``OSError`` (``DeadlineExceeded``
    past the deadline) or ``ValueError`` for a URL that is not http(s)."""
    fetched = fetch_response(url, body=body, headers=headers, deadline=deadline, max_bytes=max_bytes)
    return fetched.status, fetched.body


def fetch_response(
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    deadline: float = 30.0,
    max_bytes: int = 1_000_000,
    redirects: bool = True,
) -> Fetched:
    """:func:`fetch` with the response headers; with ``redirects=False`` a 3xx
    is returned as it is (send credentials this way: they never follow)."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url}")
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked above
        url, data=body, method="POST" if body is not None else "GET", headers=headers or {}
    )
    ends = time.monotonic() + deadline
    try:
        opener = urllib.request.urlopen if redirects else _DIRECT.open
        response = opener(request, timeout=max(0.1, deadline))
    except urllib.error.HTTPError as error:
        response = error
    except urllib.error.URLError as error:
        raise OSError(str(error.reason)) from None
    with response:
        status = int(response.status if hasattr(response, "status") else response.code)
        chunks: list[bytes] = []
        size = 0
        while size < max_bytes:
            if time.monotonic() > ends:
                raise DeadlineExceeded(f"{url} did not answer in full within {deadline:g} s")
            chunk = response.read1(min(65536, max_bytes - size)) if response.fp else b""
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return Fetched(status, response.headers, b"".join(chunks))
