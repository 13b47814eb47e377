"""One run per state store: an exclusive ``flock`` beside the store.

The kernel releases the lock when the process dies, even by SIGKILL, so a
killed run never leaves a stale lock; the file names the pid holding it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["StateLocked", "StoreLock"]


class StateLocked(Exception):
    """Another run holds the state store."""


class StoreLock:
    """Hold the lock of the store at *path*; raise :class:`StateLocked` if taken."""

    def __init__(self, path: Path):
        self._file = open(path.with_name(path.name + ".lock"), "a+")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            raise StateLocked(f"state store {path} is in use by {holder}; wait for that run to end") from None
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"pid {os.getpid()}\n")
        self._file.flush()

    def release(self) -> None:
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()  # closing the file releases the lock too
