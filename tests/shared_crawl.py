"""Helpers of the shared-crawl tests: worker processes, a site long enough to interrupt."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import CLI, CrawlResult
from tests.server import SiteServer

#: Shared-crawl runs compared with one process: no state store to keep between them.
FAST = ("--no-state",)


def workers(redis_url: str, count: int) -> list[subprocess.Popen[str]]:
    command = [str(CLI), "worker", redis_url, "--wait", "30"]
    return [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(count)]


def outcomes(result: CrawlResult) -> dict[str, tuple[object, object]]:
    return {url: (line["outcome"], line["reason"]) for url, line in result.report.items()}


def finish(processes: list[subprocess.Popen[str]]) -> list[int]:
    codes = []
    for process in processes:
        process.communicate(timeout=60)
        codes.append(process.returncode)
    return codes


def chain_site(root: Path, pages: int, robots: str = "User-agent: *\nAllow: /\n") -> SiteServer:
    """*pages* small pages, each linking to the next three: a crawl that takes long enough to interrupt."""
    site = root / "site" / "chain"
    site.mkdir(parents=True)
    (site / "robots.txt").write_text(robots)
    for number in range(pages):
        links = "".join(f'<a href="/p{n}.html">page {n}</a>' for n in range(number + 1, min(pages, number + 4)))
        name = "index.html" if number == 0 else f"p{number}.html"
        (site / name).write_text(f"<html><head><title>Page {number}</title></head><body>{links}</body></html>")
    return SiteServer(sites={"127.0.0.1": "chain"}, root=root / "site").start()


def fan_site(root: Path, pages: int, robots: str) -> SiteServer:
    """A home page linking to *pages* - 1 small pages: all of them queued at once, as many as the
    workers would lease."""
    site = root / "site" / "fan"
    site.mkdir(parents=True)
    (site / "robots.txt").write_text(robots)
    links = "".join(f'<a href="/p{n}.html">page {n}</a>' for n in range(1, pages))
    (site / "index.html").write_text(f"<html><head><title>Home</title></head><body>{links}</body></html>")
    for number in range(1, pages):
        (site / f"p{number}.html").write_text(
            f"<html><head><title>Page {number}</title></head><body>{number}</body></html>"
        )
    return SiteServer(sites={"127.0.0.1": "fan"}, root=root / "site").start()
