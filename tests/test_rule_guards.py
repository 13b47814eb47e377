"""Rules that a one-line change once broke with the whole suite still green (issue 22): each test
here fails when its rule is broken (``scripts/mutants.py`` makes those changes and runs these)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from redis.asyncio import Redis

from crawler.protocol import w3c_instant
from tests.conftest import crawl, run_cli, sitemap_locs
from tests.server import SiteServer
from tests.test_adaptive_speed import serve
from tests.timing import assert_paced


@pytest.fixture
def tiny_site(tmp_path: Path) -> Iterator[tuple[SiteServer, Path]]:
    folder = tmp_path / "site" / "tiny"
    folder.mkdir(parents=True)
    server = SiteServer(sites={"127.0.0.1": "tiny"}, root=tmp_path / "site").start()
    yield server, folder
    server.stop()


def test_disallowed_links_do_not_spend_the_page_budget(tiny_site: tuple[SiteServer, Path], tmp_path: Path) -> None:
    """The spider refuses a disallowed link before it is requested, so it never counts against
    --max-pages (the robots middleware alone would refuse it only after it had been counted)."""
    server, folder = tiny_site
    (folder / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    private = "".join(f'<a href="/private/{n}.html">p</a>' for n in range(5))
    allowed = "".join(f'<a href="/ok{n}.html">ok</a>' for n in range(3))
    (folder / "index.html").write_text(f"<html><body>{private}{allowed}</body></html>")
    for n in range(3):
        (folder / f"ok{n}.html").write_text(f"<html><body>ok {n}</body></html>")  # three pages, no copies
    result = crawl(server.url(), tmp_path / "out", "--no-state", "--max-pages", "4")
    assert result.code == 0, result.process.stderr
    origin = server.url().rstrip("/")
    assert sorted(result.listed) == [f"{origin}/", *(f"{origin}/ok{n}.html" for n in range(3))]
    assert {result.reason(f"{origin}/private/{n}.html") for n in range(5)} == {"robots"}
    assert not [path for path in server.paths() if path.startswith("/private/")]


def test_conflicting_canonicals_are_ignored(tiny_site: tuple[SiteServer, Path], tmp_path: Path) -> None:
    """Two canonicals that disagree say nothing (search engines ignore both): the page is listed."""
    server, folder = tiny_site
    (folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    (folder / "index.html").write_text('<html><body><a href="/both.html">b</a><a href="/one.html">o</a></body></html>')
    canonicals = '<link rel="canonical" href="/a.html"><link rel="canonical" href="/b.html">'
    (folder / "both.html").write_text(f"<html><head>{canonicals}</head><body>x</body></html>")
    (folder / "one.html").write_text('<html><head><link rel="canonical" href="/a.html"></head><body>y</body></html>')
    (folder / "a.html").write_text("<html><body>a</body></html>")
    result = crawl(server.url(), tmp_path / "out", "--no-state")
    assert result.code == 0, result.process.stderr
    origin = server.url().rstrip("/")
    assert f"{origin}/both.html" in result.listed
    assert result.reason(f"{origin}/one.html") == "canonicalised"  # the control: one canonical counts


def test_a_crawl_delay_past_the_cap_is_capped(tmp_path: Path) -> None:
    """Crawl-delay: 3600 would stall the crawl for hours; SITEMAP_MAX_CRAWL_DELAY caps it."""
    for server in serve(k=0.0, robots="User-agent: *\nCrawl-delay: 3600\n"):
        out = tmp_path / "out"
        result = run_cli("crawl", server.url(), "--out", str(out), "--no-state", "-q", "--max-pages", "4",
                         "--set", "SITEMAP_MAX_CRAWL_DELAY=0.3", timeout=90)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "Crawl-delay 3600.0s is capped at 0.3s" in result.stderr
        times = [when for when, _, _ in server.pages()]
        assert len(times) == 4
        # The server's own log: 0.3 s apart, the cap, not the hour robots.txt asked for.
        assert_paced(times, 0.3)
        assert times[-1] - times[0] < 5 * 3


def test_a_crawl_delay_that_makes_the_crawl_long_is_said_up_front(tmp_path: Path) -> None:
    """A page budget that takes hours at robots.txt's Crawl-delay is said as robots.txt is read;
    one that takes under an hour is not (the site is small: only the wording is at stake)."""
    for server in serve(k=0.0, robots="User-agent: *\nCrawl-delay: 1\n"):
        said = []
        for budget in ("50000", "100000"):  # 42 min, then 1 h 23 min at the capped 0.05 s
            result = run_cli("crawl", server.url(), "--out", str(tmp_path / budget), "--no-state", "-q",
                             "--max-pages", budget, "--set", "SITEMAP_MAX_CRAWL_DELAY=0.05", timeout=90)  # fmt: skip
            assert result.returncode == 0, result.stderr
            said.append([line for line in result.stderr.splitlines() if "one request at a time" in line])
        expected = (
            "WARNING: robots.txt asks for Crawl-delay 0.05s, one request at a time, on "
            f"{urlsplit(server.url()).hostname}: the page budget of 100,000 (--max-pages) takes about 1 h 23 min"
            " at that pace"
        )
        assert said == [[], [expected]]


def test_a_retry_after_past_the_cap_is_capped(tmp_path: Path) -> None:
    """Retry-After: 3600 holds the site no longer than SITEMAP_MAX_CRAWL_DELAY."""
    for server in serve(k=0.0, retry_after="3600"):
        out = tmp_path / "out"
        result = run_cli("crawl", server.url(), "--out", str(out), "--no-state", "-q", "--concurrency", "2",
                         "--set", "SITEMAP_MAX_CRAWL_DELAY=0.5", timeout=90)  # fmt: skip
        assert result.returncode == 0, result.stderr
        busy = [when for when, path, _ in server.pages() if path == "/busy.html"]
        assert len(busy) == 2
        assert 0.45 <= busy[1] - busy[0] < 10, busy
        assert server.url("/busy.html") in sitemap_locs(out, server.url("").rstrip("/"))


def test_the_site_wide_in_flight_limit_is_never_passed(redis_url: str) -> None:
    """With the limit's grants held, the next worker waits, whatever the delay (here none)."""
    from crawler.distributed.coordination import SitePace, Workers

    async def body() -> list[float]:
        redis = Redis.from_url(redis_url)
        try:
            pace = SitePace(redis, "c", "https://e.com/", hold=60)
            await Workers(redis, "c").beat("w", None)  # alive: its grants hold
            waits = [await pace.try_acquire(0, 2, pace.token("w", n)) for n in range(3)]
            await pace.release(pace.token("w", 0))
            return [*waits, await pace.try_acquire(0, 2, pace.token("w", 3))]
        finally:
            await redis.aclose()

    granted, second, third, after_release = asyncio.run(body())
    assert (granted, second) == (0, 0)
    assert third > 0  # two in flight: the third waits
    assert after_release == 0  # one released: a slot again


def test_a_page_dated_in_the_future_is_listed_with_the_fetch_time(
    tiny_site: tuple[SiteServer, Path], tmp_path: Path
) -> None:
    server, folder = tiny_site
    (folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    dated = '<meta property="article:modified_time" content="2099-01-01T00:00:00Z">'
    (folder / "index.html").write_text(f"<html><head>{dated}</head><body>soon</body></html>")
    before = datetime.now(UTC).replace(microsecond=0)
    result = crawl(server.url(), tmp_path / "out", "--no-state")
    assert result.code == 0, result.process.stderr
    assert result.listed == [server.url()]  # and sitemap_locs found the set valid: no future lastmod
    shard = next(path for path in (tmp_path / "out").iterdir() if path.name != "sitemap.xml")
    lastmod = shard.read_text().split("<lastmod>", 1)[1].split("<", 1)[0]
    moment = w3c_instant(lastmod)
    assert moment is not None and before <= moment <= datetime.now(UTC), lastmod
    assert "later than the fetch" in json.dumps(result.report[server.url()])


def test_robots_txt_exempts_the_sitemaps_it_names_and_not_the_files_they_list(tmp_path: Path) -> None:
    """robots.txt names /maps/index.xml under a Disallow: /maps/; that index is read (named, so
    allowed), but a child it lists under /maps/ obeys the Disallow like any URL."""
    site = tmp_path / "site" / "maps"
    (site / "maps").mkdir(parents=True)
    server = SiteServer(sites={"127.0.0.1": "maps"}, root=tmp_path / "site").start()
    try:
        root = server.url("/").rstrip("/")
        (site / "robots.txt").write_text(f"User-agent: *\nDisallow: /maps/\nSitemap: {root}/maps/index.xml\n")
        (site / "index.html").write_text(
            '<html><head><title>Home</title></head><body><a href="/a.html">a</a></body></html>'
        )
        (site / "a.html").write_text("<html><head><title>A</title></head><body>a</body></html>")
        (site / "b.html").write_text("<html><head><title>B</title></head><body>b</body></html>")
        index = "".join(f"<sitemap><loc>{root}{path}</loc></sitemap>" for path in ("/maps/child.xml", "/open.xml"))
        namespace = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        (site / "maps" / "index.xml").write_text(f"<sitemapindex {namespace}>{index}</sitemapindex>")
        (site / "maps" / "child.xml").write_text(f"<urlset {namespace}><url><loc>{root}/b.html</loc></url></urlset>")
        (site / "open.xml").write_text(f"<urlset {namespace}><url><loc>{root}/a.html</loc></url></urlset>")
        result = crawl(server.url(), tmp_path / "out", "--no-state")
        paths = server.paths()
    finally:
        server.stop()
    assert result.code == 0, result.process.stderr
    assert "/maps/index.xml" in paths and "/open.xml" in paths  # the named index read, and what it lists
    assert "/maps/child.xml" not in paths, paths  # listed by the index, not named by robots.txt: disallowed
