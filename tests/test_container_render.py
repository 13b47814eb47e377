"""The image that can ``--render`` (``--build-arg RENDER=1``), built and run with podman (SPEC S8, S9).

The render variant crawls the single-page shop of tests/spa_server.py from a
container on the host network, as the image's non-root user, with Debian's
chromium-headless-shell inside: every page the app links is listed, and the
shop's and the CDN's own request logs show no request a rule forbids. The
plain image has no browser: ``--render`` there is a usage error that says
what to do, and the image is smaller by the browser's size.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.validate.sets import check_set
from settings import USER_AGENT
from tests.conftest import sitemap_locs
from tests.containers import IMAGE, RENDER_IMAGE, built, sh
from tests.spa_server import SHOP, SHOP_LISTED, SpaServer

#: What the shop's rules keep from every client (robots.txt, a fetch the page never makes, off-site).
NEVER_ASKED = {"/careers", "/api/private.json", "/members", "/partner-site"}
MB = 1024 * 1024
pytestmark = pytest.mark.timeout(900)  # the images' first build included


@pytest.fixture(scope="module")
def render_image() -> str:
    return built(RENDER_IMAGE, "Dockerfile", "RENDER=1")


@pytest.fixture(scope="module")
def plain_image() -> str:
    return built(IMAGE, "Dockerfile")


@pytest.fixture(scope="module")
def cdn() -> Iterator[SpaServer]:
    server = SpaServer("cdn").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shop(cdn: SpaServer) -> Iterator[SpaServer]:
    server = SpaServer("shop", SHOP, cdn.port).start()
    yield server
    server.stop()


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "data"
    folder.mkdir()
    yield folder
    subprocess.run(["podman", "unshare", "rm", "-rf", str(folder)], capture_output=True, check=False, timeout=60)


def podman_crawl(image: str, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return sh(["podman", "run", "--rm", "--network", "host", "-v", f"{data}:/data:U", image, "crawl", *args], 300)


def test_the_render_image_lists_every_page_of_a_single_page_app(
    render_image: str, shop: SpaServer, cdn: SpaServer, data: Path
) -> None:
    shop.reset()
    cdn.reset()
    result = podman_crawl(render_image, data, shop.url(), "--render", "auto", "--delay", "0", "--max-pages", "60")
    assert result.returncode == 0, result.stderr
    index = data / "sitemaps" / "sitemap.xml"
    origin = shop.url("")
    assert check_set(index, origin) == []
    listed = {url.removeprefix(origin) for url in sitemap_locs(data / "sitemaps", origin)}
    assert listed >= SHOP_LISTED, SHOP_LISTED - listed
    summary = json.loads(result.stderr.splitlines()[-1])  # the container profile logs JSON
    assert summary["event"] == "summary", summary
    hits = shop.log()
    assert hits and {hit.user_agent for hit in hits} == {USER_AGENT}
    assert not NEVER_ASKED & {hit.path for hit in hits}
    assert any(hit.path.startswith("/api/") for hit in hits)  # the browser's fetches, made by Scrapy
    assert cdn.log() == []  # its origin was not allowed
    assert index.stat().st_uid != 0


def test_the_plain_image_has_no_browser_and_says_which_image_renders(plain_image: str, data: Path) -> None:
    result = podman_crawl(plain_image, data, "http://127.0.0.1:9/", "--render", "auto")
    assert result.returncode == 2, result.stderr
    assert "chromium-headless-shell" in result.stderr and "--build-arg RENDER=1" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (data / "sitemaps").exists()


def test_the_browser_costs_only_the_render_image(plain_image: str, render_image: str) -> None:
    sizes = {}
    for image in (plain_image, render_image):
        inspected = sh(["podman", "image", "inspect", "--format", "{{.Size}}", image])
        assert inspected.returncode == 0, inspected.stderr
        sizes[image] = int(inspected.stdout.strip()) / MB
    assert sizes[render_image] - sizes[plain_image] > 100, sizes  # Chromium is in the one
    probe = sh(["podman", "run", "--rm", "--entrypoint", "sh", plain_image, "-c",
                "command -v chromium-headless-shell || python3 -c 'import playwright'"])  # fmt: skip
    assert probe.returncode != 0, probe.stdout  # and in no way in the other
