"""Access log files read line by line: plain or gzip (told by its first bytes, not its name),
standard input for ``-``; a line that is not UTF-8 or does not parse is counted and skipped.

Rotated sets are read in any order: what is counted does not depend on it.
"""

from __future__ import annotations

import gzip
import io
import stat
import sys
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from crawler.coverage.logformats import LogRequest, Parser

__all__ = ["LogCounts", "is_gzip", "once", "read_logs", "read_piece"]

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

    def merge(self, part: LogCounts) -> None:
        self.lines += part.lines
        self.malformed += part.malformed
        self.not_utf8 += part.not_utf8
        if part.broken_files:
            self.broken_files = [*(self.broken_files or []), *part.broken_files]


def _opened(source: str, stack: ExitStack) -> io.BufferedIOBase:
    """*source* as bytes (gunzipped when its first bytes say gzip), closed with *stack*."""
    opened = sys.stdin.buffer if source == "-" else stack.enter_context(Path(source).open("rb"))  # noqa: SIM115
    handle = cast(io.BufferedReader, opened)  # standard input's buffer is one too
    if handle.peek(2)[:2] == _GZIP_MAGIC:  # a pipe's too: nothing consumed
        return stack.enter_context(gzip.GzipFile(fileobj=handle))
    return handle


def read_logs(sources: list[str], parse: Parser, counts: LogCounts) -> Iterator[LogRequest]:
    """Every request of *sources* (paths, ``-``), in file order; *counts* keeps what was skipped.
    ``OSError`` for a file that cannot be opened (the caller says which)."""
    for source in sources:
        yield from read_piece(source, parse, counts)


def read_piece(
    source: str, parse: Parser, counts: LogCounts, start: int = 0, size: int | None = None
) -> Iterator[LogRequest]:
    """The requests of *source*, or of its *size* bytes from *start* (a plain file's piece: it
    begins at a line's start, and ends at one)."""
    with ExitStack() as stack:
        handle = _opened(source, stack)
        if start:
            handle.seek(start)
        try:
            yield from _lines(handle, parse, counts, size)
        except (EOFError, zlib.error, gzip.BadGzipFile):
            counts.broken_files = [*(counts.broken_files or []), source]


def once(sources: list[str]) -> tuple[list[str], list[str]]:
    """*sources* with each file once (the same file under two names, a hard link, a rotated log
    given twice would count its requests twice), and those left out."""
    kept, twice, seen = [], [], set()
    for source in sources:
        try:
            status = Path(source).stat() if source != "-" else None
        except OSError:
            status = None  # the reading says what is wrong with it
        key = (status.st_dev, status.st_ino) if status is not None and stat.S_ISREG(status.st_mode) else None
        if key is not None and key in seen:
            twice.append(source)
            continue
        seen.add(key)
        kept.append(source)
    return kept, twice


def is_gzip(path: str) -> bool:
    with Path(path).open("rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def _lines(
    handle: io.BufferedIOBase, parse: Parser, counts: LogCounts, size: int | None = None
) -> Iterator[LogRequest]:
    for raw in _raw_lines(handle, size):
        if len(raw) > MAX_LINE and (len(raw) > MAX_LINE + 1 or raw[-1:] != b"\r"):  # a CRLF line's \r aside
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


def _raw_lines(handle: io.BufferedIOBase, size: int | None = None) -> Iterator[bytes]:
    """Each line of *handle* (of its next *size* bytes) without its newline, read in blocks (a
    call per line costs more than its parse); a line over :data:`MAX_LINE` is never held whole:
    its start is given, the rest dropped."""
    rest = b""
    skipping = False  # inside a line over MAX_LINE: dropped up to its newline
    left = size
    # read1: a gzip cut short keeps what came before.
    while block := handle.read1(_BLOCK if left is None else min(_BLOCK, left)):
        if left is not None:
            left -= len(block)
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        if skipping:
            if not lines:
                rest = b""
                continue
            lines.pop(0)
            skipping = False
        yield from lines
        if len(rest) > MAX_LINE + 1:  # too long already, whatever ends it
            yield rest
            rest, skipping = b"", True
    if rest and not skipping:
        yield rest
