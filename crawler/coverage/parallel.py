"""The logs read by several processes at once: the parse of a line is the cost of a run, and
one process uses one core. Plain files are cut into pieces at line starts, a gzip file is one
piece; each piece is read and tallied in a worker by the same code as a run in one process
(:func:`crawler.coverage.reading.read_piece`, :class:`crawler.coverage.tally.Tally`), and the
parts add up in the parent: the counts do not depend on how the logs were cut.

Only regular files are cut up: standard input and pipes are read by one process.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.coverage.crawlers import CrawlerRanges
from crawler.coverage.logformats import line_parser
from crawler.coverage.reading import MAX_LINE, LogCounts, is_gzip, read_piece
from crawler.coverage.tally import Row, Tally

__all__ = ["PARALLEL_FROM", "PIECE_BYTES", "Piece", "cpus", "pieces", "tally_in_parallel", "worth_cutting"]

#: Logs smaller than this are read by one process (starting workers would cost more).
PARALLEL_FROM = 32 * 1024 * 1024
#: A piece's size at most: what a worker holds of it is bounded by it.
PIECE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Piece:
    source: str
    start: int = 0
    size: int | None = None  # None: to the end of the file


def worth_cutting(sources: list[str]) -> int | None:
    """The bytes of *sources* when they can be read by several processes (regular files only)."""
    total = 0
    for source in sources:
        try:
            status = Path(source).stat() if source != "-" else None
        except OSError:
            return None
        if status is None or not stat.S_ISREG(status.st_mode):
            return None
        total += status.st_size
    return total


def _line_start(path: str, at: int) -> int:
    """The offset of the first line that starts at or after *at*."""
    with Path(path).open("rb") as handle:
        handle.seek(at - 1)
        if handle.read(1) == b"\n":
            return at
        while block := handle.read(MAX_LINE):
            newline = block.find(b"\n")
            if newline >= 0:
                return handle.tell() - len(block) + newline + 1
        return handle.tell()


def pieces(sources: list[str], piece_bytes: int) -> list[Piece]:
    """*sources* cut into pieces of about *piece_bytes*, each from a line's start to another's."""
    cut: list[Piece] = []
    for source in sources:
        size = Path(source).stat().st_size
        if is_gzip(source) or size <= piece_bytes:
            cut.append(Piece(source))
            continue
        starts = [0]
        for at in range(piece_bytes, size, piece_bytes):
            if at <= starts[-1]:
                continue  # inside the long line the last cut found the end of
            start = _line_start(source, at)
            if start >= size:
                break  # no line starts after it: each search ends where the next begins
            starts.append(start)
        ends = [*starts[1:], size]
        cut += [Piece(source, start, end - start) for start, end in zip(starts, ends, strict=True) if end > start]
    return cut


_worker: dict[str, Any] = {}


def _start_worker(log_format: str | None, ranges: CrawlerRanges, origins: dict[str, str], default: str) -> None:
    _worker.update(parse=line_parser(log_format), ranges=ranges, origins=origins, default=default)


def _ignore(rows: list[Row]) -> None:
    """The sink of a tally sent back to the parent: its rows travel beside it."""


def _read(piece: Piece) -> tuple[Tally, LogCounts, list[Row]]:
    rows: list[Row] = []
    tally = Tally(rows.extend, _worker["ranges"], _worker["origins"], _worker["default"])
    counts = LogCounts()
    for request in read_piece(piece.source, _worker["parse"], counts, piece.start, piece.size):
        tally.add(request)
    tally.flush()
    tally.sink = _ignore
    return tally, counts, rows


def tally_in_parallel(cut: list[Piece], log_format: str | None, tally: Tally, counts: LogCounts, jobs: int) -> None:
    """Read *cut* in *jobs* worker processes into *tally* and *counts* (*tally*'s sink gets the
    rows). At most twice *jobs* pieces are in flight: what waits for the parent is bounded."""
    jobs = min(jobs, len(cut))  # never a worker without a piece
    context = multiprocessing.get_context("fork")  # no thread runs here: the workers start at once
    arguments = (log_format, tally.ranges, tally.origins, tally.default_origin)
    with ProcessPoolExecutor(jobs, context, initializer=_start_worker, initargs=arguments) as pool:
        waiting: deque[Future[tuple[Tally, LogCounts, list[Row]]]] = deque()
        for piece in cut:
            waiting.append(pool.submit(_read, piece))
            if len(waiting) >= 2 * jobs:
                _take(waiting.popleft(), tally, counts)
        while waiting:
            _take(waiting.popleft(), tally, counts)


def _take(done: Future[tuple[Tally, LogCounts, list[Row]]], tally: Tally, counts: LogCounts) -> None:
    part, part_counts, rows = done.result()
    tally.merge(part)
    counts.merge(part_counts)
    if rows:
        tally.sink(rows)


def cpus() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
