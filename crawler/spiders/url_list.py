"""List mode's input (``crawl URL --urls FILE``): the URLs of a file, or of stdin, read one
line at a time as the crawl asks for them, so a list of a million lines costs no memory.

A line is a URL, absolute or relative to the start URL; blank lines and ``#`` comments are
skipped. A line that is no http(s) URL is said with its number, never silently dropped.
Lines are read off the reactor (:func:`listed_batches`, in a thread, a window ahead): a slow
pipe on stdin holds back the next URLs, never the crawl of those already read.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import BinaryIO
from urllib.parse import urljoin

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

from crawler.urls import normalize_url

__all__ = ["MAX_LINE", "WINDOW", "listed_batches", "listed_urls"]

#: A line longer than this is no URL a sitemap could list (the protocol's limit is 2,048).
MAX_LINE = 8192
#: Lines read ahead of the crawl, at most: its queue stays fed, memory stays flat.
WINDOW = 1024


def _lines(stream: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """(the line, whether it was cut) for each line of *stream*, never more than
    :data:`MAX_LINE` + 1 bytes of one held (the rest of a longer line is read and dropped)."""
    while raw := stream.readline(MAX_LINE + 1):
        if len(raw) <= MAX_LINE or raw.endswith(b"\n"):
            yield raw, False
            continue
        while (rest := stream.readline(MAX_LINE)) and not rest.endswith(b"\n"):
            pass  # the tail of a line too long to be a URL
        yield raw, True


def listed_urls(source: str, base: str) -> Iterator[tuple[str, str | None]]:
    """(URL, None) for each URL line of *source* (a path, or ``-`` for stdin), resolved against
    *base*; (the line, why) for a line that is none."""
    stream = sys.stdin.buffer if source == "-" else open(source, "rb")  # noqa: SIM115 - closed below
    try:
        for number, (raw, cut) in enumerate(_lines(stream), 1):
            try:
                line = raw.decode("utf-8", "strict" if not cut else "ignore").strip()
            except UnicodeDecodeError:
                yield raw[:200].decode("utf-8", "replace").strip(), f"line {number}: not UTF-8 text"
                continue
            if not line or line.startswith("#"):
                continue
            if cut or len(line) > MAX_LINE:
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


class _Pump:
    """Reads the list in a thread of its own into a bounded queue (a window of lines ahead of the
    crawl); :meth:`take` hands over what is there, as soon as one line is."""

    def __init__(self, lines: Iterator[tuple[str, str | None]]):
        self.queue: queue.Queue[tuple[str, str | None] | BaseException | None] = queue.Queue(maxsize=WINDOW)
        self.ended = False
        threading.Thread(target=self._read, args=(lines,), name="url-list", daemon=True).start()

    def _read(self, lines: Iterator[tuple[str, str | None]]) -> None:
        try:
            for item in lines:
                self.queue.put(item)
        except BaseException as error:  # noqa: BLE001 - handed to the crawl, raised there
            self.queue.put(error)
            return
        self.queue.put(None)

    def take(self) -> list[tuple[str, str | None]] | None:
        """Up to :data:`WINDOW` lines, waiting half a second at most for the first (so no pool
        thread waits for ever on a silent pipe); ``[]`` when none came; ``None`` at the end."""
        if self.ended:
            return None
        batch: list[tuple[str, str | None]] = []
        try:
            item = self.queue.get(timeout=0.5)
            while True:
                if item is None or isinstance(item, BaseException):
                    self.ended = True
                    if isinstance(item, BaseException):
                        raise item
                    break
                batch.append(item)
                if len(batch) >= WINDOW:
                    break
                item = self.queue.get_nowait()
        except queue.Empty:
            pass
        return batch


async def listed_batches(source: str, base: str) -> AsyncIterator[list[tuple[str, str | None]]]:
    """:func:`listed_urls` as it arrives, in batches, read off the reactor: the crawl goes on
    while a slow pipe says nothing."""
    pump = _Pump(listed_urls(source, base))
    while (batch := await maybe_deferred_to_future(deferToThread(pump.take))) is not None:
        if batch:
            yield batch
