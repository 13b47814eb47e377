"""The run's scratch folder: what a crawl keeps on disk instead of in memory while it runs
(the frontier's queues, the duplicate table), so memory depends on the work in flight, not
on the size of the site.

``OUT.scratch-PID`` beside the output folder (never inside it: that folder is often served,
and it is known to be writable, unlike a container's /tmp). Each user creates its own entry
in it and removes it when done, and the last one out removes the folder. A folder left by a
run that was killed is removed by the next run beside the same output: its holder keeps a lock
on the folder's ``lock`` file while it runs (a process id alone says nothing across the PID
namespaces of containers that share a volume).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from contextlib import suppress
from pathlib import Path

from crawler.state.lock import FileLock, Locked
from settings.checks import beside

__all__ = ["done_with", "scratch_entry"]

_PREFIX = "scratch-"
_LOCK = "lock"
_held: dict[Path, FileLock] = {}  # this process's scratch folders and their locks


def _folder(output_dir: Path, pid: int) -> Path:
    return beside(output_dir, f"{_PREFIX}{pid}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _in_use(folder: Path, pid: int) -> bool:
    """Whether a run still holds *folder*: its lock is held (or, with no lock file, its process
    is alive)."""
    if not (folder / _LOCK).is_symlink() and not (folder / _LOCK).exists():
        return _alive(pid)
    try:
        FileLock(folder / _LOCK, f"scratch folder {folder}").release()
    except Locked:  # held, or no plain file to lock: not ours to remove
        return True
    return False


def _remove_leftovers(output_dir: Path) -> None:
    """The scratch folders of earlier runs beside *output_dir* that no run holds (killed)."""
    prefix = _folder(output_dir, 0).name.removesuffix("0")
    for folder in _folder(output_dir, 0).parent.iterdir():
        pid = folder.name.removeprefix(prefix)
        if not (folder.name.startswith(prefix) and re.fullmatch(r"[0-9]{1,9}", pid)):
            continue  # not a scratch folder of ours (or a name no process id has)
        if folder not in _held and not folder.is_symlink() and not _in_use(folder, int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _own_folder(folder: Path) -> Path:
    """*folder*, made for this user alone (mode 0700): the frontier's queues are pickles, read
    back as they are, so nobody else may write there. Whatever else has the name (a symlink
    planted beside the output, a file) is removed first; a folder of another user is refused."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    with suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"scratch folder {folder} belongs to another user; remove it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)
    if folder not in _held:
        _held[folder] = FileLock(folder / _LOCK, f"scratch folder {folder}")
    return folder


def scratch_entry(output_dir: Path, name: str) -> Path:
    """A fresh path *name* in this run's scratch folder (what an earlier holder of this process
    id left there is removed: an entry is never continued)."""
    _remove_leftovers(output_dir)
    folder = _own_folder(_folder(output_dir, os.getpid()))
    entry = folder / name
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry)
    else:
        entry.unlink(missing_ok=True)
    return entry


def done_with(entry: Path) -> None:
    """*entry* is no longer needed: removed, and its folder with it once empty."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        with suppress(OSError):
            entry.unlink(missing_ok=True)
    folder = entry.parent
    with suppress(FileNotFoundError):
        if any(path.name != _LOCK for path in folder.iterdir()):
            return  # another entry is still in use
    lock = _held.pop(folder, None)
    with suppress(OSError):
        (folder / _LOCK).unlink()
        folder.rmdir()
    if lock is not None:
        lock.release()
