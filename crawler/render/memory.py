"""Memory of this process's child processes (the browser's), from /proc.

Playwright does not say which processes are Chromium's; they are the
descendants of this one (through Playwright's driver). Chromium's processes
share much of their memory, so the sum of their RSS counts it once per
process (about twice what they use, measured); their proportional set size
(PSS) splits each shared page among its users, and its sum is what they
take from the machine. Linux only; elsewhere both read 0 and no cap trips.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Usage", "descendants_usage"]

_KB = 1024


@dataclass(frozen=True, slots=True)
class Usage:
    rss: int  # bytes, summed over the processes
    pss: int  # bytes, summed; 0 where the kernel does not tell
    processes: int

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
    stack = list(children.get(root, ()))
    while stack:
        each = stack.pop()
        stack.extend(children.get(each, ()))
        try:
            rollup = Path(f"/proc/{each}/smaps_rollup").read_text()
        except OSError:
            continue  # gone, or a kernel without it
        processes += 1
        for line in rollup.splitlines():
            name, _, value = line.partition(":")
            if name == "Rss":
                rss += int(value.split()[0]) * _KB
            elif name == "Pss":
                pss += int(value.split()[0]) * _KB
    return Usage(rss, pss, processes)
