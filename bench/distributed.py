"""Benchmark (not a test): the crawl shared through Redis against one process.

For each site (the 5,000-page bench site, the PostgreSQL manual from
Debian's ``postgresql-doc-15`` when installed) it crawls with one process,
then with ``--workers 1/2/3`` through a private redis-server, and prints
pages/s, CPU ms per page (the crawler's processes), and the CPU nginx and
Redis spent meanwhile: on a 2-core machine they share the cores with the
workers. Then it measures Redis memory per queued and per seen URL with
the real frontier. Touches only 127.0.0.1.

    python bench/distributed.py [--pages 5000] [--concurrency 16] [--workers 1,2,3]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.measure import cpu_seconds, measure  # noqa: E402
from bench.run import WORK, crawl_command, start_nginx  # noqa: E402
from bench.site import build_site  # noqa: E402
from crawler.distributed.codec import QueuedRequest  # noqa: E402
from crawler.distributed.frontier import RedisFrontier  # noqa: E402
from crawler.distributed.server import PrivateRedis  # noqa: E402

POSTGRES_MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")


def measured(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the command and every child it waited for, and its stderr."""
    run = measure(command)
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
                command += ["--workers", str(workers), "--distributed", redis.url]
            nginx_before = cpu_seconds(server.pid)
            redis_before = cpu_seconds(redis.process.pid) if redis and redis.process else 0.0
            seconds, cpu, stderr = measured(command)
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


async def redis_memory(count: int) -> tuple[float, float]:
    """Bytes of Redis memory per queued URL (stream entry and seen member) and per seen URL (member only)."""
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
                fingerprint = hashlib.sha1(url.encode()).digest()[:16]  # the project's fingerprints are 16 bytes
                request = QueuedRequest(url, depth=3, referrer=f"https://www.example.com/docs/section-{n % 97}/")
                batch.append((fingerprint, request))
            await frontier.offer(batch)
        queued = (await redis.info("memory"))["used_memory"]
        while leases := await frontier.lease(count=1000):
            await frontier.ack([lease.entry for lease in leases])
        seen = (await redis.info("memory"))["used_memory"]
        return (queued - before) / count, (seen - before) / count
    finally:
        await redis.aclose()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", default="1,2,3", help="worker counts to compare, comma-separated")
    parser.add_argument("--urls", type=int, default=200_000, help="URLs for the Redis memory figures")
    args = parser.parse_args()
    counts = [int(each) for each in args.workers.split(",") if each]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    root = WORK / f"site-{args.pages}-media"
    if not (root / "index.html").exists():
        build_site(root, args.pages)
    compare(f"bench site, {args.pages} pages", root, args.concurrency, counts)
    one_page = WORK / "one-page"
    one_page.mkdir(parents=True, exist_ok=True)
    (one_page / "index.html").write_text("<html><head><title>One</title></head><body>one page</body></html>")
    compare("one page: the fixed cost of start-up and the end", one_page, args.concurrency, counts)
    if POSTGRES_MANUAL.is_dir():
        compare("PostgreSQL manual", POSTGRES_MANUAL, args.concurrency, counts)
    else:
        print("\nPostgreSQL manual: not installed (apt-get install postgresql-doc-15)")
    per_queued, per_seen = asyncio.run(redis_memory(args.urls))
    print(f"\nRedis memory ({args.urls:,} URLs): {per_queued:.0f} bytes per queued URL, {per_seen:.0f} per seen URL")
    print("target: --workers 2 at least 1.5x one process on the PostgreSQL manual")


if __name__ == "__main__":
    main()
