"""Reading a file a user or an earlier run left, without trusting it (pure): never through a
symlink (it could lead anywhere the user can read), never a FIFO or a device (reading one could
hang or never end), never more than a stated size (a report or a cookie file is small; a
planted one need not be)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["open_regular", "read_regular_file", "read_until"]


def open_regular(path: str | Path) -> BinaryIO:
    """The regular file at *path*, opened for reading (never through a symlink; ``OSError``)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    file = open(descriptor, "rb")  # noqa: SIM115 - handed to the caller's with
    if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
        file.close()
        raise OSError(errno.EINVAL, "not a regular file")
    return file


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file at *path*, at most *limit* of them; ``OSError`` saying why
    not (its ``strerror``: "Too many levels of symbolic links" for a symlink, "not a regular file",
    "larger than N bytes")."""
    with open_regular(path) as file:
        info = os.fstat(file.fileno())
        data = file.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(data) > limit:  # or it grew while read
            raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
        return data


#: Bytes read at a time by :func:`read_until`.
_CHUNK = 1 << 20


def read_until(path: str | Path, marker: bytes, limit: int) -> tuple[bytes, bool]:
    """The bytes of the regular file at *path* before the first *marker* and ``True``, or all of
    them and ``False`` when it has none; never more than *limit* bytes read (``OSError`` as
    :func:`read_regular_file`). A big file's head is read without its tail."""
    with open_regular(path) as file:
        data = bytearray()
        while True:
            chunk = file.read(_CHUNK)
            start = max(0, len(data) - len(marker) + 1)
            data += chunk
            found = data.find(marker, start)
            head = len(data) if found < 0 else found
            if head > limit:
                raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
            if found >= 0 or not chunk:
                return bytes(data[:head]), found >= 0
