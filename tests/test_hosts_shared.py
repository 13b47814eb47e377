"""A crawl of several hosts shared through a real redis-server by the coordinator and a worker
process: the sets of one process, each host's Crawl-delay held across both processes on the
server's own clock, the hosts' budgets counted for all workers, and ``worker --resolve``.

The hosts are names on one server on 127.0.0.1, reached only through --resolve (tests/hosts_site.py).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from crawler.distributed.coordination import SUMMED
from crawler.distributed.server import PrivateRedis
from crawler.reasons import Limit
from crawler.stats import Stat, limit
from settings.environment import env_name
from tests.conftest import CLI, run_cli, sitemap_locs
from tests.hosts_site import HostsSite, Page, big, html, resolve_options
from tests.test_hosts import DE_DELAY, LISTED, WWW_DELAY, Run, _pages_after_robots, crawl_hosts, shop


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if shutil.which("redis-server") is None and not os.environ.get("CI"):
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = PrivateRedis(tmp_path_factory.mktemp("redis")).start()
    yield server.url
    server.stop()


class Shared:
    def __init__(self, run: Run, worker: subprocess.CompletedProcess[str]):
        self.run, self.worker = run, worker


@pytest.fixture(scope="module")
def shared(redis: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    """The shop of tests/test_hosts.py, crawled by the coordinator and one worker, three requests
    in flight in each."""
    site = HostsSite(shop()).start()
    try:
        pinned = resolve_options([*site.hosts], site.port)
        command = [str(CLI), "worker", redis, "--wait", "30", *pinned]
        worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        options = ("--subdomains", "--distributed", redis, "--no-state", "--set", "CONCURRENT_REQUESTS=3")
        run = crawl_hosts(site, tmp_path_factory.mktemp("shared") / "out", *options)
        out, err = worker.communicate(timeout=60)
        yield Shared(run, subprocess.CompletedProcess(command, worker.returncode, out, err))
    finally:
        site.stop()


def test_the_coordinator_and_a_worker_give_each_host_its_set(shared: Shared) -> None:
    run = shared.run
    assert run.process.returncode == 0, run.process.stderr
    assert shared.worker.returncode == 0, shared.worker.stderr
    assert "worker done: 0 responses" not in shared.worker.stderr  # it fetched its share, through --resolve
    assert sorted(p.name for p in run.out.iterdir()) == sorted(LISTED)
    for host, paths in LISTED.items():
        origin = run.url(host, "")
        assert sorted(sitemap_locs(run.out / host, origin)) == [origin + path for path in paths], host
    assert run.report[run.url("www.shop.test", "/dup")]["reason"] == "canonicalised"  # its target on blog
    assert run.site.hits_of("www.other.test") == []
    pages = [(hit.host, hit.path) for hit in run.site.hits if hit.path != "/robots.txt"]
    assert len(pages) == len(set(pages))  # no page fetched by both processes


@pytest.mark.parametrize(("host", "delay"), [("www.shop.test", WWW_DELAY), ("de.shop.test", DE_DELAY)])
def test_each_hosts_crawl_delay_holds_across_the_processes(shared: Shared, host: str, delay: float) -> None:
    """On the server's clock: no gap under half the delay (at most 5 % allowed, of so few gaps
    none), and the mean gap at least the delay, whichever process sent each request."""
    hits = _pages_after_robots(shared.run.site.hits_of(host))
    gaps = [b.time - a.time for a, b in pairwise(hits)]
    assert len(gaps) >= 3, hits
    assert sum(gap < delay / 2 for gap in gaps) <= 0.05 * len(gaps), gaps
    assert statistics.mean(gaps) >= delay * 0.98, gaps  # 2 % for the server's own clock reading


def test_one_hosts_delay_holds_no_other_host_back(shared: Shared) -> None:
    """www and de are crawled at the same time, and the blog, which asks for no Crawl-delay, is
    not held to theirs: two of its posts, linked from one page, come within 0.3 s of each other
    (under www's 0.4 s or de's 0.8 s, no two would)."""
    site = shared.run.site
    www, de = (_pages_after_robots(site.hits_of(host)) for host in ("www.shop.test", "de.shop.test"))
    assert de[1].time < www[-1].time and www[1].time < de[-1].time
    blog = site.hits_of("blog.shop.test")
    assert min(b.time - a.time for a, b in pairwise(blog)) < 0.3, blog


def test_each_hosts_page_budget_is_counted_for_all_workers(redis: str, tmp_path: Path) -> None:
    """Two processes (--workers 2) and a share of four pages per host: the forum is cut at four
    whoever offered its links, the blog whole."""
    site = HostsSite(big()).start()
    try:
        out = tmp_path / "out"
        options = ("--subdomains", "--max-pages-per-host", "4", "--workers", "2", "--no-state")
        pinned = resolve_options([*site.hosts], site.port)
        run = Run(site, out, run_cli("crawl", site.root("www.big.test"), "--out", str(out), *options, *pinned))
    finally:
        site.stop()
    assert run.process.returncode == 0, run.process.stderr
    assert len(sitemap_locs(out / "forum.big.test", run.url("forum.big.test", ""))) == 4
    assert len(sitemap_locs(out / "blog.big.test", run.url("blog.big.test", ""))) == 2
    assert len([hit for hit in site.hits_of("forum.big.test") if hit.path.startswith("/p")]) == 3
    cut = [url for url, line in run.report.items() if line["reason"] == "limit"]
    details = {str(run.report[url]["detail"]) for url in cut}
    assert len(cut) == 6 and details == {f"max pages 4 per host reached on {run.url('forum.big.test', '')}"}, details
    assert "Cut by a limit: 6 URLs over the page budget of 4 per host; raise it with --max-pages-per-host" in (
        run.process.stderr
    )


def test_every_limit_a_worker_counts_reaches_the_coordinators_summary() -> None:
    """The summary's "Cut by a limit" reads these counts; a worker's are summed in Redis."""
    assert {limit(kind) for kind in Limit} | {Stat.PAST_BUDGET} <= set(SUMMED)


def test_each_host_has_its_own_pace_in_redis(shared: Shared) -> None:
    """www's and de's requests are not spaced as if they were one site: some request to one comes
    within 0.3 s of a request to the other, under their own Crawl-delays of 0.4 and 0.8 s (with
    one pace for both, no two would be closer than 0.4 s)."""
    site = shared.run.site
    www, de = (_pages_after_robots(site.hits_of(host)) for host in ("www.shop.test", "de.shop.test"))
    closest = min(abs(a.time - b.time) for a in www[1:] for b in de[1:])
    assert closest < 0.3, (www, de)


def mapped_site() -> dict[str, dict[str, Page]]:
    """A staging copy of two hosts whose every page links to the other host by its production name."""
    pages: dict[str, dict[str, Page]] = {"www.copy.test": {}, "blog.copy.test": {}}
    for n in range(8):
        pages["www.copy.test"][f"/w{n}"] = html(f'<a href="https://blog.example.com/b{n}">b</a>')
        pages["blog.copy.test"][f"/b{n}"] = html(f'<a href="https://www.example.com/w{(n + 1) % 8}">w</a>')
    pages["www.copy.test"]["/"] = html("".join(f'<a href="https://www.example.com/w{n}">w</a>' for n in range(8)))
    pages["blog.copy.test"]["/"] = html("the blog")
    return pages


def test_a_worker_follows_production_names_on_their_staging_hosts(redis: str, tmp_path: Path) -> None:
    """The production map reaches the workers: a link a worker reads on a production name is
    crawled on its staging host, as in one process, and listed under its production name."""
    site = HostsSite(mapped_site()).start()
    try:
        pinned = resolve_options([*site.hosts], site.port)
        command = [str(CLI), "worker", redis, "--wait", "30", *pinned]
        worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = tmp_path / "out"
        production = "https://www.example.com,blog.copy.test=https://blog.example.com"
        process = run_cli(
            "crawl", site.root("www.copy.test"), "--out", str(out), "--distributed", redis, "--no-state",
            "--set", "CONCURRENT_REQUESTS=2", *pinned, env={env_name("production_url"): production},
        )  # fmt: skip
        _, worker_err = worker.communicate(timeout=60)
    finally:
        site.stop()
    assert process.returncode == 0 and worker.returncode == 0, process.stderr + worker_err
    assert "worker done: 0 responses" not in worker_err  # it read pages of its own
    www = sitemap_locs(out / "www.example.com", "https://www.example.com")
    blog = sitemap_locs(out / "blog.example.com", "https://blog.example.com")
    assert sorted(www) == sorted(["https://www.example.com/", *(f"https://www.example.com/w{n}" for n in range(8))])
    assert sorted(blog) == sorted(["https://blog.example.com/", *(f"https://blog.example.com/b{n}" for n in range(8))])
    assert {hit.host for hit in site.hits} == {"www.copy.test", "blog.copy.test"}
