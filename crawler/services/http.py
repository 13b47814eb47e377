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
from urllib.parse import urlsplit

__all__ = ["DeadlineExceeded", "fetch"]


class DeadlineExceeded(OSError):
    """The server did not finish within the deadline."""


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
    if urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url}")
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked above
        url, data=body, method="POST" if body is not None else "GET", headers=headers or {}
    )
    ends = time.monotonic() + deadline
    try:
        response = urllib.request.urlopen(request, timeout=max(0.1, deadline))  # noqa: S310
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
    return status, b"".join(chunks)
