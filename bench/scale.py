"""Scale benchmark (not a test): a 200,000-page site of the 5,000-page kind.

Crawls the 5,000-page site and then the big one with the same command (state
store on, no limits), and prints pages/s of both, their ratio, and the
crawler's resident memory as it passes 50,000, 100,000 and 200,000 pages,
with the growth per URL between those points. Touches only 127.0.0.1.

    python bench/scale.py [--pages 200000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.run import WORK, crawl_command, start_nginx  # noqa: E402
from bench.site import build_site  # noqa: E402

_CRAWLED = re.compile(r"crawled (\d+)")


def memory_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of *pid*, from /proc."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(value.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def crawl(pages: int, concurrency: int, marks: tuple[int, ...]) -> tuple[float, float, dict[int, tuple[int, float]]]:
    """Wall seconds and peak RSS (MB) of one crawl of the *pages* site, and
    (pages, RSS MB) when passing each mark."""
    root = WORK / f"site-{pages}-media"
    if not (root / "index.html").exists():
        print(f"building a {pages}-page site in {root} ...", flush=True)
        build_site(root, pages)
    server, port = start_nginx(root)
    out = WORK / f"scale-{pages}"
    shutil.rmtree(out, ignore_errors=True)
    for leftover in WORK.glob(f"scale-{pages}.*"):
        leftover.unlink()
    command = [arg for arg in crawl_command(f"http://127.0.0.1:{port}/", out, concurrency) if arg != "-q"]
    seen: dict[int, tuple[int, float]] = {}
    try:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None
        for line in process.stderr:  # a progress line every 10 s; ends with the process
            match = _CRAWLED.search(line)
            if not match or process.poll() is not None:
                continue
            crawled = int(match.group(1))
            current, _ = memory_mb(process.pid)
            for mark in marks:
                if crawled >= mark and mark not in seen:
                    seen[mark] = (crawled, current)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
        if process.returncode != 0:
            raise SystemExit(f"the crawl of {pages} pages failed")
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(out, ignore_errors=True)
    return elapsed, usage.ru_maxrss / 1024, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200_000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    small_time, small_peak, _ = crawl(5000, args.concurrency, ())
    small_rate = 5001 / small_time
    print(f"5,000 pages: {small_time:.1f} s = {small_rate:.1f} pages/s, peak RSS {small_peak:.0f} MB", flush=True)
    marks = (args.pages // 4, args.pages // 2, args.pages * 19 // 20)  # the last one before the export
    big_time, big_peak, seen = crawl(args.pages, args.concurrency, marks)
    big_rate = (args.pages + 1) / big_time
    ratio = big_rate / small_rate
    print(f"{args.pages:,} pages: {big_time:.1f} s = {big_rate:.1f} pages/s = {ratio:.2f} of the 5,000-page rate")
    previous: tuple[int, float] | None = None
    for crawled, rss in sorted(seen.values()):
        growth = ""
        if previous:
            growth = f", +{(rss - previous[1]) * 1024 * 1024 / (crawled - previous[0]):.0f} bytes per page since"
        print(f"  RSS at {crawled:,} pages: {rss:.0f} MB{growth}")
        previous = (crawled, rss)
    print(f"  peak RSS of the whole run (export included): {big_peak:.0f} MB")
    print("targets: pages/s within 15% of the 5,000-page run (>= 0.85), peak RSS <= 400 MB")


if __name__ == "__main__":
    main()
