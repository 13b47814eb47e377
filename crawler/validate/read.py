"""Reading a sitemap, local or remote, within the protocol's limits (no Scrapy).

Never more than 50 MiB (plus one byte, so that an oversized file is seen as
such) is read after decompression; gzip is recognised by its magic number.
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from urllib.parse import urlsplit

from crawler.addresses import Pinned
from crawler.protocol import MAX_BYTES
from crawler.services.http import fetch

__all__ = ["SitemapReadError", "read_head", "read_sitemap"]


class SitemapReadError(Exception):
    """A sitemap could not be read at all (missing, not gzip, too big, ...)."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


def read_sitemap(
    location: str | Path,
    timeout: float = 30.0,
    credentials: dict[str, str] | None = None,
    *,
    user_agent: str | None = None,
    pinned: tuple[Pinned, ...] = (),
) -> bytes:
    """The uncompressed bytes of a local file or an http(s) URL.

    Never reads more than the protocol's 50 MiB (plus one byte, so that an
    oversized file is seen as such) after decompression, nor waits more
    than *timeout* seconds for a remote file in all; gzip is recognised by
    its magic number, and a ``.gz`` name that is not gzip is an error. A
    local path must be a regular file (a FIFO or a device would block).
    A redirect is followed on the same origin only (another origin is an
    error, and gets no request); with *credentials* (headers), none is.
    A remote file needs *user_agent* (the ``USER_AGENT`` setting); *pinned* names connect to the
    addresses ``--resolve`` gave.
    """
    name = str(location)
    try:
        if name.startswith(("http://", "https://")):
            if user_agent is None:  # a caller's mistake, not the file's: not caught below
                raise TypeError("read_sitemap: a remote sitemap needs the crawler's user_agent")
            fetched = fetch(
                name,
                user_agent=user_agent,
                headers=credentials,
                deadline=timeout,
                max_bytes=MAX_BYTES + 1,
                redirects=credentials is None,
                pinned=pinned,
            )
            if fetched.status != 200:
                where = fetched.header("Location") if 300 <= fetched.status < 400 else None
                raise SitemapReadError(
                    "read", f"cannot read: HTTP {fetched.status}" + (f" to {where}" if where else "")
                )
            raw = fetched.body
        else:
            if not Path(name).is_file():
                raise SitemapReadError("read", "cannot read: not a regular file")
            with open(name, "rb") as file:
                raw = file.read(MAX_BYTES + 1)
    except (OSError, ValueError) as error:
        raise SitemapReadError("read", f"cannot read: {error}") from None
    if raw[:2] != b"\x1f\x8b":
        if urlsplit(name).path.endswith(".gz"):
            raise SitemapReadError("gzip", "named .gz but not gzip-compressed")
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
            data: bytes = unzipped.read(MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise SitemapReadError("gzip", f"broken gzip data: {error}") from None
    if data[:2] == b"\x1f\x8b":  # as check says: a server or a tool gzipped the gzip file again
        raise SitemapReadError("gzip", "double gzip: decompressed, it is still gzip (the file is compressed twice)")
    return data


def read_head(path: Path, size: int = 8192) -> bytes | None:
    """The first *size* uncompressed bytes of a local file, or ``None`` when
    it cannot be read; enough to tell a sitemap from other XML cheaply."""
    try:
        with open(path, "rb") as file:
            head = file.read(size)
            if head[:2] != b"\x1f\x8b":
                return head
            file.seek(0)
            with gzip.GzipFile(fileobj=file) as unzipped:
                data: bytes = unzipped.read(size)
                return data
    except (OSError, EOFError, zlib.error):
        return None
