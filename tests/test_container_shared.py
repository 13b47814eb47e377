"""A crawl shared across containers, run from deploy/compose.yaml itself (SPEC S8).

podman-compose starts the compose file's Redis, coordinator and two workers on
their own podman network (not the host's), with one addition of the test's: a
site served by ``python -m http.server`` from another container, reached by its
name ``site``. The coordinator's set must be valid and list what a one-process
crawl of the same site (in a container, on the same network) lists, and the
site's own request log must show more than one container fetching. Nothing
ever leaves the container network: the test reads the site's log, never its
address.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import sitemap_locs
from tests.containers import IMAGE, REDIS_IMAGE, ROOT, built, sh, skip_or_fail

COMPOSE = ROOT / "deploy" / "compose.yaml"
SITE = "http://site:8000"
PAGES = 20
#: The compose file's image names, given to the images this test run built.
TAGS = {IMAGE: "localhost/sitemap-crawler", REDIS_IMAGE: "localhost/sitemap-crawler-redis"}
#: A line of http.server's request log: the client's address and the path.
REQUEST = re.compile(r'^(\S+) - - \[[^]]+\] "GET (\S+) HTTP')


def make_site(folder: Path) -> Path:
    """*PAGES* pages, each linking to the next three, and a Crawl-delay that keeps the crawl going for a
    few seconds: long enough for the workers, who start with the coordinator, to take their share."""
    folder.mkdir(mode=0o755)
    (folder / "robots.txt").write_text("User-agent: *\nCrawl-delay: 0.4\n")
    for number in range(PAGES):
        links = "".join(f'<a href="/p{n}.html">page {n}</a>' for n in range(number + 1, min(PAGES, number + 4)))
        name = "index.html" if number == 0 else f"p{number}.html"
        (folder / name).write_text(f"<html><head><title>Page {number}</title></head><body>{links}</body></html>")
    for path in folder.iterdir():
        path.chmod(0o644)  # read by the image's user
    return folder


class Project:
    """The compose file and the test's addition, run under one project name; everything removed at the end."""

    def __init__(self, root: Path) -> None:
        tool = Path(sys.executable).with_name("podman-compose")
        if not tool.exists():
            skip_or_fail("podman-compose is not installed (pip install -e '.[test]')")
        self.tool = str(tool)
        self.name = f"scshared{os.getpid()}"
        self.network = f"{self.name}_default"
        self.password = secrets.token_hex(16)
        self.data = root / "shared"
        self.data.mkdir()
        addition = {
            "services": {
                "site": {
                    "image": TAGS[IMAGE],
                    "entrypoint": ["python3", "-m", "http.server", "8000", "--directory", "/site"],
                    "volumes": [f"{make_site(root / 'site')}:/site:ro"],
                },
                "crawl": {"volumes": [f"{self.data}:/data:U"]},  # the sitemaps in this test's folder
            }
        }
        self.addition = root / "site.yaml"
        self.addition.write_text(json.dumps(addition))  # JSON is YAML
        # What compose reads from the environment (the shared secret is the suite's, from conftest).
        self.env = {"SITE_URL": f"{SITE}/", "REDIS_PASSWORD": self.password}

    def compose(self, *args: str, timeout: float = 120) -> str:
        files = ["-f", str(COMPOSE), "-f", str(self.addition)]
        result = sh([self.tool, "-p", self.name, *files, *args], timeout=timeout, env=self.env)
        assert result.returncode == 0, self.masked(result.stdout + result.stderr)
        return result.stdout + result.stderr

    def container(self, service: str, number: int = 1) -> str:
        return f"{self.name}_{service}_{number}"

    def logs(self, service: str, number: int = 1) -> str:
        result = sh(["podman", "logs", self.container(service, number)], timeout=60)
        return result.stdout + result.stderr

    def address(self, service: str, number: int = 1) -> str:
        template = "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"
        return sh(["podman", "inspect", "--format", template, self.container(service, number)]).stdout.strip()

    def wait(self, service: str, number: int = 1, timeout: float = 300) -> int:
        result = sh(["podman", "wait", self.container(service, number)], timeout=timeout)
        return int(result.stdout.strip() or -1)

    def masked(self, text: str) -> str:
        return text.replace(self.password, "***")

    def remove(self) -> None:
        files = ["-f", str(COMPOSE), "-f", str(self.addition)]
        sh([self.tool, "-p", self.name, *files, "down", "-v", "-t", "5"], timeout=120, env=self.env)
        left = sh(["podman", "ps", "-a", "-q", "--filter", f"label=io.podman.compose.project={self.name}"])
        for container in left.stdout.split():
            sh(["podman", "rm", "-f", container], timeout=60)
        sh(["podman", "network", "rm", "-f", self.network], timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    for image, name in TAGS.items():
        built(image, "deploy/redis.Dockerfile" if image == REDIS_IMAGE else "Dockerfile")
        assert sh(["podman", "tag", image, name]).returncode == 0
    running = Project(tmp_path)
    try:
        yield running
    finally:
        running.remove()
        sh(["podman", "unshare", "rm", "-rf", str(tmp_path / "shared"), str(tmp_path / "single")], timeout=60)


def site_ready(project: Project) -> bool:
    probe = "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/robots.txt', timeout=2)"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # bounded: 30 s for http.server to listen
        if sh(["podman", "exec", project.container("site"), "python3", "-c", probe], timeout=30).returncode == 0:
            return True
        time.sleep(0.2)
    return False


def requests_in(log: str) -> list[tuple[str, str]]:
    """(client address, path) of every request in http.server's log but the test's own readiness probe."""
    found = [match.groups() for match in map(REQUEST.match, log.splitlines()) if match]
    return [(client, path) for client, path in found if client != "127.0.0.1"]


@pytest.mark.timeout(900)  # the images' first build included
def test_a_crawl_shared_across_containers_lists_what_one_process_lists(project: Project, tmp_path: Path) -> None:
    timings: dict[str, float] = {}
    started = time.monotonic()
    project.compose("up", "-d", "--no-build", "redis", "site")
    assert site_ready(project), project.logs("site")

    # One process in a container on the same network, the site under the same name.
    single = tmp_path / "single"
    single.mkdir()
    mark = time.monotonic()
    alone = sh(
        ["podman", "run", "--rm", "--network", project.network, "-v", f"{single}:/data:U", TAGS[IMAGE], "crawl",
         f"{SITE}/"],
        timeout=300,
    )  # fmt: skip
    timings["one process"] = time.monotonic() - mark
    assert alone.returncode == 0, alone.stderr[-3000:]
    before = len(project.logs("site").splitlines())

    # The compose file's two workers, waiting for a crawl to join (--wait), then its coordinator.
    mark = time.monotonic()
    project.compose("up", "-d", "--no-build", "worker")
    project.compose("up", "-d", "--no-build", "crawl")
    addresses = {
        name: project.address(service, number)
        for name, service, number in (("crawl", "crawl", 1), ("worker 1", "worker", 1), ("worker 2", "worker", 2))
    }
    coordinator = project.wait("crawl")
    workers = [project.wait("worker", number, timeout=120) for number in (1, 2)]
    timings["shared"] = time.monotonic() - mark
    logs = {service: project.logs(service) for service in ("crawl", "redis")}
    logs.update({f"worker {n}": project.logs("worker", n) for n in (1, 2)})
    assert coordinator == 0, project.masked(logs["crawl"][-3000:])
    assert workers == [0, 0], project.masked(
        "\n".join(f"--- {name}\n{logs[name][-1500:]}" for name in ("worker 1", "worker 2", "crawl"))
    )

    # The same set as one process: valid, every page, nothing else.
    listed = sitemap_locs(project.data / "sitemaps", SITE)
    assert sorted(listed) == sorted(sitemap_locs(single / "sitemaps", SITE))
    assert len(listed) == PAGES == len(set(listed))
    assert f"Sitemap: {SITE}/sitemap.xml" in logs["crawl"]

    # The workers crawled: the site saw more than one container, and only the crawl's own.
    requests = requests_in("\n".join(project.logs("site").splitlines()[before:]))
    clients = {client for client, _ in requests}
    assert len(clients) >= 2, f"only {clients} fetched ({addresses})"
    assert clients <= set(addresses.values()), f"{clients} are not all the crawl's containers ({addresses})"
    timings["total"] = time.monotonic() - started
    share = {name: sum(client == address for client, _ in requests) for name, address in addresses.items()}
    print(f"requests by container: {share}; seconds: { {k: round(v, 1) for k, v in timings.items()} }")

    # The password came from the environment: in no file, and masked in every log.
    assert project.password not in COMPOSE.read_text() + project.addition.read_text()
    assert all(project.password not in text for text in logs.values())
