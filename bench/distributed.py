"""Benchmark (not a test): the crawl shared through Redis against one process, and its cost at scale.

``compare``: for each site (the 5,000-page bench site, the PostgreSQL manual
from Debian's ``postgresql-doc-15`` when installed) it crawls with one
process, then with ``--workers 1/2/3`` through a private redis-server, and
prints pages/s, CPU ms per page (the crawler's processes), and the CPU nginx
and Redis spent meanwhile: on a 2-core machine they share the cores.

``scale``: a generated site of ``--pages`` small pages (1-2 KB, six links
each, in a temporary folder) crawled by one process and with ``--workers 2``
and ``3``: pages/s, peak RSS of the coordinator and of each worker, Redis
memory at the frontier's peak and at the end of the crawl (its keys are
still there: the next run of the same crawl removes them), the exporter's
spool and the SQLite state store on disk per URL.

``memory``: Redis bytes per queued and per seen URL, through the project's
own frontier (``offer``, then ``lease`` and ``ack`` of every URL).

Touches only 127.0.0.1. On a machine shared with others, run it as
``nice -n 19 python bench/distributed.py``: nginx, Redis and the crawlers
inherit the niceness, which the figures print.

    python bench/distributed.py [--only compare|scale|memory] [--pages 200000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.measure import cpu_seconds, measure  # noqa: E402
from bench.run import WORK, crawl_command, start_nginx  # noqa: E402
from bench.shared_scale import Watch, build_small_site, niceness, state_store_bytes, wait_exit  # noqa: E402
from bench.site import build_site  # noqa: E402
from crawler.distributed.codec import QueuedRequest  # noqa: E402
from crawler.distributed.frontier import RedisFrontier  # noqa: E402
from crawler.distributed.server import PrivateRedis  # noqa: E402
from crawler.request_fingerprinter import url_fingerprint  # noqa: E402

SECRET_VARIABLE = "SITEMAP_CRAWLER_SHARED_SECRET"
DISTRIBUTED_VARIABLE = "SITEMAP_CRAWLER_DISTRIBUTED"  # the Redis URL, password included: kept out of ps

POSTGRES_MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")


def measured(command: list[str], redis_url: str | None = None) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the command and every child it waited for, and its stderr."""
    os.environ.pop(DISTRIBUTED_VARIABLE, None)
    if redis_url:
        os.environ[DISTRIBUTED_VARIABLE] = redis_url
    try:
        run = measure(command)
    finally:
        os.environ.pop(DISTRIBUTED_VARIABLE, None)
    if run.code != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{run.stderr[-2000:]}")
    return run.seconds, run.cpu, run.stderr


def crawled(stderr: str) -> int:
    return int(stderr.split("Crawled ", 1)[1].split(maxsplit=1)[0])


def compare(name: str, root: Path, concurrency: int, worker_counts: list[int]) -> None:
    """Each setup on one site: pages/s, CPU per page, nginx's and Redis's CPU."""
    server, port = start_nginx(root)
    url = f"http://127.0.0.1:{port}/"
    print(f"\n{name} ({url}, concurrency {concurrency}, state store on, politeness off)")
    try:
        baseline = 0.0
        for workers in [0, *worker_counts]:
            out = WORK / f"out-shared-{workers}"
            shutil.rmtree(out, ignore_errors=True)
            for leftover in WORK.glob(f"{out.name}.*"):
                leftover.unlink()
            command = crawl_command(url, out, concurrency)
            folder = Path(tempfile.mkdtemp(prefix="bench-redis-"))
            redis = PrivateRedis(folder).start() if workers else None
            if redis is not None:
                command += ["--workers", str(workers)]
            nginx_before = cpu_seconds(server.pid)
            redis_before = cpu_seconds(redis.process.pid) if redis and redis.process else 0.0
            seconds, cpu, stderr = measured(command, redis.url if redis else None)
            nginx_cpu = cpu_seconds(server.pid) - nginx_before
            redis_cpu = (cpu_seconds(redis.process.pid) - redis_before) if redis and redis.process else 0.0
            if redis is not None:
                redis.stop()
            shutil.rmtree(folder, ignore_errors=True)
            pages = crawled(stderr)
            rate = pages / seconds
            baseline = baseline or rate
            label = "one process" if not workers else f"--workers {workers}"
            print(
                f"  {label:12} {pages} pages in {seconds:5.1f} s = {rate:6.1f} pages/s ({rate / baseline:.2f}x),"
                f" crawler CPU {cpu / pages * 1000:.2f} ms/page, nginx {nginx_cpu:.1f} s, Redis {redis_cpu:.1f} s"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


async def redis_memory(count: int) -> dict[str, float]:
    """Redis bytes per URL: queued (stream entry and seen member) and seen only (member), as
    ``used_memory`` grew, and ``MEMORY USAGE`` of the seen set and of the stream at the peak."""
    folder = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    server = PrivateRedis(folder).start()
    from redis.asyncio import Redis

    redis = Redis.from_url(server.url)
    try:
        frontier = RedisFrontier(redis, "bench", "w1")
        await frontier.open()
        before = (await redis.info("memory"))["used_memory"]
        for start in range(0, count, 1000):
            batch = []
            for n in range(start, min(count, start + 1000)):
                url = f"https://www.example.com/docs/section-{n % 97}/page-{n}.html"
                request = QueuedRequest(url, depth=3, referrer=f"https://www.example.com/docs/section-{n % 97}/")
                batch.append((url_fingerprint(url), request))
            await frontier.offer(batch)
        queued = (await redis.info("memory"))["used_memory"]
        seen_key = int(await redis.memory_usage(frontier.seen, samples=0) or 0)
        stream_key = int(await redis.memory_usage(frontier.stream, samples=0) or 0)
        while leases := await frontier.lease(count=1000):  # bounded: each URL is leased once, then acked
            await frontier.ack([lease.entry for lease in leases])
        seen = (await redis.info("memory"))["used_memory"]
        return {
            "queued": (queued - before) / count,
            "seen": (seen - before) / count,
            "seen_key": seen_key / count,
            "stream_key": stream_key / count,
        }
    finally:
        await redis.aclose()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def scale_crawl(url: str, out: Path, concurrency: int, workers: int) -> dict[str, Any]:
    """One crawl of the scale site (*workers* 0: one process, no Redis), watched as it runs."""
    from redis import Redis

    shutil.rmtree(out, ignore_errors=True)
    command = crawl_command(url, out, concurrency)
    environment = {key: value for key, value in os.environ.items() if key != DISTRIBUTED_VARIABLE}
    redis_folder = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    server = PrivateRedis(redis_folder).start() if workers else None
    client = Redis.from_url(server.url) if server else None
    if server is not None:
        command += ["--workers", str(workers)]
        environment[DISTRIBUTED_VARIABLE] = server.url
    try:
        base = int(client.info("memory")["used_memory"]) if client else 0
        err = out.parent / f"{out.name}.stderr"
        with err.open("w") as stderr:
            started = time.perf_counter()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environment)
            watch = Watch(process.pid, out, client).start()
            try:
                wait_exit(process, timeout=3600)
            finally:
                watch.stop()
            seconds = time.perf_counter() - started
        text = err.read_text()
        if process.returncode != 0:
            raise SystemExit(f"the crawl with {workers} workers failed:\n{text[-2000:]}")
        figures = {"seconds": seconds, "pages": crawled(text), **watch.summary(), "base": base}
        summary = next((line for line in text.splitlines() if line.startswith("Crawled ")), "")
        print(f"    {summary}", flush=True)  # the crawl's own count and rate
        figures["state"] = state_store_bytes(out)
        if client is not None:
            memory = client.info("memory")
            keys = watch.keys()
            figures["used_end"], figures["used_peak_info"] = int(memory["used_memory"]), int(memory["used_memory_peak"])
            figures["seen_end"] = int(client.scard(keys["seen"])) if keys else 0
            figures["seen_key"] = int(client.memory_usage(keys["seen"], samples=0) or 0) if keys else 0
        return figures
    finally:
        if client is not None:
            client.close()
        if server is not None:
            server.stop()
        shutil.rmtree(redis_folder, ignore_errors=True)


def megabytes(value: float) -> str:
    return f"{value / 1e6:,.1f} MB"


def scale(pages: int, concurrency: int, worker_counts: list[int]) -> None:
    """The scale run: see the module's docstring. Prints one table."""
    folder = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    folder.chmod(0o755)  # nginx's workers run as another user when the bench runs as root
    try:
        started = time.perf_counter()
        size = build_small_site(folder / "site", pages)
        built = time.perf_counter() - started
        print(f"\nscale site: {pages:,} pages, {size / pages:,.0f} bytes a page, built in {built:.0f} s"
              f" (concurrency {concurrency}, politeness off, state store on)")  # fmt: skip
        server, port = start_nginx(folder / "site")
        rows = []
        try:
            for workers in worker_counts:
                figures = scale_crawl(f"http://127.0.0.1:{port}/", folder / f"out-{workers}", concurrency, workers)
                rows.append((workers, figures))
                label = f"--workers {workers}" if workers else "one process"
                print(f"  {label}: {figures['pages']:,} pages in {figures['seconds']:.0f} s", flush=True)
                print_scale(rows)  # the table so far: a long run that is stopped still leaves its figures
        finally:
            server.terminate()
            server.wait(timeout=10)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def print_scale(rows: list[tuple[int, dict[str, Any]]]) -> None:
    """The table of the crawls so far (ratios against one process when it ran, else the first)."""
    first = next((f for workers, f in rows if not workers), rows[0][1])  # one process, when it ran
    baseline = first["pages"] / first["seconds"]
    print("| setup | pages/s | peak RSS: coordinator, workers | Redis peak | frontier peak | Redis at the end |"
          " seen set | state store | spool peak |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for workers, f in rows:
        rate = f["pages"] / f["seconds"]
        label = f"`--workers {workers}`" if workers else "one process"
        rss = f["rss"]
        coordinator = max(rss.get("coordinator", [0]))
        others = ", ".join(f"{mb:.0f}" for mb in rss.get("worker", [])) or "-"
        state = f"{megabytes(f['state'])}, {f['state'] / f['pages']:.0f} B/URL"
        row = [label, f"{rate:,.0f} ({rate / baseline:.2f}x; {f['pages']:,} in {f['seconds']:.0f} s)",
               f"{coordinator:.0f} MB, {others} MB"]  # fmt: skip
        if workers:
            peak, end = f["queued_peak"], f["used_end"] - f["base"]
            row += [
                f"{megabytes(f['used_peak_info'] - f['base'])}",
                (
                    f"{peak.queued:,} queued ({peak.queued_bytes / max(1, peak.queued):,.0f} B each),"
                    f" {peak.seen:,} seen: {megabytes(peak.used - f['base'])}"
                ),
                megabytes(end),
                f"{f['seen_end']:,}: {megabytes(f['seen_key'])}, {f['seen_key'] / max(1, f['seen_end']):.0f} B each",
            ]
        else:
            row += ["-", "-", "-", "-"]
        row += [state, megabytes(f["spool"])]
        print("| " + " | ".join(row) + " |")
    for workers, f in rows:
        if workers and f["items_peak"].items:
            item = f["items_peak"]
            print(f"  --workers {workers}: item stream peak {item.items:,} entries,"
                  f" {megabytes(item.items_bytes)} ({item.items_bytes / item.items:,.0f} B an item)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("compare", "scale", "memory"), help="one part (default: all three)")
    parser.add_argument("--pages", type=int, default=200_000, help="pages of the scale site")
    parser.add_argument("--compare-pages", type=int, default=5000, help="pages of the bench site compared")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", default="1,2,3", help="worker counts to compare, comma-separated")
    parser.add_argument("--scale-workers", default="0,2,3", help="worker counts of the scale run (0: one process)")
    parser.add_argument("--urls", type=int, default=200_000, help="URLs for the Redis memory figures")
    args = parser.parse_args()
    os.environ.setdefault(SECRET_VARIABLE, secrets.token_hex(32))  # the shared crawls sign their configuration
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},"
        f" load {os.getloadavg()[0]:.1f}, niceness {niceness()}"
    )
    if args.only in (None, "compare"):
        compare_all(args.compare_pages, args.concurrency, [int(each) for each in args.workers.split(",") if each])
    if args.only in (None, "scale"):
        scale(args.pages, args.concurrency, [int(each) for each in args.scale_workers.split(",") if each])
    if args.only in (None, "memory"):
        figures = asyncio.run(redis_memory(args.urls))
        print(
            f"\nRedis memory ({args.urls:,} URLs through RedisFrontier.offer, then lease and ack):"
            f" {figures['queued']:.0f} bytes per queued URL (stream entry and seen member),"
            f" {figures['seen']:.0f} per seen URL; MEMORY USAGE: seen set {figures['seen_key']:.0f} B a member,"
            f" stream {figures['stream_key']:.0f} B an entry"
        )


def compare_all(pages: int, concurrency: int, counts: list[int]) -> None:
    root = WORK / f"site-{pages}-media"
    if not (root / "index.html").exists():
        build_site(root, pages)
    compare(f"bench site, {pages} pages", root, concurrency, counts)
    one_page = WORK / "one-page"
    one_page.mkdir(parents=True, exist_ok=True)
    (one_page / "index.html").write_text("<html><head><title>One</title></head><body>one page</body></html>")
    compare("one page: the fixed cost of start-up and the end", one_page, concurrency, counts)
    if POSTGRES_MANUAL.is_dir():
        compare("PostgreSQL manual", POSTGRES_MANUAL, concurrency, counts)
    else:
        print("\nPostgreSQL manual: not installed (apt-get install postgresql-doc-15)")
    print("target: --workers 2 at least 1.5x one process on the PostgreSQL manual")


if __name__ == "__main__":
    main()
