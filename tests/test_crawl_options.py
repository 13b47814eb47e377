"""End to end: crawl options, politeness, re-runs and failure modes."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
from itertools import pairwise
from pathlib import Path

from tests.conftest import CLI, crawl, run_cli, sitemap_locs
from tests.server import NOT_PAGES, SiteServer
from tests.timing import assert_paced


def test_crawl_delay_from_robots_txt_is_honoured(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url("/", host="localhost"), tmp_path / "out")
    assert result.code == 0, result.process.stderr
    assert len(result.listed) == 5
    page_times = [hit.time for hit in server.hits if hit.host == "localhost" and hit.path not in NOT_PAGES]
    assert len(page_times) == 5
    assert_paced(page_times, 0.4)  # Crawl-delay: 0.4


def test_allowed_content_type_is_listed(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url(), tmp_path / "out", "--allow-type", "application/pdf", "--max-query-variants", "1")
    assert result.code == 0
    assert server.url("/doc.pdf") in result.listed
    assert server.url("/") in result.listed  # HTML stays allowed


def test_gzip_shards_round_trip(server: SiteServer, tmp_path: Path) -> None:
    plain = crawl(server.url(), tmp_path / "plain", "--max-query-variants", "1", "--max-urls-per-file", "7")
    packed = crawl(server.url(), tmp_path / "packed", "--max-query-variants", "1", "--max-urls-per-file", "7", "--gzip")
    assert plain.code == packed.code == 0
    assert packed.listed == plain.listed
    gz_files = sorted(packed.out.glob("sitemap-*.xml.gz"))
    assert gz_files and not list(packed.out.glob("sitemap-*.xml"))
    for gz_file in gz_files:
        assert gzip.decompress(gz_file.read_bytes()) == (plain.out / gz_file.name.removesuffix(".gz")).read_bytes()
    assert ".xml.gz</loc>" in (packed.out / "sitemap.xml").read_text()


def test_split_by_bytes(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url(), tmp_path / "out", "--max-query-variants", "1", "--max-bytes-per-file", "1024")
    assert result.code == 0
    shards = sorted(result.out.glob("sitemap-*.xml"), key=lambda p: int(p.stem.split("-")[1]))
    assert len(shards) >= 2
    texts = [shard.read_bytes() for shard in shards]
    assert all(len(text) <= 1024 for text in texts)
    for text, following in pairwise(texts):
        first_entry = following[following.index(b"<url>") : following.index(b"</url>\n") + 7]
        assert len(text) + len(first_entry) > 1024, "a shard was closed while the next entry still fit"


def test_include_and_exclude_patterns(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(
        server.url(), tmp_path / "out", "--include", r"\.html", "--exclude", "sitemap", "--max-query-variants", "1"
    )
    assert result.code == 0
    assert result.listed and all(".html" in u and "sitemap" not in u for u in result.listed)
    assert result.reason(server.url("/from-sitemap.html")) == "excluded"
    assert result.reason(server.url("/")) == "excluded"  # no .html in it
    # The excluded home page is still crawled, so pages linked from it are listed.
    assert server.url("/new-page.html") in result.listed


def test_max_pages_bounds_the_crawl(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url(), tmp_path / "out", "--max-pages", "4")
    assert result.code == 0
    pages = [p for p in server.paths() if p not in NOT_PAGES and "seed-" not in p]
    assert len(pages) == 4
    limited = [u for u, line in result.report.items() if line["reason"] == "limit"]
    assert limited and all("max pages" in str(result.report[u]["detail"]) for u in limited)


def test_page_limit_keeps_the_shallowest_pages(tmp_path: Path) -> None:
    """Breadth-first: a depth-first crawl would take a child before all sections."""
    site = tmp_path / "site" / "bfs"
    sections = [f"/s{i}.html" for i in range(5)]
    pages = {"/index.html": sections} | {section: [section.replace(".html", "-child.html")] for section in sections}
    for path, links in pages.items():
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        (site / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (site / path.lstrip("/")).write_text(f"<html><body>{path} {anchors}</body></html>")
        for link in links:
            if link not in pages:
                (site / link.lstrip("/")).write_text(f"<html><body>{link}</body></html>")
    bfs = SiteServer(sites={"127.0.0.1": "bfs"}, root=tmp_path / "site").start()
    try:
        result = crawl(
            bfs.url(), tmp_path / "out", "--max-pages", "6", "--concurrency", "1", "--set", "CONCURRENT_REQUESTS=1"
        )
        fetched = [path for path in bfs.paths() if path not in NOT_PAGES]
    finally:
        bfs.stop()
    assert result.code == 0, result.process.stderr
    assert sorted(fetched) == sorted(["/", *sections])
    assert all(result.reason(bfs.url(section.replace(".html", "-child.html"))) == "limit" for section in sections)


def test_max_depth(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url(), tmp_path / "out", "--max-depth", "1", "--max-query-variants", "1")
    assert result.code == 0
    assert result.reason(server.url("/linked-from-noindex.html")) == "limit"  # depth 2
    assert "/linked-from-noindex.html" not in server.paths()


def test_rerun_keeps_unchanged_shards(server: SiteServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = crawl(server.url(), out, "--max-query-variants", "1", "--max-urls-per-file", "5")
    assert first.code == 0
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("sitemap*.xml")}
    os.utime(out / "sitemap-1.xml", ns=(1, 1))  # so an unwanted rewrite shows in the mtime
    second = crawl(server.url(), out, "--max-query-variants", "1", "--max-urls-per-file", "5")
    assert second.code == 0
    assert second.listed == first.listed
    assert (out / "sitemap-1.xml").stat().st_mtime_ns == 1
    after = {p.name: p.read_bytes() for p in out.glob("sitemap*.xml")}
    assert after == {name: data for name, (_, data) in before.items()}  # index lastmods unchanged too


def test_failed_crawl_keeps_previous_set(server: SiteServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert crawl(server.url(), out, "--max-query-variants", "1").code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # Same output folder, a crawl that cannot list anything: nothing changes.
    result = run_cli("crawl", server.url(), "--out", str(out), "--delay", "0", "-q", "--include", "no-such-page")
    assert result.returncode == 1
    assert "no sitemap written" in result.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sitemap_locs(out, server.url(""))


def test_robots_disallowing_everything_fails_clearly(server: SiteServer, tmp_path: Path) -> None:
    result = run_cli(
        "crawl",
        server.url(),
        "--out",
        str(tmp_path / "out"),
        "--delay",
        "0",
        "-q",
        "--user-agent",
        "BlockedBot/1.0 (+https://example.com/bot)",
    )
    assert result.returncode == 1
    assert "robots.txt disallows the start URL" in result.stderr
    assert server.paths()[0] == "/robots.txt"
    assert all(p == "/robots.txt" or p.startswith("/seed-") for p in server.paths())
    assert not (tmp_path / "out" / "sitemap.xml").exists()


def test_robots_server_error_means_disallow_all(tmp_path: Path) -> None:
    broken = SiteServer(sites={"127.0.0.1": "broken"}).start()
    try:
        result = run_cli("crawl", broken.url(), "--out", str(tmp_path / "out"), "--delay", "0", "--retries", "0", "-q")
    finally:
        broken.stop()
    assert result.returncode == 1
    assert "answered 503" in result.stderr and "RFC 9309" in result.stderr
    assert broken.paths() == ["/robots.txt"]  # the home page was never requested


def test_start_url_redirecting_away_is_explained(server: SiteServer, tmp_path: Path) -> None:
    moved = SiteServer(sites={"127.0.0.1": "moved"}).start()
    try:
        result = run_cli("crawl", moved.url(), "--out", str(tmp_path / "out"), "--delay", "0", "-q")
    finally:
        moved.stop()
    assert result.returncode == 1
    assert "redirects (301 -> http://localhost:" in result.stderr
    assert "start the crawl at the target instead" in result.stderr


def test_interrupted_crawl_publishes_nothing(server: SiteServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [str(CLI), "crawl", server.url("/", host="localhost"), "--out", str(out), "-q"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server.wait_for(2, host="localhost")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130  # 128 + SIGINT
    assert "no sitemap written: crawl shutdown" in stderr
    assert not (out / "sitemap.xml").exists()
    assert not any(out.iterdir()), "no staging folder left behind"


def test_max_url_length(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url(), tmp_path / "out", "--max-url-length", "40", "--max-query-variants", "1")
    assert result.code == 0
    long_url = server.url("/linked-from-noindex.html")
    assert len(long_url) > 40
    assert result.reason(long_url) == "limit"
    assert "URL length" in str(result.report[long_url]["detail"])
    assert "/linked-from-noindex.html" not in server.paths()
    assert all(len(u) <= 40 for u in result.listed)
