"""Measuring a benchmark's child process: wall time, CPU (its own and that of every
child it waited for), peak RSS, and another process's CPU from /proc (nginx, Redis)."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Measured:
    seconds: float
    cpu: float  # user + system seconds
    rss_mb: float  # peak resident set of the child itself
    code: int
    stdout: str
    stderr: str


def measure(command: list[str], timeout: float = 1800, cwd: Path | None = None) -> Measured:
    """Run *command* to its end (killed after *timeout* seconds): CPU and peak RSS from
    ``wait4``; stdout and stderr go through files, so a chatty child never blocks."""
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    out_path = folder / f"bench-{os.getpid()}-{time.monotonic_ns()}.out"
    err_path = out_path.with_suffix(".err")
    started = time.perf_counter()
    with out_path.open("w") as out, err_path.open("w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, cwd=cwd)
        deadline = started + timeout
        while True:  # bounded by *timeout*
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.01)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = out_path.read_text(), err_path.read_text()
    out_path.unlink()
    err_path.unlink()
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(elapsed, cpu, usage.ru_maxrss / 1024, process.returncode, stdout, stderr)


def cpu_seconds(pid: int) -> float:
    """User and system CPU of *pid* and its live children (nginx's workers), from /proc."""
    total = 0.0
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(child) for child in children.read_text().split()]
    for each in pids:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    return total
