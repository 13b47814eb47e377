"""Frontier benchmark (not a test): the crawler's memory and speed with its frontier on
disk (``SITEMAP_DISK_FRONTIER``, the default) and, with ``--compare-memory``, with the
in-memory queue, on a big static site (bench/big_site.py: home, sections, pages).

Generates the site of --pages N (or reuses it), serves it with nginx on 127.0.0.1,
crawls it with no limits and samples the crawler's RSS every 0.5 s from /proc. Prints
per run: pages, wall s, pages/s (and after the section phase, once the queue stops
growing), peak RSS, RSS at 25/50/75/100% of the wall time, and whether the runs'
sets of <loc> are identical. A run past --timeout is killed (its process group) and
reported as such. Results go to RUNS/<run>/: rss.tsv, progress.tsv, stderr.log, result.json.

    python bench/frontier.py --pages 100000 --concurrency 8 --compare-memory
    python bench/frontier.py --pages 1000000 --site /big/site-1m --concurrency 32 --timeout 1800
    python bench/frontier.py --pages 100000 --list    # list mode: every page's URL in a --urls file
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.big_site import Site  # noqa: E402
from bench.run import WORK, crawl_command, start_nginx  # noqa: E402

_PROGRESS = re.compile(r"crawled (\d+) \| queued (\d+)")
_LOC = re.compile(rb"<loc>([^<]*)</loc>")
_BAD = re.compile(r"WARNING|ERROR|CRITICAL|Traceback")
_PAGE = re.compile(r'"GET (\S+) HTTP/[\d.]+" 200 ')


def rss_mb(pid: int) -> float:
    """Resident memory of *pid* now (VmRSS), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def locs(out: Path) -> set[str]:
    """The paths of every <loc> in the shards of *out* (the index left out; the port differs per run)."""
    paths = set()
    for file in sorted(out.rglob("*.xml*")):
        if not file.name.endswith((".xml", ".xml.gz")):
            continue
        data = gzip.decompress(file.read_bytes()) if file.name.endswith(".gz") else file.read_bytes()
        if b"<sitemapindex" in data[:600]:
            continue
        for match in _LOC.finditer(data):
            url = match.group(1).decode()
            paths.add(url[url.index("/", url.index("//") + 2) :])
    return paths


def ensure_site(pages: int, root: Path) -> None:
    if (root / "site.json").exists() and json.loads((root / "site.json").read_text())["pages"] == pages:
        return
    print(f"generating {pages:,} pages in {root} ...", flush=True)
    subprocess.run([sys.executable, str(HERE / "big_site.py"), "--pages", str(pages), "--out", str(root)], check=True)


def crawl(name: str, url: str, run: Path, concurrency: int, timeout: float, *extra: str) -> dict:
    """One crawl, measured; the crawler in its own process group, killed with it past *timeout*."""
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    out = run / "out"
    command = [arg for arg in crawl_command(url, out, concurrency, "--no-state", *extra) if arg != "-q"]
    command[0:1] = [sys.executable, "-m", "crawler.cli"]  # this checkout's code, whatever is installed
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    (run / "command.txt").write_text(" ".join(command) + "\n")
    samples: list[tuple[float, float]] = []
    progress: list[tuple[float, int, int]] = []
    frontier_seen = False
    started = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    stop = threading.Event()

    def sample() -> None:
        nonlocal frontier_seen
        while not stop.is_set():
            if mb := rss_mb(process.pid):
                samples.append((time.monotonic() - started, mb))
            frontier_seen = frontier_seen or any(run.glob("out.scratch-*"))
            stop.wait(0.5)

    def read() -> None:
        assert process.stderr is not None
        with open(run / "stderr.log", "w") as log:
            for line in process.stderr:
                log.write(line)
                if match := _PROGRESS.search(line):
                    progress.append((time.monotonic() - started, int(match[1]), int(match[2])))

    threads = [threading.Thread(target=sample, daemon=True), threading.Thread(target=read, daemon=True)]
    for thread in threads:
        thread.start()
    killed, status = False, None
    try:
        while status is None:
            pid, waited, _ = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status = waited
            elif timeout and time.monotonic() - started > timeout:
                os.killpg(process.pid, signal.SIGKILL)  # the crawler's own group only
                _, status, _ = os.wait4(process.pid, 0)
                killed = True
            else:
                time.sleep(0.2)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    wall = time.monotonic() - started
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    (run / "rss.tsv").write_text("".join(f"{t:.1f}\t{mb:.1f}\n" for t, mb in samples))
    (run / "progress.tsv").write_text("".join(f"{t:.1f}\t{c}\t{q}\n" for t, c, q in progress))
    result = {
        "run": name,
        "exit": os.waitstatus_to_exitcode(status),
        "killed_at_timeout": killed,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(max((mb for _, mb in samples), default=0), 1),
        "rss_mb_at": {f"{q}%": at(samples, wall * q / 100) for q in (25, 50, 75, 100)},
        "frontier_folder_seen": frontier_seen,
        "frontier_folders_left": [p.name for p in run.glob("out.scratch-*")],
        "warnings": [line for line in (run / "stderr.log").read_text().splitlines() if _BAD.search(line)][:20],
    }
    if progress:
        peak = max(progress, key=lambda p: p[2])  # the section phase ends when the queue is longest
        last = progress[-1]
        result["queue_peak"] = {"t_s": round(peak[0]), "crawled": peak[1], "queued": peak[2]}
        if last[0] > peak[0] + 10:
            result["pages_per_s_after_sections"] = round((last[1] - peak[1]) / (last[0] - peak[0]), 1)
    return result


def at(samples: list[tuple[float, float]], t: float) -> float:
    """The RSS sample nearest before *t* (the last one for t past the end)."""
    before = [mb for s, mb in samples if s <= t + 0.25]
    return round(before[-1], 1) if before else 0.0


def served_pages(access_log: Path) -> int:
    """HTML pages nginx answered 200 (robots.txt and probes left out)."""
    with open(access_log) as log:
        return sum(1 for line in log if (m := _PAGE.search(line)) and m[1] != "/robots.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--compare-memory", action="store_true", help="also crawl with SITEMAP_DISK_FRONTIER=false")
    parser.add_argument("--site", type=Path, help="the site folder (default bench/.work/big-site-N)")
    parser.add_argument("--runs", type=Path, default=WORK / "frontier", help="where the run folders go")
    parser.add_argument("--timeout", type=float, default=0, help="kill a crawl after this many seconds (0: never)")
    parser.add_argument("--list", action="store_true", help="list mode: --urls with every page of the site instead")
    args = parser.parse_args()
    root = (args.site or WORK / f"big-site-{args.pages}").resolve()
    ensure_site(args.pages, root)
    variants = [("disk", ())] + ([("memory", ("--set", "SITEMAP_DISK_FRONTIER=false"))] if args.compare_memory else [])
    if args.list:
        listed = (WORK / f"urls-{args.pages}.txt").resolve()  # outside the served folder
        meta = json.loads((root / "site.json").read_text())
        with open(listed, "w") as file:
            file.writelines(f"{path}\n" for path in Site(meta["pages"], meta["sections"], meta["seed"]).all_paths())
        variants = [("list", ("--urls", str(listed)))]
    results, sets = [], {}
    for name, extra in variants:
        run = (args.runs / f"{args.pages}-c{args.concurrency}-{name}").resolve()
        access_log = run.parent / f"{run.name}.access.log"
        run.parent.mkdir(parents=True, exist_ok=True)
        access_log.unlink(missing_ok=True)
        server, port = start_nginx(root, access_log=access_log)
        try:
            result = crawl(name, f"http://127.0.0.1:{port}/", run, args.concurrency, args.timeout, *extra)
        finally:
            server.terminate()  # by its PID
            server.wait(timeout=10)
        result["pages"] = served_pages(access_log)
        result["pages_per_s"] = round(result["pages"] / result["wall_s"], 1)
        sets[name] = locs(run / "out") if not result["killed_at_timeout"] else None
        result["locs"] = len(sets[name]) if sets[name] is not None else None
        (run / "result.json").write_text(json.dumps(result, indent=1) + "\n")
        results.append(result)
        print(json.dumps(result), flush=True)
    print(f"\n{args.pages:,} pages, concurrency {args.concurrency}")
    print(f"{'run':8} {'pages':>9} {'wall s':>8} {'pages/s':>8} {'peak MB':>8}  RSS MB at 25/50/75/100%  exit")
    for r in results:
        curve = " / ".join(f"{mb:.0f}" for mb in r["rss_mb_at"].values())
        note = " (killed at timeout)" if r["killed_at_timeout"] else ""
        print(
            f"{r['run']:8} {r['pages']:>9,} {r['wall_s']:>8.1f} {r['pages_per_s']:>8.1f} {r['peak_rss_mb']:>8.1f}"
            f"  {curve:>23}  {r['exit']}{note}"
        )
    if len(sets) == 2 and None not in sets.values():
        disk, memory = sets["disk"], sets["memory"]
        same = "identical" if disk == memory else f"DIFFERENT ({len(disk - memory)} / {len(memory - disk)} only in one)"
        print(f"<loc> sets: disk {len(disk):,}, memory {len(memory):,}: {same}")


if __name__ == "__main__":
    main()
