"""Memory of this process's child processes (the browser's), from /proc.

Playwright does not say which processes are Chromium's; they are the
descendants of this one (through Playwright's driver). Chromium's processes
share much of their memory, so the sum of their RSS counts it once per
process (about twice what they use, measured); their proportional set size
(PSS) splits each shared page among its users, and its sum is what they
take from the machine. Linux only; elsewhere both read 0 and no cap trips.

A renderer (``--type=renderer`` on its command line) holds the pages of one
site instance: its own PSS is what one page costs, and ending that process is
how a page over its memory bound is ended (Chromium reports it as a crash).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Usage", "browser_processes", "descendants_usage"]

_KB = 1024


@dataclass(frozen=True, slots=True)
class Usage:
    rss: int  # bytes, summed over the processes
    pss: int  # bytes, summed; 0 where the kernel does not tell
    processes: int
    renderers: tuple[tuple[int, int], ...] = ()  # (pid, bytes used) of each renderer process

    @property
    def used(self) -> int:
        """What the processes take from the machine: PSS, or RSS where PSS is unknown."""
        return self.pss or self.rss


def descendants_usage(pid: int | None = None) -> Usage:
    """The memory of every descendant of *pid* (default: this process), itself excluded."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
        if len(fields) >= 2:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    rss = pss = processes = 0
    renderers = []
    stack = list(children.get(root, ()))
    while stack:
        each = stack.pop()
        stack.extend(children.get(each, ()))
        try:
            rollup = Path(f"/proc/{each}/smaps_rollup").read_text()
            renderer = b"--type=renderer" in Path(f"/proc/{each}/cmdline").read_bytes()
        except OSError:
            continue  # gone, or a kernel without it
        processes += 1
        own_rss = own_pss = 0
        for line in rollup.splitlines():
            name, _, value = line.partition(":")
            if name == "Rss":
                own_rss = int(value.split()[0]) * _KB
            elif name == "Pss":
                own_pss = int(value.split()[0]) * _KB
        rss, pss = rss + own_rss, pss + own_pss
        if renderer:
            renderers.append((each, own_pss or own_rss))
    return Usage(rss, pss, processes, tuple(renderers))


def browser_processes(pid: int | None = None) -> list[int]:
    """The Chromium browser processes among *pid*'s descendants: those Playwright launched
    (``--remote-debugging-pipe``), not their renderers and helpers (``--type=...``)."""
    root = os.getpid() if pid is None else pid
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = b"--remote-debugging-pipe" in command and not any(arg.startswith(b"--type=") for arg in command)
        if ours and _descends(int(entry.name), root):
            found.append(int(entry.name))
    return found


def _descends(pid: int, root: int) -> bool:
    for _ in range(64):  # a process tree is never this deep
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rpartition(")")[2].split()[1])
        if pid == root:
            return True
        if pid <= 1:
            return False
    return False
