"""Access log files read line by line: plain or gzip (told by its first bytes, not its name),
standard input for ``-``; a line that is not UTF-8 or does not parse is counted and skipped.

Rotated sets are read in any order: what is counted does not depend on it.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from crawler.coverage.logformats import LogRequest, Parser

__all__ = ["LogCounts", "read_logs"]

#: A longer line is not a request line (nginx caps a request line at a few kilobytes).
MAX_LINE = 64 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 1024 * 1024


@dataclass(slots=True)
class LogCounts:
    lines: int = 0
    malformed: int = 0  # not a request line of the format (or longer than MAX_LINE)
    not_utf8: int = 0
    broken_files: list[str] | None = None  # a gzip file cut short: what was read of it counts


def _opened(source: str, stack: ExitStack) -> BinaryIO:
    """*source* as bytes (gunzipped when its first bytes say gzip), closed with *stack*."""
    handle = sys.stdin.buffer if source == "-" else stack.enter_context(Path(source).open("rb"))  # noqa: SIM115
    head = handle.peek(2)[:2] if isinstance(handle, io.BufferedReader) else b""  # a pipe's too: nothing consumed
    if head == _GZIP_MAGIC:
        return stack.enter_context(gzip.GzipFile(fileobj=handle))  # type: ignore[return-value]
    return handle


def read_logs(sources: list[str], parse: Parser, counts: LogCounts) -> Iterator[LogRequest]:
    """Every request of *sources* (paths, ``-``), in file order; *counts* keeps what was skipped.
    ``OSError`` for a file that cannot be opened (the caller says which)."""
    for source in sources:
        with ExitStack() as stack:
            try:
                yield from _lines(_opened(source, stack), parse, counts)
            except (EOFError, zlib.error, gzip.BadGzipFile):
                counts.broken_files = [*(counts.broken_files or []), source]


def _lines(handle: BinaryIO, parse: Parser, counts: LogCounts) -> Iterator[LogRequest]:
    for raw in _raw_lines(handle, counts):
        if len(raw) > MAX_LINE:
            counts.lines += 1
            counts.malformed += 1
            continue
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            counts.lines += 1
            counts.not_utf8 += 1
            continue
        if not line.strip():
            continue  # a blank line is no line of the log
        counts.lines += 1
        request = parse(line)
        if request is None:
            counts.malformed += 1
        else:
            yield request


def _raw_lines(handle: BinaryIO, counts: LogCounts) -> Iterator[bytes]:
    """Each line of *handle* without its newline, read in blocks (a call per line costs more
    than its parse); a line over :data:`MAX_LINE` is counted malformed and never held whole."""
    rest = b""
    skipping = False  # inside a line over MAX_LINE: dropped up to its newline
    while block := handle.read(_BLOCK):
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        if skipping:
            if not lines:
                rest = b""
                continue
            lines.pop(0)
            skipping = False
        yield from lines
        if len(rest) > MAX_LINE:
            counts.lines += 1
            counts.malformed += 1
            rest, skipping = b"", True
    if rest and not skipping:
        yield rest
