"""List mode's input (``crawl URL --urls FILE``): the URLs of a file, or of stdin, read one
line at a time as the crawl asks for them, so a list of a million lines costs no memory.

A line is a URL, absolute or relative to the start URL; blank lines and ``#`` comments are
skipped. A line that is no http(s) URL is said with its number, never silently dropped.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from urllib.parse import urljoin

from crawler.urls import normalize_url

__all__ = ["MAX_LINE", "listed_urls"]

#: A line longer than this is no URL a sitemap could list (the protocol's limit is 2,048).
MAX_LINE = 8192


def listed_urls(source: str, base: str) -> Iterator[tuple[str, str | None]]:
    """(URL, None) for each URL line of *source* (a path, or ``-`` for stdin), resolved against
    *base*; (the line, why) for a line that is none."""
    stream = sys.stdin.buffer if source == "-" else open(source, "rb")  # noqa: SIM115 - closed below
    try:
        for number, raw in enumerate(stream, 1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                yield raw[:200].decode("utf-8", "replace").strip(), f"line {number}: not UTF-8 text"
                continue
            if not line or line.startswith("#"):
                continue
            if len(line) > MAX_LINE:
                yield line[:200], f"line {number}: longer than {MAX_LINE:,} characters"
                continue
            url = urljoin(base, line)
            try:
                normalize_url(url)
            except ValueError:
                yield line, f"line {number}: not an http(s) URL"
                continue
            yield url, None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
