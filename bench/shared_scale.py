"""The scale run of bench/distributed.py (not a test): a site of small pages, and a watch on
every process of a shared crawl while it runs.

- :func:`build_small_site` writes N pages of 1-2 KB with a few links each (the next page,
  two children in a binary tree, three random pages), so discovery runs far ahead of the
  fetches and the frontier holds most of the site at its peak, as on a big real site.
- :class:`Watch` samples, four times a second, the peak resident memory (``VmHWM``) of the
  coordinator and of each child it started, and the Redis the crawl runs through: memory,
  frontier and item stream lengths, seen set size, and the exporter's spool on disk.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.sitemaps.publish import STAGING_PREFIX

WORDS = ("shared", "crawl", "frontier", "worker", "lease", "site", "page", "queue", "seen", "redis", "export")


def small_path(number: int) -> str:
    return f"/s{number // 1000}/p{number}.html"


def build_small_site(root: Path, pages: int, seed: int = 11) -> int:
    """Write *pages* pages of 1-2 KB under *root*; every page is reachable from ``/``. The bytes written."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    (root / "index.html").write_text(f'<!DOCTYPE html><html><body><a href="{small_path(0)}">start</a></body></html>\n')
    total = 0
    folder = None
    for number in range(pages):
        targets = [number + 1, 2 * number + 1, 2 * number + 2, *(rng.randrange(pages) for _ in range(3))]
        links = "".join(f'<li><a href="{small_path(t % pages)}">{rng.choice(WORDS)}</a></li>' for t in targets)
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(90, 220)))
        html = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {number}</title>'
            f'<meta name="description" content="page {number} of the scale site"></head>'
            f"<body><main><h1>Page {number}</h1><p>{text}</p><ul>{links}</ul></main></body></html>\n"
        ).encode()
        path = root / small_path(number).lstrip("/")
        if path.parent != folder:
            folder = path.parent
            folder.mkdir(exist_ok=True)
        path.write_bytes(html)
        total += len(html)
    return total


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of *pid* in KB (empty once it has ended)."""
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(value.split()[0])
    except (OSError, ValueError):
        return {}
    return values


def _children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _role(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    return "worker" if b"worker" in argv else Path(argv[0].decode(errors="replace")).name


@dataclass
class Sample:
    """One look at the crawl's Redis."""

    used: int  # used_memory, bytes
    queued: int  # entries in the frontier stream (leased ones included)
    seen: int  # members of the seen set
    items: int  # entries in the item stream (pushed, not yet exported)
    items_bytes: int  # MEMORY USAGE of the item stream
    queued_bytes: int  # MEMORY USAGE of the frontier stream


@dataclass
class Watch:
    """Samples a running crawl from another thread until :meth:`stop`; see the module's docstring."""

    root_pid: int
    out: Path
    redis: Any = None  # a synchronous redis.Redis, or None for a crawl without one
    interval: float = 0.25
    every: float = 30.0  # seconds between progress lines (0: none)
    peaks: dict[int, tuple[str, int]] = field(default_factory=dict)  # pid: (role, VmHWM KB)
    samples: list[Sample] = field(default_factory=list)
    spool_peak: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _keys: dict[str, str] = field(default_factory=dict)

    def start(self) -> Watch:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        started = next_line = time.monotonic()
        while not self._stop.wait(self.interval):  # bounded by stop()
            self.look()
            if self.every and time.monotonic() >= next_line + self.every:
                next_line = time.monotonic()
                print(f"    {next_line - started:5.0f} s: {self.progress()}", flush=True)

    def progress(self) -> str:
        """RSS now of each process, and where the crawl's Redis stands."""
        now = {pid: _status(pid).get("VmRSS", 0) for pid in sorted(self.peaks)}
        rss = ", ".join(f"{self.peaks[pid][0]} {kb / 1024:.0f} MB" for pid, kb in now.items() if kb)
        if not self.samples:
            return rss
        last = self.samples[-1]
        return (
            f"{last.seen - last.queued:,} fetched, {last.queued:,} queued, {last.items:,} items waiting,"
            f" Redis {last.used / 1e6:,.0f} MB; {rss}"
        )

    def look(self) -> None:
        pending = [self.root_pid]
        while pending:  # the process tree, bounded by the processes alive
            pid = pending.pop()
            status = _status(pid)
            if "VmHWM" in status:
                role = "coordinator" if pid == self.root_pid else self.peaks.get(pid, (None, 0))[0] or _role(pid)
                self.peaks[pid] = (role, max(status["VmHWM"], self.peaks.get(pid, ("", 0))[1]))
            pending += _children(pid)
        for spool in self.out.glob(f"{STAGING_PREFIX}*/spool.sqlite3*"):
            try:
                self.spool_peak = max(self.spool_peak, spool.stat().st_size)
            except OSError:
                continue
        if self.redis is not None:
            self.samples.append(self.sample())

    def keys(self) -> dict[str, str]:
        """The crawl's frontier, seen set and item stream, found once they exist."""
        if not self._keys:
            for key in self.redis.scan_iter(match="sitemap-crawler:*:frontier", count=1000):
                prefix = key.decode()[: -len("frontier")]
                self._keys = {name: prefix + name for name in ("frontier", "seen", "items")}
        return self._keys

    def sample(self) -> Sample:
        used = int(self.redis.info("memory")["used_memory"])
        keys = self.keys()
        if not keys:
            return Sample(used, 0, 0, 0, 0, 0)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.xlen(keys["frontier"])
            pipe.scard(keys["seen"])
            pipe.xlen(keys["items"])
            pipe.memory_usage(keys["items"])
            pipe.memory_usage(keys["frontier"])
            queued, seen, items, items_bytes, queued_bytes = pipe.execute()
        return Sample(used, int(queued), int(seen), int(items), int(items_bytes or 0), int(queued_bytes or 0))

    def summary(self) -> dict[str, Any]:
        """Peak RSS (MB) per role, and the Redis samples at their peaks."""
        roles: dict[str, list[float]] = {}
        for pid in sorted(self.peaks):
            role, kb = self.peaks[pid]
            roles.setdefault(role, []).append(kb / 1024)
        figures: dict[str, Any] = {"rss": roles, "spool": self.spool_peak}
        if self.samples:
            figures["used_peak"] = max(sample.used for sample in self.samples)
            figures["queued_peak"] = max(self.samples, key=lambda sample: sample.queued)
            figures["items_peak"] = max(self.samples, key=lambda sample: sample.items)
        return figures


def state_store_bytes(out: Path) -> int:
    """The SQLite state store beside *out* (``<out>.state.sqlite`` and its WAL), on disk."""
    return sum(path.stat().st_size for path in out.parent.glob(f"{out.name}.state.sqlite*"))


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def wait_exit(process: Any, timeout: float) -> None:
    """Wait for a child, killed after *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while process.poll() is None:  # bounded by *timeout*
        if time.monotonic() > deadline:
            process.kill()
            process.wait(timeout=30)
            raise SystemExit(f"the crawl did not end within {timeout:.0f} s")
        time.sleep(0.2)
