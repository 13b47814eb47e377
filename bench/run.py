"""Benchmarks (not tests): crawl throughput and memory against a bare Scrapy
spider, and sitemap writer throughput. Prints its figures; touches only
127.0.0.1. Needs nginx and wrk (``make bench`` installs them from Debian).

    python bench/run.py [--pages 5000] [--concurrency 16] [--only crawl|writer]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
BIN = Path(sys.executable).parent
sys.path.insert(0, str(HERE.parent))

from bench.site import build_site  # noqa: E402
from crawler.distributed.server import free_port  # noqa: E402

NGINX_CONF = """
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {access_log};
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    types {{ text/html html; text/plain txt; application/javascript js; application/json json; }}
    client_body_temp_path {work}/tmp;
    proxy_temp_path {work}/tmp;
    fastcgi_temp_path {work}/tmp;
    uwsgi_temp_path {work}/tmp;
    scgi_temp_path {work}/tmp;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
        {locations}
    }}
}}
"""


def crawl_command(url: str, out: Path, concurrency: int, *extra: str) -> list[str]:
    """``sitemap-crawler crawl`` with politeness off and no limits, for benchmarks."""
    return [
        str(BIN / "sitemap-crawler"), "crawl", url, "--out", str(out), "-q", "--delay", "0",
        "--concurrency", str(concurrency), "--set", f"CONCURRENT_REQUESTS={concurrency}",
        "--max-pages", "0", "--max-query-variants", "0", *extra,
    ]  # fmt: skip


def run_measured(
    command: list[str], timeout: float = 1800, stderr: bool = False, check: bool = True
) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of that one child, and its stdout (and stderr if asked);
    a non-zero exit ends the benchmark unless *check* is off."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if stderr else subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if check and process.returncode != 0:
        raise SystemExit(f"{command[0]} failed with exit status {process.returncode}")
    return elapsed, usage.ru_maxrss / 1024, output


def start_nginx(
    root: Path, port: int | None = None, access_log: Path | None = None, locations: str = ""
) -> tuple[subprocess.Popen[bytes], int]:
    """nginx serving *root* on 127.0.0.1, its requests logged to *access_log* if given."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise SystemExit("nginx is needed: apt-get install nginx-light (or run `make bench`)")
    port = port or free_port()
    (WORK / "tmp").mkdir(parents=True, exist_ok=True)
    conf = WORK / "nginx.conf"
    log = "off" if access_log is None else str(access_log)
    conf.write_text(NGINX_CONF.format(work=WORK, port=port, root=root, access_log=log, locations=locations))
    server = subprocess.Popen([nginx, "-c", str(conf), "-p", str(WORK), "-g", "daemon off;"])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return server, port
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("nginx did not start; see bench/.work/nginx-error.log")


def server_capacity(url: str, concurrency: int) -> float | None:
    wrk = shutil.which("wrk")
    if not wrk:
        return None
    result = subprocess.run(
        [wrk, "-t1", f"-c{concurrency}", "-d3s", url], capture_output=True, text=True, timeout=30, check=False
    )
    match = re.search(r"Requests/sec:\s+([\d.]+)", result.stdout)
    return float(match.group(1)) if match else None


def crawl_bench(pages: int, concurrency: int) -> None:
    root = WORK / f"site-{pages}-media"
    if not (root / "index.html").exists():
        print(f"building a {pages}-page site in {root} ...", flush=True)
        total = build_site(root, pages)
        print(f"  {total / pages / 1024:.1f} KB per page on average")
    server, port = start_nginx(root)
    try:
        url = f"http://127.0.0.1:{port}/"
        capacity = server_capacity(url + "products/0/page-0.html", concurrency)
        if capacity:
            print(f"nginx alone (wrk, {concurrency} connections): {capacity:,.0f} pages/s")
        out = WORK / "out"
        shutil.rmtree(out, ignore_errors=True)
        for leftover in WORK.glob("out.*"):  # a state store of an earlier run would make this run 2
            leftover.unlink()
        ours_cmd = crawl_command(url, out, concurrency)
        bare_cmd = [sys.executable, str(HERE / "bare_spider.py"), url, str(concurrency)]
        ours_time, ours_rss, _ = run_measured(ours_cmd)
        report = out.parent / f"{out.name}.crawl-report.jsonl"
        fetched = sum(1 for line in report.open() if json.loads(line)["status"] is not None)
        shutil.rmtree(out, ignore_errors=True)
        stateless_time, stateless_rss, _ = run_measured([*ours_cmd, "--no-state"])
        bare_time, bare_rss, bare_out = run_measured(bare_cmd)
        bare_pages = int(bare_out.strip().splitlines()[-1])
        bare_rate = bare_pages / bare_time
        for name, count, seconds, rss in (
            ("sitemap-crawler crawl", fetched, ours_time, ours_rss),
            ("  the same, --no-state", fetched, stateless_time, stateless_rss),
            ("bare Scrapy spider", bare_pages, bare_time, bare_rss),
        ):
            print(
                f"{name:22} {count} pages in {seconds:.1f} s = {count / seconds:.1f} pages/s"
                f" ({count / seconds / bare_rate:.2f}x bare Scrapy), peak RSS {rss:.0f} MB"
            )
        print("targets: >= 1.5x bare Scrapy (>= 0.75x with media), peak RSS <= 150 MB")
    finally:
        server.terminate()
        server.wait(timeout=10)


def validate_bench(count: int) -> None:
    """Write *count* URLs as a sitemap set, then time ``validate`` on the folder."""
    folder = WORK / "validate"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    from crawler.sitemaps.publish import SitemapPublisher
    from crawler.sitemaps.writer import ShardedUrlsetWriter, UrlEntry

    publisher = SitemapPublisher(folder, "https://www.example.com/")
    staging = publisher.stage()
    with ShardedUrlsetWriter(staging, gzip_level=1) as writer:
        for i in range(count):
            writer.add(UrlEntry(f"https://www.example.com/products/c-{i % 311}/item-{i}.html", "2026-11-30T10:00:00Z"))
        shards = writer.close()
    publisher.publish(staging, shards, "2026-11-30T10:00:00Z")
    seconds, rss, _ = run_measured([str(BIN / "sitemap-crawler"), "validate", str(folder)])
    print(f"validate {count:,} URLs in {len(shards)} gzip files: {count / seconds:,.0f} URLs/s, peak RSS {rss:.0f} MB")


def writer_bench(count: int) -> None:
    for level in (0, 6):
        for n in (count // 4, count):
            _, _, output = run_measured([sys.executable, str(HERE / "writer_bench.py"), str(n), str(level)])
            figures = json.loads(output)
            label = f"gzip {level}" if level else "plain"
            print(
                f"writer {label:7} {n:>9,} URLs: {n / figures['seconds']:>9,.0f} URLs/s, "
                f"{figures['files']} files, {figures['bytes'] / 1e6:.1f} MB, peak RSS {figures['rss_mb']:.0f} MB"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--only", choices=("crawl", "writer", "validate"))
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    if args.only in (None, "crawl"):
        crawl_bench(args.pages, args.concurrency)
    if args.only in (None, "writer"):
        writer_bench(args.urls)
    if args.only in (None, "validate"):
        validate_bench(args.urls)


if __name__ == "__main__":
    main()
