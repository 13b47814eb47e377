"""The project deployed to a real Scrapyd on 127.0.0.1 and run there (SPEC S8).

``scrapyd-deploy`` packs the project into an egg and uploads it; the spider
is scheduled with a start URL on the local test site, and the sitemap set
it writes is validated.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.distributed.server import free_port
from crawler.validate.sets import check_set
from tests.server import SiteServer

ROOT = Path(__file__).parent.parent
BIN = Path(sys.executable).parent


def call(base: str, endpoint: str, data: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    with urllib.request.urlopen(f"{base}/{endpoint}", data=body, timeout=30) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


@pytest.fixture
def scrapyd(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    home = tmp_path / "scrapyd"
    home.mkdir()
    (home / "scrapyd.conf").write_text(
        "[scrapyd]\nbind_address = 127.0.0.1\n"
        f"http_port = {port}\neggs_dir = {home}/eggs\nlogs_dir = {home}/logs\nitems_dir =\n"
        f"dbs_dir = {home}/dbs\nmax_proc = 2\npoll_interval = 0.5\n"
    )
    process = subprocess.Popen([str(BIN / "scrapyd")], cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):  # bounded: until it answers
            try:
                if call(base, "daemonstatus.json")["status"] == "ok":
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("scrapyd did not start")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def project_copy(folder: Path, scrapyd: str) -> Path:
    """The project as it would be checked out, its deploy target pointing at *scrapyd*
    (scrapyd-deploy writes a setup.py where it runs: never into this checkout)."""
    for name in ("crawler", "pipelines", "settings"):
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, folder / name)
    config = (ROOT / "scrapy.cfg").read_text()
    assert "url = http://127.0.0.1:6800/" in config
    (folder / "scrapy.cfg").write_text(config.replace("http://127.0.0.1:6800/", scrapyd + "/"))
    return folder


def test_deploy_to_scrapyd_and_crawl_there(scrapyd: str, server: SiteServer, tmp_path: Path) -> None:
    project = project_copy(tmp_path / "project", scrapyd)
    deployed = subprocess.run(
        [str(BIN / "scrapyd-deploy"), "local", "--version", "1"],
        cwd=project, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert deployed.returncode == 0 and '"status": "ok"' in deployed.stdout, deployed.stdout + deployed.stderr
    assert call(scrapyd, "listprojects.json")["projects"] == ["sitemap-crawler"]
    out = tmp_path / "public"
    job = call(
        scrapyd,
        "schedule.json",
        [
            ("project", "sitemap-crawler"),
            ("spider", "site"),
            ("url", server.url()),
            ("setting", f"SITEMAP_OUTPUT_DIR={out}"),
            ("setting", "DOWNLOAD_DELAY=0"),
        ],
    )["jobid"]
    jobs: dict[str, Any] = {}
    for _ in range(600):  # bounded: until the job is finished
        jobs = call(scrapyd, "listjobs.json?project=sitemap-crawler")
        if any(entry["id"] == job for entry in jobs["finished"]):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the job did not finish: {jobs}")
    assert check_set(out / "sitemap.xml", server.url().rstrip("/")) == []
