"""The frontier and the duplicate table wait on disk (SPEC S13; issue 38): a real crawl keeps
its queued requests and the pages it kept in its own scratch folder beside the output folder
while it runs, removes it when it ends, gives the set the in-memory frontier gives, and a
folder left by a killed run is removed by the next one."""

from __future__ import annotations

import os
import pickle
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from scrapy import Request, Spider
from scrapy.utils.request import request_from_dict

from crawler.spiders.page_request import PageRequest
from crawler.validate.sets import check_set
from tests.conftest import CLI, crawl, sitemap_locs
from tests.server import SiteServer
from tests.shared_crawl import fan_site

PAGES = 120


def queued_bytes(out: Path) -> tuple[list[Path], int]:
    """The scratch folders beside *out*, and the bytes of the queue files in them."""
    folders = sorted(out.parent.glob(f"{out.name}.scratch-*"))
    queues = [path for folder in folders for path in (folder / "requests.queue").rglob("*") if path.is_file()]
    return folders, sum(path.stat().st_size for path in queues)


def test_requests_wait_on_disk_and_the_folder_goes_with_the_run(tmp_path: Path) -> None:
    site = fan_site(tmp_path, PAGES, "User-agent: *\nAllow: /\n")
    out = tmp_path / "out"
    try:
        running = subprocess.Popen(
            [str(CLI), "crawl", site.url(), "--out", str(out), "--delay", "0.05", "--concurrency", "1", "-q",
             "--no-state"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        site.wait_for(10)  # the home page answered: its 119 links are queued
        folders, size = queued_bytes(out)
        entries = sorted(path.name for folder in folders for path in folder.iterdir())
        _, stderr = running.communicate(timeout=120)
        in_memory = crawl(site.url(), tmp_path / "memory", "--no-state", "--set", "SITEMAP_DISK_FRONTIER=false")
    finally:
        site.stop()
    assert running.returncode == 0, stderr
    assert [folder.name for folder in folders] == [f"out.scratch-{running.pid}"]
    assert entries == ["duplicates.sqlite3", "lock", "requests.queue"]
    assert size > 50 * 100, size  # the waiting requests, pickled (about 300 bytes each)
    assert queued_bytes(out) == ([], 0)  # removed at the end
    assert check_set(out / "sitemap.xml", site.url().rstrip("/")) == []
    assert len(in_memory.listed) == PAGES
    assert sorted(sitemap_locs(out, site.url().rstrip("/"))) == sorted(in_memory.listed)
    assert queued_bytes(tmp_path / "memory") == ([], 0)


def test_the_folder_of_a_killed_run_is_removed_by_the_next_one(tmp_path: Path) -> None:
    """SIGKILL leaves the queue behind; the next run beside the same output folder removes it
    (its process is gone), and leaves alone one whose process still runs."""
    site = fan_site(tmp_path, PAGES, "User-agent: *\nAllow: /\n")
    out = tmp_path / "out"
    alive = out.parent / f"out.scratch-{os.getpid()}"
    alive.mkdir()
    try:
        killed = subprocess.Popen(
            [str(CLI), "crawl", site.url(), "--out", str(out), "--delay", "0.2", "--concurrency", "1", "-q",
             "--no-state"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        site.wait_for(3)
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        left, size = queued_bytes(out)
        again = crawl(site.url(), out, "--no-state")
    finally:
        site.stop()
    assert [folder.name for folder in left] == sorted([f"out.scratch-{killed.pid}", alive.name]) and size > 0
    assert again.process.returncode == 0, again.process.stderr
    assert len(again.listed) == PAGES
    assert queued_bytes(out)[0] == [alive]  # the killed run's went; another process's, still running, stays


class _Spider(Spider):
    name = "pages"

    def parse(self, response: object) -> None:
        """A callback."""

    def failed(self, failure: object) -> None:
        """An errback."""


def test_a_page_request_is_stored_as_scrapy_stores_it_and_read_back_the_same() -> None:
    spider = _Spider()
    request = PageRequest("http://e.com/a?b=1", callback=spider.parse, errback=spider.failed,
                          meta={"depth": 2, "page": True}, priority=-2)  # fmt: skip
    stored = request.to_dict(spider=spider)
    assert stored == {**Request.to_dict(request, spider=spider), "_class": "crawler.spiders.page_request.PageRequest"}
    assert stored["callback"] == "parse" and stored["errback"] == "failed"
    again = request_from_dict(pickle.loads(pickle.dumps(stored)), spider=spider)
    assert type(again) is PageRequest and again.callback == spider.parse and again.errback == spider.failed
    assert (again.url, again.meta, again.priority) == (request.url, request.meta, request.priority)
    # A callback that is not this spider's method takes Scrapy's own way: its answer, or its error.
    assert PageRequest("http://e.com/", callback=_Spider().parse).to_dict(spider=spider)["callback"] == "parse"
    with pytest.raises(ValueError, match="not an instance method"):
        PageRequest("http://e.com/", callback=lambda response: None).to_dict(spider=spider)


def test_the_page_budget_goes_breadth_first(tmp_path: Path) -> None:
    """Under --max-pages, every page one click from home is listed before any two clicks away:
    the home page's links are all decided before the first of them is fetched and parsed."""
    sections, leaves = 60, 30
    site = tmp_path / "site" / "tree"
    site.mkdir(parents=True)
    (site / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    home = "".join(f'<a href="/s{i}/">section {i}</a>' for i in range(sections))
    (site / "index.html").write_text(f"<html><head><title>Home</title></head><body>{home}</body></html>")
    for i in range(sections):
        (site / f"s{i}").mkdir()
        links = "".join(f'<a href="/s{i}/p{j}.html">page {j}</a>' for j in range(leaves))
        (site / f"s{i}" / "index.html").write_text(f"<html><head><title>S{i}</title></head><body>{links}</body></html>")
        for j in range(leaves):
            (site / f"s{i}" / f"p{j}.html").write_text(
                f"<html><head><title>{i}.{j}</title></head><body>x</body></html>"
            )
    server = SiteServer(sites={"127.0.0.1": "tree"}, root=tmp_path / "site").start()
    try:
        budget = 1 + sections + 20
        result = crawl(server.url(), tmp_path / "out", "--no-state", "--max-pages", str(budget), "--concurrency", "16")
    finally:
        server.stop()
    assert result.code == 0, result.process.stderr
    origin = server.url().rstrip("/")
    listed = {url.removeprefix(origin) for url in result.listed}
    assert len(listed) == budget
    assert {f"/s{i}/" for i in range(sections)} <= listed  # every section, whatever answered first


def test_a_folder_named_like_a_scratch_folder_but_no_process_id_is_left_alone(tmp_path: Path) -> None:
    from crawler.scratch import done_with, scratch_entry

    out = tmp_path / "out"
    odd = [tmp_path / "out.scratch-99999999999999999999", tmp_path / "out.scratch-\u00b2"]
    for folder in odd:
        folder.mkdir()
    entry = scratch_entry(out, "table")  # no OverflowError, no ValueError
    assert entry.parent.name == f"out.scratch-{os.getpid()}" and all(folder.is_dir() for folder in odd)
    done_with(entry)
    assert not entry.parent.exists()


def test_the_scratch_folder_is_this_users_alone_and_never_a_planted_link(tmp_path: Path) -> None:
    from crawler.scratch import done_with, scratch_entry

    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = tmp_path / f"out.scratch-{os.getpid()}"
    planted.symlink_to(elsewhere)
    entry = scratch_entry(out, "requests.queue")
    entry.mkdir()
    assert not planted.is_symlink() and entry.parent == planted and list(elsewhere.iterdir()) == []
    assert stat.S_IMODE(planted.stat().st_mode) == 0o700  # queues are pickles: nobody else writes
    done_with(entry)
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)  # one left with a loose mode is tightened
    table = scratch_entry(out, "table")
    assert stat.S_IMODE(planted.stat().st_mode) == 0o700
    done_with(table)


def test_a_scratch_folder_whose_lock_is_held_is_in_use_whatever_its_process_id(tmp_path: Path) -> None:
    """Containers sharing a volume do not see each other's processes: the lock decides."""
    from crawler.scratch import done_with, scratch_entry

    out = tmp_path / "out"
    held, left = tmp_path / "out.scratch-999999999", tmp_path / "out.scratch-999999998"  # no such process here
    for folder in (held, left):
        folder.mkdir()
        (folder / "lock").touch()
        (folder / "requests.queue").mkdir()
    holder = subprocess.Popen(
        ["flock", str(held / "lock"), "-c", "echo locked; read line"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        entry = scratch_entry(out, "table")
        assert (held / "requests.queue").is_dir()  # another run's, in use: kept
        assert not left.exists()  # a killed run's: removed
        assert (entry.parent / "lock").is_file()
        done_with(entry)
        assert not entry.parent.exists()
    finally:
        holder.communicate("\n", timeout=10)
    done_with(scratch_entry(out, "table"))  # its holder gone, the folder is a leftover
    assert not held.exists()
