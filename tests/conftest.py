"""Shared fixtures: the local test server, a crawl runner, sitemap checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crawler.distributed.server import PrivateRedis
from crawler.validate.document import check_document
from crawler.validate.sets import check_set
from tests.chromium import chromium
from tests.lanes import mark_lanes
from tests.server import SITE_ROOT, SiteServer

# Tests never touch the network: no proxy may redirect loopback traffic.
for _name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
    os.environ.pop(_name, None)

CLI = Path(sys.executable).with_name("sitemap-crawler")
#: The shared crawls of the tests sign their configuration with this (a test of the secret sets its own).
TEST_SECRET = "test-secret-of-the-suite-0123456789"
os.environ["SITEMAP_CRAWLER_SHARED_SECRET"] = TEST_SECRET


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[PrivateRedis]:
    """A private redis-server on a free 127.0.0.1 port (skipped without one, except under CI)."""
    if shutil.which("redis-server") is None and not os.environ.get("CI"):
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = PrivateRedis(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: PrivateRedis) -> str:
    return redis_server.url


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium (tests/chromium.py), for a module that called ``need_chromium()``."""
    driver = chromium(tmp_path / "profile")
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def servers() -> Iterator[tuple[SiteServer, SiteServer]]:
    main, other = SiteServer().start(), SiteServer().start()
    main.other_port = other.port
    yield main, other
    main.stop()
    other.stop()


@pytest.fixture
def live_site(tmp_path: Path) -> Iterator[SiteServer]:
    """A copy of tests/site/live served on 127.0.0.1, free to edit (``root / "live"``)."""
    root = tmp_path / "site"
    shutil.copytree(SITE_ROOT / "live", root / "live")
    server = SiteServer(sites={"127.0.0.1": "live"}, root=root).start()
    yield server
    server.stop()


@pytest.fixture
def server(servers: tuple[SiteServer, SiteServer]) -> SiteServer:
    """The main test server, with an empty request log."""
    for each in servers:
        each.reset()
    return servers[0]


def run_cli(
    *args: str, timeout: float = 120, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script as a user would (*env* adds to the environment)."""
    return subprocess.run(
        [str(CLI), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, **env} if env else None,
    )


@dataclass
class CrawlResult:
    process: subprocess.CompletedProcess[str]
    out: Path
    report: dict[str, dict[str, object]]
    listed: list[str]

    @property
    def code(self) -> int:
        return self.process.returncode

    def reason(self, url: str) -> object:
        return self.report[url]["reason"]


def read_report(path: Path) -> dict[str, dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    lines = [line for line in lines if line["outcome"] != "warning"]  # whole-site findings
    by_url = {line["url"]: line for line in lines}
    assert len(by_url) == len(lines), "a URL appears twice in the report"
    return by_url


def sitemap_locs(out: Path, origin: str) -> list[str]:
    """Every loc of the published set, after validating every file in *out*."""
    index = out / "sitemap.xml"
    findings = check_set(index, origin)
    assert findings == [], "\n".join(map(str, findings))
    index_report = check_document(index.read_bytes(), str(index), origin)
    named = {loc.rsplit("/", 1)[1] for loc in index_report.locs}
    on_disk = {p.name for p in out.iterdir() if p.name.endswith((".xml", ".xml.gz")) and p.name != "sitemap.xml"}
    assert named == on_disk, "index and folder disagree"
    locs: list[str] = []
    for name in sorted(named, key=lambda n: int(n.split("-")[-1].split(".")[0])):
        data = (out / name).read_bytes()
        if name.endswith(".gz"):
            import gzip

            data = gzip.decompress(data)
        locs.extend(check_document(data, name, origin).locs)
    return locs


def crawl(start_url: str, out: Path, *options: str, env: dict[str, str] | None = None) -> CrawlResult:
    process = run_cli(
        "crawl", start_url, "--out", str(out), "--delay", "0", "--concurrency", "8", "-q", *options, env=env
    )
    report_path = out.parent / f"{out.name}.crawl-report.jsonl"
    report = read_report(report_path) if report_path.exists() else {}
    origin = start_url.split("/", 3)
    listed = sitemap_locs(out, "/".join(origin[:3])) if (out / "sitemap.xml").exists() else []
    return CrawlResult(process, out, report, listed)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test in a lane, fast or slow (tests/lanes.py): ``make test-fast`` runs the fast one."""
    mark_lanes(items)
