"""``crawl --check-published``: the public copy checked as a search engine fetches it (SPEC S10).

The site's own folder is its web root. Published into it, the set is served
at once, and the check passes; published elsewhere (a deploy step that did
not run), the public index is missing; an old copy left in the web root is
stale. The server's request log shows the check asking, with the crawler's
User-Agent, and asking again while the copy is wrong.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from settings import USER_AGENT
from tests.conftest import CLI, crawl, run_cli
from tests.server import SiteServer

EXIT_PUBLIC_COPY_WRONG = 6
PAGES = 5


class Site:
    def __init__(self, root: Path) -> None:
        self.folder = root / "site" / "web"
        self.folder.mkdir(parents=True)
        self.server = SiteServer(sites={"127.0.0.1": "web"}, root=root / "site")

    def start(self) -> Site:
        self.server.start()
        index = self.server.url("/sitemap.xml")
        (self.folder / "robots.txt").write_text(f"User-agent: *\nAllow: /\n\nSitemap: {index}\n")
        self.write(PAGES)
        return self

    def write(self, pages: int) -> None:
        links = "".join(f'<a href="/p{n}.html">page {n}</a>' for n in range(pages))
        (self.folder / "index.html").write_text(f"<html><head><title>Home</title></head><body>{links}</body></html>")
        for n in range(pages):
            page = f"<html><head><title>Page {n}</title></head><body>{n}</body></html>"
            (self.folder / f"p{n}.html").write_text(page)

    def asked(self, path: str) -> int:
        return self.server.paths().count(path)

    def asked_locked(self, path: str) -> int:
        """:meth:`asked`, for a caller that holds the server's lock (waiting on its condition)."""
        return sum(hit.path == path for hit in self.server.hits)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    site = Site(tmp_path).start()
    yield site
    site.server.stop()


def test_a_set_published_into_the_web_root_passes_its_check(site: Site) -> None:
    result = crawl(site.server.url(), site.folder, "--check-published")
    stderr = result.process.stderr
    assert result.code == 0, stderr
    assert len(result.listed) == PAGES + 1
    assert "Public copy: http://127.0.0.1:" in stderr and "/sitemap.xml: valid (" in stderr, stderr
    # The check read the index and its shard over HTTP, with the crawler's User-Agent.
    checked = [hit for hit in site.server.hits if hit.path in ("/sitemap.xml", "/sitemap-1.xml")]
    assert {hit.path for hit in checked} == {"/sitemap.xml", "/sitemap-1.xml"}
    assert {hit.user_agent for hit in checked} == {USER_AGENT}


def test_a_public_copy_that_is_not_there_is_tried_again_then_fails_the_run(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "out"  # published, but not deployed to the web root
    (site.folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")  # the crawl reads no sitemap then
    result = crawl(site.server.url(), out, "--check-published", "--check-wait", "2", "--log-format", "json")
    assert result.code == EXIT_PUBLIC_COPY_WRONG, result.process.stderr
    assert (out / "sitemap.xml").is_file()  # the set is published: only its public copy is wrong
    summary = json.loads(result.process.stderr.splitlines()[-1])
    assert summary["exit"] == EXIT_PUBLIC_COPY_WRONG and summary["check"]["ok"] is False
    assert summary["check"]["errors"] >= 1 and "404" in json.dumps(summary["check"]["findings"])
    assert site.asked("/sitemap.xml") >= 2  # by the check only, and tried again within --check-wait


def test_a_public_copy_deployed_while_the_check_waits_passes_on_a_later_try(site: Site, tmp_path: Path) -> None:
    """The first check finds no copy (404); the copy is deployed as that answer goes out; the
    check tried again within --check-wait passes, and so does the run."""
    out = tmp_path / "out"
    (site.folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    deployed = threading.Event()

    def deploy() -> None:
        published_at: list[int] = []  # the server's log as the set was published

        def checked() -> bool:  # the check's first /sitemap.xml, answered 404
            if not (out / "sitemap.xml").is_file():
                return False
            published_at[:] = published_at or [len(site.server.hits)]
            later = site.server.hits[published_at[0] :]
            return any(hit.path == "/sitemap.xml" and hit.status == 404 for hit in later)

        with site.server.arrived:
            if site.server.arrived.wait_for(checked, timeout=120):
                for shard in out.iterdir():
                    if shard.is_file() and shard.name.startswith("sitemap"):
                        shutil.copy(shard, site.folder / shard.name)
                deployed.set()

    deployer = threading.Thread(target=deploy, daemon=True)
    deployer.start()
    result = crawl(site.server.url(), out, "--check-published", "--check-wait", "30")
    deployer.join(timeout=10)
    assert deployed.is_set()
    assert result.code == 0, result.process.stderr
    assert "/sitemap.xml: valid" in result.process.stderr, result.process.stderr


def test_a_sigterm_during_the_check_stops_it_at_once(site: Site, tmp_path: Path) -> None:
    """Waiting for a public copy that never comes (--check-wait 60), the run stops on SIGTERM."""
    (site.folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    out = tmp_path / "out"
    command = [str(CLI), "crawl", site.server.url(), "--out", str(out), "-q", "--delay", "0", "--check-published",
               "--check-wait", "60"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with site.server.arrived:  # the check has asked for the public index (the crawl's seed first): an event
            assert site.server.arrived.wait_for(lambda: site.asked_locked("/sitemap.xml") >= 2, 60)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)  # well within the 60 s it would otherwise wait
    finally:
        process.kill()
    assert process.returncode == 143, stderr
    assert (out / "sitemap.xml").is_file()  # published; only the check was cut short
    assert "Traceback" not in stderr


def test_an_old_copy_left_in_the_web_root_is_stale(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = crawl(site.server.url(), out)
    assert first.code == 0
    for name in ("sitemap.xml", "sitemap-1.xml"):  # yesterday's deploy
        shutil.copy(out / name, site.folder / name)
    site.write(PAGES + 2)  # today the site has two more pages
    second = crawl(site.server.url(), out, "--check-published", "--check-wait", "0")
    stderr = second.process.stderr
    assert second.code == EXIT_PUBLIC_COPY_WRONG, stderr
    assert "stale" in stderr, stderr
    assert "published, but the public copy is wrong" in stderr


def test_an_audit_refuses_to_check_a_set_it_does_not_publish(tmp_path: Path) -> None:
    result = run_cli("audit", "http://127.0.0.1:9/", "--production-url", "https://e.com", "--check-published",
                     "--out", str(tmp_path / "audit"))  # fmt: skip
    assert result.returncode == 2 and "sitemap-crawler check URL" in result.stderr, result.stderr


def test_check_wait_without_check_published_is_a_usage_error(tmp_path: Path) -> None:
    process = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "out"), "--check-wait", "5")
    assert process.returncode == 2
    assert process.stderr.strip().splitlines() == [
        "sitemap-crawler: error: --check-wait is how long --check-published tries again: give --check-published too"
    ]


def test_a_check_whose_child_process_fails_is_a_finding_not_a_traceback() -> None:
    """A check run in a child process (the crawl's reactor cannot start another) that dies: the
    public copy is not known to be right, said as a finding with the child's last line."""
    from crawler.spiders.check import _in_child

    options = {"user_agent": USER_AGENT, "sample": 1, "expect": None, "extra_urls": 5,  # not a list: it fails
               "timeout": 5.0, "deadline": 5.0, "robots_agent": "googlebot", "max_crawl_delay": 1.0}  # fmt: skip
    result = _in_child("http://127.0.0.1:9/sitemap.xml", options)
    assert not result.ok
    (finding,) = result.findings
    assert finding.rule == "deadline" and "the check did not finish: its process failed" in finding.message
