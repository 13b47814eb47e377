"""Benchmark (not a test): the crawl on two real documentation sites, Debian's
``postgresql-doc-15`` (about 1,170 small pages) and ``python3-doc`` (about
530 large pages with up to 17,000 links), served by nginx on 127.0.0.1.

For each it prints, in one run: ours with politeness off (concurrency 64,
every rule and the state store on), ours with ``--workers 2``, ours at the
defaults, ``wget --spider -r``, a bare Scrapy spider and the simplest Python
crawler (bench/simple_crawler.py: regex links, one thread, no rules): pages/s,
CPU ms per page, peak RSS and pages found, and our CPU a page over the simple
crawler's. Then the start-up of a one-page crawl and
of ``--help``. Installs the two packages with apt when run as root.

    python bench/real_sites.py [--concurrency 64] [--skip-defaults]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.measure import Measured, cpu_seconds, measure  # noqa: E402
from bench.run import BIN, WORK, crawl_command, start_nginx  # noqa: E402

PACKAGES = ("postgresql-doc-15", "python3-doc")
#: A crawl at the defaults that takes longer than this is stopped and reported as such.
DEFAULTS_TIMEOUT = 600.0


def sites() -> dict[str, Path]:
    """The two documentation trees, installed with apt first when missing (as root)."""
    found = {"PostgreSQL manual": Path("/usr/share/doc/postgresql-doc-15/html")}
    python = _python_docs()
    if not found["PostgreSQL manual"].is_dir() or not python:
        if os.geteuid() != 0:
            raise SystemExit(f"install the documentation first: apt-get install {' '.join(PACKAGES)}")
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", *PACKAGES], check=True, env=environment)
        python = _python_docs()
    found["Python docs"] = python[-1].parent
    return found


def _python_docs() -> list[Path]:
    """``/usr/share/doc/python3.X/html/index.html`` (not the -venv or -dev folders)."""
    found = Path("/usr/share/doc").glob("python3.*/html/index.html")
    return sorted(path for path in found if re.fullmatch(r"python3\.\d+", path.parent.parent.name))


def fresh(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    for leftover in out.parent.glob(f"{out.name}.*"):  # the state store and report of a previous run
        leftover.unlink()


def page_url(url: str) -> str:
    """One name for a folder's page: ``/a/index.html`` and ``/a/`` are one page to both crawlers."""
    return url[: -len("index.html")] if url.endswith("/index.html") else url


def ours(url: str, out: Path, command: list[str], timeout: float = 1800) -> tuple[Measured, set[str]]:
    """Run our crawl; what it measured and the URLs it fetched (from its report)."""
    fresh(out)
    run = measure(command, timeout=timeout)
    report = out.parent / f"{out.name}.crawl-report.jsonl"
    fetched = set()
    if report.exists():
        for line in report.open():
            entry = json.loads(line)
            if entry.get("status") == 200 and entry["url"].startswith(url) and entry["reason"] != "content-type":
                fetched.add(page_url(entry["url"]))
    return run, fetched


def wget(url: str) -> tuple[Measured, set[str]]:
    folder = WORK / "wget"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    run = measure(["wget", "--spider", "-r", "-l", "inf", "-nv", "-e", "robots=off", "-o", "log", url], cwd=folder)
    # An HTML page is downloaded to be read: "URL:<url> [n/n] -> file"; other files only get a HEAD.
    pages = set(re.findall(r"URL:(\S+) \[\d+/\d+\] ->", (folder / "log").read_text(errors="replace")))
    return run, {page_url(page) for page in pages}


def bare(url: str, concurrency: int) -> tuple[Measured, int]:
    run = measure([sys.executable, str(HERE / "bare_spider.py"), url, str(concurrency)])
    return run, int(run.stdout.strip().splitlines()[-1])


def simple(url: str) -> tuple[Measured, int]:
    run = measure([sys.executable, str(HERE / "simple_crawler.py"), url])
    return run, int(run.stdout.strip().splitlines()[-1])


def line(name: str, run: Measured, pages: int, nginx: float, extra: str = "") -> None:
    rate = pages / run.seconds if run.seconds else 0.0
    cpu = run.cpu / pages * 1000 if pages else 0.0
    print(
        f"  {name:28} {pages:5} pages {run.seconds:6.1f} s {rate:7.1f} pages/s {cpu:6.2f} ms CPU/page"
        f"  RSS {run.rss_mb:4.0f} MB  nginx {nginx:4.1f} s CPU{extra}"
    )


def compare(name: str, root: Path, concurrency: int, skip_defaults: bool) -> None:
    server, port = start_nginx(root)
    url = f"http://127.0.0.1:{port}/"
    print(f"\n{name}: {url} ({root})")
    try:
        out = WORK / "real-out"
        before = cpu_seconds(server.pid)
        run, found = ours(url, out, crawl_command(url, out, concurrency))
        line("ours, politeness off", run, len(found), cpu_seconds(server.pid) - before)
        before = cpu_seconds(server.pid)
        shared, shared_found = ours(url, out, [*crawl_command(url, out, concurrency), "--workers", "2"])
        line("ours, --workers 2", shared, len(shared_found), cpu_seconds(server.pid) - before,
             "" if shared_found == found else f"  DIFFERENT: {len(shared_found ^ found)} URLs")  # fmt: skip
        if not skip_defaults:
            before = cpu_seconds(server.pid)
            command = [str(BIN / "sitemap-crawler"), "crawl", url, "--out", str(out), "-q"]
            default, default_found = ours(url, out, command, timeout=DEFAULTS_TIMEOUT)
            note = "" if default.code == 0 else f"  STOPPED after {DEFAULTS_TIMEOUT:.0f} s"
            line("ours, defaults", default, len(default_found), cpu_seconds(server.pid) - before, note)
        before = cpu_seconds(server.pid)
        fetched, wget_found = wget(url)
        differ = wget_found ^ found
        line("wget --spider -r", fetched, len(wget_found), cpu_seconds(server.pid) - before,
             "" if not differ else f"  {len(differ)} URLs differ from ours, e.g. {sorted(differ)[:2]}")  # fmt: skip
        before = cpu_seconds(server.pid)
        baseline, count = bare(url, concurrency)
        line("bare Scrapy + LinkExtractor", baseline, count, cpu_seconds(server.pid) - before)
        before = cpu_seconds(server.pid)
        floor, pages = simple(url)
        ratio = (run.cpu / len(found)) / (floor.cpu / pages) if found and pages and floor.cpu else 0.0
        line("simple crawler (regex, 1 thread)", floor, pages, cpu_seconds(server.pid) - before,
             f"  ours / simple: {ratio:.1f}x CPU a page")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)


def startup() -> None:
    """A one-page crawl (start-up and end; at the defaults the adaptive delay starts at 0.25 s
    between the requests for robots.txt, the page and /sitemap.xml) and --help, median of five runs."""
    page = WORK / "one-page"
    page.mkdir(parents=True, exist_ok=True)
    (page / "index.html").write_text("<html><head><title>One</title></head><body>one page</body></html>")
    server, port = start_nginx(page)
    try:
        out = WORK / "one-out"
        crawl = [str(BIN / "sitemap-crawler"), "crawl", f"http://127.0.0.1:{port}/", "--out", str(out), "-q"]
        commands = (
            ("crawl of one page, --delay 0", [*crawl, "--delay", "0"]),
            ("the same at the defaults", crawl),
            ("--help", [str(BIN / "sitemap-crawler"), "--help"]),
        )
        timings = {}
        for name, command in commands:
            runs = []
            for _ in range(5):
                fresh(out)
                runs.append(measure(command).seconds)
            timings[name] = statistics.median(runs)
        print("\nstart-up: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in timings.items()))
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--skip-defaults", action="store_true", help="leave out the crawl at the defaults")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    for name, root in sites().items():
        compare(name, root, args.concurrency, args.skip_defaults)
    startup()
    print(
        "\ntargets: CPU per page (politeness off, state on) at most 2.0x the simple crawler's on the PostgreSQL"
        " manual and 1.5x on the Python docs; one-page crawl <= 0.4 s; defaults: the PostgreSQL manual in < 30 s"
    )


if __name__ == "__main__":
    main()
