"""Resume benchmark (not a test): a crawl of the big static site (bench/big_site.py) killed with
SIGKILL at random moments and continued each time with ``--resume`` publishes the set an
uninterrupted crawl publishes: no URL lost, none added, the lastmod of each the same.

Prints, per kill: when it came (seconds into that attempt), the pages the state store held,
whether the scratch folder was left (the next run removes it), then the comparison.

    python bench/resume.py --pages 20000 --kills 3 [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.frontier import ensure_site  # noqa: E402
from bench.run import WORK, crawl_command, start_nginx  # noqa: E402

_URL = re.compile(rb"<loc>([^<]*)</loc>(?:<lastmod>([^<]*)</lastmod>)?")


def entries(out: Path) -> dict[str, str]:
    """loc -> lastmod of every shard in *out* (the index left out)."""
    found = {}
    for shard in sorted(out.glob("sitemap-*.xml")):
        for loc, lastmod in _URL.findall(shard.read_bytes()):
            found[loc.decode()] = lastmod.decode()
    return found


def age(root: Path) -> None:
    """Every file of the site modified at one fixed moment a year back: a Last-Modified within a
    minute of the fetch is taken for the fetch time and left out, so a site just generated
    would give the two crawls different lastmods for reasons of the clock alone."""
    moment = time.time() - 365 * 86400
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), (moment, moment))


def recorded(state: Path) -> int:
    if not state.exists():
        return 0
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT count(*) FROM page").fetchone()[0])


def command(url: str, out: Path, concurrency: int, *extra: str) -> list[str]:
    line = crawl_command(url, out, concurrency, *extra)
    line[0:1] = [sys.executable, "-m", "crawler.cli"]  # this checkout's code
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    root = (WORK / f"big-site-{args.pages}").resolve()
    ensure_site(args.pages, root)
    age(root)
    work = (WORK / "resume").resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    server, port = start_nginx(root)
    url = f"http://127.0.0.1:{port}/"
    try:
        started = time.monotonic()
        subprocess.run(command(url, work / "reference", args.concurrency), check=True, env=env)
        whole = time.monotonic() - started
        print(f"uninterrupted: {whole:.1f} s, {len(entries(work / 'reference')):,} URLs")
        rng = random.Random(args.seed)
        out = work / "killed"
        for kill in range(args.kills + 1):
            extra = ("--resume",) if kill else ()
            process = subprocess.Popen(command(url, out, args.concurrency, *extra), env=env)
            if kill == args.kills:  # the last attempt runs to its end
                process.wait()
                print(f"final --resume: exit {process.returncode}")
                break
            moment = rng.uniform(0.1, 0.8) * whole / (kill + 1)  # each attempt has less left to do
            try:
                process.wait(timeout=moment)
                print(f"attempt {kill + 1} ended before its kill at {moment:.1f} s")
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                process.wait()
                left = [p.name for p in out.parent.glob(f"{out.name}.scratch-*")]
                print(f"killed at {moment:.1f} s: {recorded(out.parent / f'{out.name}.state.sqlite'):,} pages recorded,"
                      f" scratch left: {left}")  # fmt: skip
    finally:
        server.terminate()  # by its PID
        server.wait(timeout=10)
    reference, resumed = entries(work / "reference"), entries(out)
    lost, added = set(reference) - set(resumed), set(resumed) - set(reference)
    other = sum(1 for loc in set(reference) & set(resumed) if reference[loc] != resumed[loc])
    print(f"reference {len(reference):,} URLs, resumed {len(resumed):,}: {len(lost)} lost, {len(added)} added,"
          f" {other} with another lastmod; scratch folders left: {len(list(work.glob('*.scratch-*')))}")  # fmt: skip


if __name__ == "__main__":
    main()
