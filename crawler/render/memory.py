"""Resident memory of this process's child processes (the browser's), from /proc.

Playwright does not say which processes are Chromium's; they are the
descendants of this one (through Playwright's driver), so their summed RSS
is the browser's. Linux only; elsewhere it reads 0 and the cap never trips.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["descendants_rss"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def descendants_rss(pid: int | None = None) -> int:
    """Bytes resident in every descendant of *pid* (default: this process), itself excluded."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            statm = (entry / "statm").read_text().split()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
        if len(fields) < 2 or len(statm) < 2:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        rss[int(entry.name)] = int(statm[1]) * _PAGE
    total, stack = 0, list(children.get(root, ()))
    while stack:
        pid_ = stack.pop()
        total += rss.get(pid_, 0)
        stack.extend(children.get(pid_, ()))
    return total
