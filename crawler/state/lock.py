"""One run at a time: an exclusive ``flock`` on a lock file.

The kernel releases the lock when the process dies, even by SIGKILL, so a
killed run never leaves a stale lock; the file names the pid holding it.
Used for the state store and for the output folder (two runs publishing
into one folder would delete each other's staging).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

__all__ = ["FileLock", "Locked", "StateLocked", "StoreLock", "journal_paths", "store_lock_path"]


class Locked(Exception):
    """Another run holds the lock."""


class StateLocked(Locked):
    """Another run holds the state store."""


class FileLock:
    """Hold the lock at *lock_path* for *what*; raise *error* if another process has it."""

    def __init__(self, lock_path: Path, what: str, error: type[Locked] = Locked):
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            # Never through a symlink (O_NOFOLLOW): a planted link would have us write "pid N" into
            # any file the scheduled user can write.
            descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            self._file = os.fdopen(descriptor, "r+")
        except OSError as failure:
            if failure.errno == errno.ELOOP:
                raise error(f"cannot lock {what}: {lock_path} is a symlink; remove it") from None
            raise error(f"cannot lock {what}: {lock_path}: {failure.strerror or failure}") from None
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            self._file.close()
            raise error(f"cannot lock {what}: {lock_path} is not a regular file; remove it")
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            raise error(f"{what} is in use by {holder}; wait for that run to end") from None
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"pid {os.getpid()}\n")
        self._file.flush()

    def release(self) -> None:
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()  # closing the file releases the lock too


def store_lock_path(path: Path) -> Path:
    """Where the lock of the state store at *path* is: ``PATH.lock`` beside it."""
    return path.with_name(path.name + ".lock")


def journal_paths(path: Path) -> dict[str, Path]:
    """SQLite's write-ahead log files of the state store at *path*, by kind (the store runs in
    WAL mode: ``PATH-wal`` and ``PATH-shm`` beside it)."""
    return {journal: path.with_name(f"{path.name}-{journal}") for journal in ("wal", "shm")}


class StoreLock(FileLock):
    """The lock of the state store at *path*, in :func:`store_lock_path`."""

    def __init__(self, path: Path):
        super().__init__(store_lock_path(path), f"state store {path}", StateLocked)
