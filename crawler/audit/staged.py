"""An audit's output folder replaced as a whole: built beside it, swapped in at the end.

A failed or interrupted audit must leave the previous report exactly as it was (an old
``report.html`` that looks current is worse than none), and a finished one must leave
nothing of the previous (a ``sitemap.xml`` a blocked run no longer writes would still be
read as the preview). So the new output is built in a folder beside OUT, on the same
filesystem, and exchanged with OUT in one step (Linux ``renameat2(RENAME_EXCHANGE)``),
else by two renames; the old folder is removed afterwards. The caller holds OUT's lock.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StagedFolder", "exchange", "finished_at"]

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
#: What says "this system or filesystem cannot exchange two paths": fall back to two renames.
_UNSUPPORTED = frozenset({errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically; False when this system cannot (another OS, an old
    C library, a filesystem without it), ``OSError`` for any other failure."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(second))


def finished_at(folder: Path) -> str | None:
    """When the audit whose output *folder* holds finished (its ``report.json``), or None."""
    try:
        data = json.loads((folder / "report.json").read_text("utf-8"))
        finished = data["audit"]["finished"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return str(finished) if finished else None


@dataclass(frozen=True, slots=True)
class StagedFolder:
    """*target* (OUT, symbolic links followed) and the folder its next content is built in."""

    target: Path
    staging: Path

    @classmethod
    def begin(cls, target: Path) -> StagedFolder:
        """A fresh, empty staging folder beside *target*; those left by killed runs are removed."""
        target = Path(os.path.realpath(target))
        if target.exists() and not target.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(target))
        prefix = f".{target.name}.audit-"
        target.parent.mkdir(parents=True, exist_ok=True)
        for stale in target.parent.glob(prefix + "*"):
            _remove(stale)
        staging = target.parent / f"{prefix}new-{os.getpid()}"
        staging.mkdir()
        return cls(target, staging)

    def swap_in(self) -> None:
        """Make the staging folder OUT, in one step where the system can; the old OUT goes."""
        if not self.target.exists():
            self.staging.rename(self.target)
        elif exchange(self.staging, self.target):
            _remove(self.staging)  # now the old output
        else:
            old = self.staging.with_name(self.staging.name.replace("-new-", "-old-"))
            self.target.rename(old)
            try:
                self.staging.rename(self.target)
            except OSError:
                old.rename(self.target)  # the previous output back in place
                raise
            _remove(old)
        self._remove_beside()

    def discard(self) -> None:
        """Remove the staging folder (and what a run wrote beside it); OUT is not touched."""
        _remove(self.staging)
        self._remove_beside()

    def _remove_beside(self) -> None:
        for path in self.staging.parent.glob(self.staging.name + ".*"):  # its lock, beside it
            _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
