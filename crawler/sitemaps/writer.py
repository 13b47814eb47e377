"""Streaming sitemap writers that split on both protocol limits (SPEC S4).

:class:`ShardedUrlsetWriter` turns a stream of :class:`UrlEntry` into
``sitemap-1.xml``, ``sitemap-2.xml``, ... (or ``sitemap-GROUP-1.xml``) rolling over at whichever limit
comes first, the URL count or the exact uncompressed byte size. Memory stays
flat: entries are rendered, counted and written in small batches.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Self

from crawler.protocol import MAX_BYTES, MAX_URLS, SITEMAP_NS
from crawler.sitemaps.entries import URLSET_CLOSE, URLSET_OPEN, UrlEntry
from crawler.sitemaps.naming import shard_name
from crawler.sitemaps.stylesheet import with_stylesheet
from crawler.sitemaps.xml import XML_DECLARATION, xml_escape

__all__ = ["ShardFile", "ShardedUrlsetWriter", "UrlEntry", "render_index", "write_urlset"]

INDEX_OPEN = XML_DECLARATION + f'<sitemapindex xmlns="{SITEMAP_NS}">\n'.encode()
INDEX_CLOSE = b"</sitemapindex>\n"
_FLUSH_AT = 256 * 1024


@dataclass(slots=True)
class ShardFile:
    """A finished sitemap file: name, counts and a hash of its XML."""

    name: str
    path: Path
    url_count: int
    size: int  # uncompressed bytes
    sha256: str  # of the uncompressed XML, so gzip settings do not matter


class _Sink:
    """A file opened for one shard, optionally gzip-compressed, hashing as it goes."""

    def __init__(self, path: Path, gzip_level: int | None):
        self.path = path
        self.file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        # wbits=31: gzip container; zlib writes mtime 0, so output is reproducible.
        self.deflate = zlib.compressobj(gzip_level, zlib.DEFLATED, 31) if gzip_level else None
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> None:
        self.digest.update(data)
        self.file.write(self.deflate.compress(data) if self.deflate else data)

    def discard(self) -> None:
        self.file.close()

    def close(self) -> str:
        if self.deflate:
            self.file.write(self.deflate.flush())
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        return self.digest.hexdigest()


class ShardedUrlsetWriter:
    """Write URL entries into numbered urlset files inside *folder*.

    ``max_urls`` and ``max_bytes`` may be lowered (e.g. 10 MB for Yandex) but
    never raised past the protocol limits. The caller gives entries in the
    order they should appear; the writer never reorders or holds them.
    """

    def __init__(
        self,
        folder: Path,
        *,
        basename: str = "sitemap",
        group: str = "",
        max_urls: int = MAX_URLS,
        max_bytes: int = MAX_BYTES,
        gzip_level: int | None = None,
        opening: bytes = URLSET_OPEN,
    ):
        if not 1 <= max_urls <= MAX_URLS:
            raise ValueError(f"max_urls must be between 1 and {MAX_URLS}, not {max_urls}")
        self.opening = opening  # URLSET_OPEN, or with a stylesheet's processing instruction
        overhead = len(opening) + len(URLSET_CLOSE)
        if not overhead < max_bytes <= MAX_BYTES:
            raise ValueError(f"max_bytes must be between {overhead + 1} and {MAX_BYTES}")
        self.folder = folder
        self.basename = basename
        self.group = group
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.gzip_level = gzip_level
        self.shards: list[ShardFile] = []
        self._sink: _Sink | None = None
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._count = 0
        self._size = 0

    def add(self, entry: UrlEntry) -> None:
        self.add_rendered(entry.render())

    def add_rendered(self, chunk: bytes) -> None:
        """Add one rendered ``<url>`` element, opening a new shard when full."""
        if len(chunk) + len(self.opening) + len(URLSET_CLOSE) > self.max_bytes:
            raise ValueError(
                f"one <url> entry is {len(chunk)} bytes, more than a sitemap of {self.max_bytes} bytes can hold"
            )
        if self._sink is None:
            self._open()
        elif self._count >= self.max_urls or self._size + len(chunk) + len(URLSET_CLOSE) > self.max_bytes:
            self._finish()
            self._open()
        self._pending.append(chunk)
        self._pending_size += len(chunk)
        self._count += 1
        self._size += len(chunk)
        if self._pending_size >= _FLUSH_AT:
            self._flush()

    def extend(self, entries: Iterable[UrlEntry]) -> None:
        for entry in entries:
            self.add_rendered(entry.render())

    def close(self) -> list[ShardFile]:
        """Finish the last shard and return every shard written, in order."""
        if self._sink is not None:
            self._finish()
        return self.shards

    def discard(self) -> None:
        """Close an unfinished shard after a failure; its file is incomplete."""
        if self._sink is not None:
            self._sink.discard()
            self._sink = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, _kind: object, error: object, _traceback: object) -> None:
        if error is not None:
            self.discard()

    def _open(self) -> None:
        name = shard_name(self.basename, self.group, len(self.shards) + 1, bool(self.gzip_level))
        self._sink = _Sink(self.folder / name, self.gzip_level)
        self._sink.write(self.opening)
        self._count = 0
        self._size = len(self.opening)

    def _flush(self) -> None:
        assert self._sink is not None
        self._sink.write(b"".join(self._pending))
        self._pending.clear()
        self._pending_size = 0

    def _finish(self) -> None:
        assert self._sink is not None
        self._pending.append(URLSET_CLOSE)
        self._flush()
        sink, self._sink = self._sink, None
        digest = sink.close()
        size = self._size + len(URLSET_CLOSE)
        self.shards.append(ShardFile(sink.path.name, sink.path, self._count, size, digest))


def write_urlset(
    folder: Path,
    name: str,
    chunks: list[bytes],
    max_bytes: int = MAX_BYTES,
    gzip_level: int | None = None,
    *,
    opening: bytes = URLSET_OPEN,
) -> tuple[ShardFile, int]:
    """Write as many rendered ``<url>`` elements as fit into one file named
    *name*; return the file and how many went in (at least one)."""
    sink = _Sink(folder / name, gzip_level)
    size = len(opening) + len(URLSET_CLOSE)
    count = 0
    try:
        sink.write(opening)
        for chunk in chunks:
            if count and size + len(chunk) > max_bytes:
                break
            if size + len(chunk) > max_bytes:
                raise ValueError(
                    f"one <url> entry is {len(chunk)} bytes, more than a sitemap of {max_bytes} bytes can hold"
                )
            sink.write(chunk)
            size += len(chunk)
            count += 1
        sink.write(URLSET_CLOSE)
    except BaseException:
        sink.discard()
        raise
    return ShardFile(name, sink.path, count, size, sink.close()), count


def render_index(entries: Iterable[tuple[str, str | None]], stylesheet: str | None = None) -> bytes:
    """A ``sitemapindex`` document for (loc, lastmod) pairs, within protocol limits (pointing at
    *stylesheet*, a file beside it, when given)."""
    parts = [with_stylesheet(INDEX_OPEN, stylesheet)]
    count = 0
    for loc, lastmod in entries:
        count += 1
        lastmod_xml = f"<lastmod>{xml_escape(lastmod)}</lastmod>" if lastmod else ""
        parts.append(f"<sitemap><loc>{xml_escape(loc)}</loc>{lastmod_xml}</sitemap>\n".encode())
    parts.append(INDEX_CLOSE)
    data = b"".join(parts)
    if count > MAX_URLS or len(data) > MAX_BYTES:
        raise ValueError(
            f"the sitemap index would list {count} sitemaps in {len(data)} bytes, "
            f"over the protocol limit of {MAX_URLS} entries / {MAX_BYTES} bytes"
        )
    return data
