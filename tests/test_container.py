"""The container image, built and run for real with podman (SPEC S8).

The image is built once per test run from the Dockerfile (tests/containers.py),
then run against the local test site on the host network: a crawl into a
bind-mounted /data as the non-root user, a bad option, SIGTERM during a
crawl, ``serve`` answering and stopping. Without a usable podman the tests
say why and skip; under CI=true they fail. A crawl shared across containers
is in tests/test_container_shared.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.validate.sets import check_set
from tests.containers import IMAGE, ROOT, built, sh
from tests.server import SiteServer


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "deploy/redis.Dockerfile"])
def test_the_dockerfiles_are_hadolint_clean(dockerfile: str) -> None:
    hadolint = Path(sys.executable).with_name("hadolint")
    result = sh([str(hadolint), "--no-color", str(ROOT / dockerfile)])
    assert result.returncode == 0, result.stdout + result.stderr
    text = (ROOT / dockerfile).read_text()
    ignored = [line for line in text.splitlines() if "hadolint ignore=" in line]
    for line in ignored:  # every ignored rule is explained in the comment above it
        rule = line.split("=", 1)[1].strip()
        assert text.count(rule) >= 2, f"{rule} is ignored without a word on why"


@pytest.fixture(scope="module")
def image() -> str:
    return built(IMAGE, "Dockerfile")


def podman_run(image: str, data: Path, *args: str, detach: bool = False, name: str | None = None) -> list[str]:
    command = ["podman", "run", "--network", "host", "-v", f"{data}:/data:U"]
    command += ["-d", "--name", name or "sc"] if detach else ["--rm"]
    return [*command, image, *args]


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    folder.mkdir()
    yield folder
    subprocess.run(["podman", "unshare", "rm", "-rf", str(folder)], capture_output=True, check=False, timeout=60)


def test_a_crawl_in_the_container_writes_a_valid_set_as_non_root(image: str, server: SiteServer, data: Path) -> None:
    result = sh(podman_run(image, data, "crawl", server.url(), "--delay", "0"), timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"Sitemap: {server.url()}sitemap.xml"]
    assert '"event": "summary"' in result.stderr.splitlines()[-1]  # the container profile logs JSON
    index = data / "sitemaps" / "sitemap.xml"
    assert check_set(index, server.url().rstrip("/")) == []
    assert index.stat().st_uid != 0  # written by the image's own user, not root
    whoami = sh(["podman", "run", "--rm", "--entrypoint", "id", image, "-u"])
    assert whoami.stdout.strip() == "10001"


def test_a_bad_option_exits_2(image: str, data: Path) -> None:
    result = sh(podman_run(image, data, "crawl", "https://e.com/", "--max-pages", "lots"))
    assert result.returncode == 2
    assert "--max-pages: invalid int value: 'lots'" in result.stderr


def test_sigterm_in_the_container_keeps_the_previous_set(image: str, live_site: SiteServer, data: Path) -> None:
    first = sh(podman_run(image, data, "crawl", live_site.url(), "--delay", "0"), timeout=300)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in (data / "sitemaps").iterdir()}
    live_site.reset()
    name = f"sc-term-{os.getpid()}"
    subprocess.run(podman_run(image, data, "crawl", live_site.url(), "--delay", "1", detach=True, name=name),
                   capture_output=True, check=True, timeout=120)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(live_site.paths()) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        subprocess.run(["podman", "kill", "--signal", "TERM", name], capture_output=True, check=True, timeout=60)
        waited = subprocess.run(["podman", "wait", name], capture_output=True, text=True, check=True, timeout=120)
        logs = subprocess.run(["podman", "logs", name], capture_output=True, text=True, timeout=60, check=False).stderr
    finally:
        subprocess.run(["podman", "rm", "-f", name], capture_output=True, timeout=60, check=False)
    assert waited.stdout.strip() == "143", logs
    assert {p.name: p.read_bytes() for p in (data / "sitemaps").iterdir()} == before


def test_serve_in_the_container_answers_and_stops_on_sigterm(image: str, server: SiteServer, data: Path) -> None:
    name = f"sc-serve-{os.getpid()}"
    port = 18000 + os.getpid() % 1000
    args = ("serve", server.url(), "--listen", f"127.0.0.1:{port}", "--token", "s3cret-token", "--out", "/data/out")
    subprocess.run(podman_run(image, data, *args, detach=True, name=name), capture_output=True, check=True, timeout=120)
    try:
        status = 0
        deadline = time.monotonic() + 30
        while status == 0 and time.monotonic() < deadline:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/update", data=b"{}", method="POST")
                urllib.request.urlopen(request, timeout=2)
            except urllib.error.HTTPError as error:
                status = error.code
            except OSError:
                time.sleep(0.2)
        assert status == 401, status  # listening; an update without the token is refused
        started = time.monotonic()
        subprocess.run(["podman", "stop", "--time", "10", name], capture_output=True, check=True, timeout=60)
        stopped_in = time.monotonic() - started
        code = subprocess.run(["podman", "inspect", "--format", "{{.State.ExitCode}}", name], capture_output=True,
                              text=True, timeout=60, check=False).stdout.strip()  # fmt: skip
    finally:
        subprocess.run(["podman", "rm", "-f", name], capture_output=True, timeout=60, check=False)
    assert code == "0"
    assert stopped_in < 5, f"serve took {stopped_in:.1f} s to stop on SIGTERM"
