"""Reading a file a user or an earlier run left, without trusting it (pure): never through a
symlink (it could lead anywhere the user can read), never a FIFO or a device (reading one could
hang or never end), never more than a stated size (a report or a cookie file is small; a
planted one need not be)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["read_regular_file"]


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file at *path*, at most *limit* of them; ``OSError`` saying why
    not (its ``strerror``: "Too many levels of symbolic links" for a symlink, "not a regular file",
    "larger than N bytes")."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = file.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(data) > limit:  # or it grew while read
            raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
        return data
