"""Scheduled runs: a local site that the test changes between crawls (SPEC S6)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from lxml import etree

from crawler.protocol import SITEMAP_NS
from crawler.state.store import StateStore
from tests.conftest import CLI, CrawlResult, crawl, run_cli
from tests.server import NOT_PAGES, SiteServer

NS = {"s": SITEMAP_NS}
OPTIONS = ("--max-urls-per-file", "4")


@pytest.fixture
def live(live_site: SiteServer) -> tuple[SiteServer, Path]:
    """The live test site and the folder of its pages."""
    return live_site, live_site.root / "live"


def lastmods(out: Path) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for shard in out.glob("sitemap-*.xml"):
        for url in etree.parse(str(shard)).getroot().iterfind("s:url", NS):
            found[url.findtext("s:loc", namespaces=NS) or ""] = url.findtext("s:lastmod", namespaces=NS)
    return found


def shard_of(out: Path) -> dict[str, str]:
    return {
        url.findtext("s:loc", namespaces=NS) or "": shard.name
        for shard in out.glob("sitemap-*.xml")
        for url in etree.parse(str(shard)).getroot().iterfind("s:url", NS)
    }


def age_files(out: Path) -> None:
    """Give every sitemap file an old mtime, so a rewrite shows."""
    for path in out.glob("sitemap*.xml"):
        os.utime(path, ns=(10**9, 10**9))


def next_second() -> None:
    """Wait (at most a second) until the clock enters a new second: lastmod has
    one-second resolution, so a run published within the same second as the
    last one writes a byte-identical index, which is rightly not rewritten."""
    time.sleep(1.001 - time.time() % 1)


def recorded(state: Path, count: int, timeout: float = 60) -> None:
    """Until the state store a running crawl writes holds *count* committed URL outcomes (read-only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # bounded; the writer commits about once a second
        if state.exists():
            try:
                with sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=1) as db:
                    if db.execute("SELECT count(*) FROM history").fetchone()[0] >= count:
                        return
            except sqlite3.OperationalError:
                pass  # not created yet, or the writer holds it for a moment
        time.sleep(0.05)
    raise AssertionError(f"the state store never held {count} URLs")


def rewritten(out: Path) -> set[str]:
    return {p.name for p in out.glob("sitemap*.xml") if p.stat().st_mtime_ns != 10**9}


def edit(page: Path, old: str, new: str) -> None:
    text = page.read_text()
    assert old in text
    page.write_text(text.replace(old, new))


def run(server: SiteServer, out: Path, *options: str) -> CrawlResult:
    server.reset()
    result = crawl(server.url(), out, *OPTIONS, *options)
    assert result.code == 0, result.process.stderr
    return result


def test_lastmod_shards_and_removals_across_runs(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, site = live
    out = tmp_path / "public"
    first = run(server, out)
    url = server.url
    assert len(first.listed) == 11
    marks = lastmods(out)
    assert marks[url("/blog/post1.html")] == "2026-01-15T09:00:00Z"  # dateModified on first sight
    assert marks[url("/products/p1.html")] is None  # nothing trustworthy: no lastmod rather than a guess
    shards = shard_of(out)
    assert shards[url("/products/p3.html")] != shards[url("/products/p7.html")]

    # Run 2, nothing changed: every page answers 304, no file is rewritten.
    age_files(out)
    second = run(server, out)
    pages = [hit for hit in server.hits if hit.path.endswith((".html", "/"))]
    assert pages and all(hit.status == 304 for hit in pages)
    assert rewritten(out) == set()
    assert lastmods(out) == marks and second.listed == first.listed
    assert "11 unchanged pages answered 304, 0 of 3 sitemap files rewritten" in second.process.stderr

    # Run 3: p3's price changes; p7 only gets a new render time and CSRF token.
    edit(site / "products/p3.html", "10 EUR", "12 EUR")
    edit(site / "products/p7.html", "10:00:07", "11:42:59")
    edit(site / "products/p7.html", 'csrf="t7"', 'csrf="zz"')
    age_files(out)
    next_second()  # the index must change with the rewritten shard's lastmod
    started = time.time()
    run(server, out)
    after = lastmods(out)
    changed = after.pop(url("/products/p3.html"))
    assert changed is not None and changed >= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started - 1))
    marks_without_p3 = {k: v for k, v in marks.items() if k != url("/products/p3.html")}
    assert after == marks_without_p3  # p7 and everything else keep their lastmod
    assert rewritten(out) == {shards[url("/products/p3.html")], "sitemap.xml"}
    assert shard_of(out) == shards  # every URL keeps its shard

    # Run 4: p8 is deleted, p9 is new, about.html goes noindex.
    (site / "products/p8.html").unlink()
    (site / "products/p9.html").write_text("<html><body><h1>Product 9</h1></body></html>")
    edit(site / "index.html", "</body>", '<a href="/products/p9.html">p9</a></body>')
    edit(site / "about.html", "<title>", '<meta name="robots" content="noindex"><title>')
    fourth = run(server, out)
    now_listed = shard_of(out)
    assert url("/products/p8.html") not in now_listed and url("/about.html") not in now_listed
    assert now_listed[url("/products/p9.html")] == shards[url("/products/p8.html")]  # fills the open shard
    assert all(now_listed[u] == shards[u] for u in now_listed if u in shards)
    removals = [json.loads(line) for line in (tmp_path / "public.removals.jsonl").read_text().splitlines()]
    assert {(r["url"], r["reason"]) for r in removals} == {
        (url("/products/p8.html"), "status"),
        (url("/about.html"), "noindex"),
    }
    assert "2 URLs removed" in fourth.process.stderr

    store = StateStore(tmp_path / "public.state.sqlite")
    try:
        history = store.history(url("/products/p8.html"))
        assert [(status, outcome) for _, status, outcome, _ in history] == [(200, "listed"), (404, "excluded")]
        page = store.get(url("/products/p3.html"))
        assert page is not None and page.first_seen < page.last_changed
    finally:
        store.close()


def test_unlinked_page_is_reported_gone(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, site = live
    out = tmp_path / "public"
    run(server, out)
    edit(site / "index.html", '<a href="/about.html">about</a>', "")
    run(server, out)
    removals = [json.loads(line) for line in (tmp_path / "public.removals.jsonl").read_text().splitlines()]
    assert removals == [
        {"url": server.url("/about.html"), "status": None, "outcome": "gone", "reason": "not linked any more"}
    ]


def test_section_strategy_names_shards(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, _ = live
    out = tmp_path / "public"
    run(
        server,
        out,
        "--shard-strategy",
        "section",
        "--shard-section",
        "products=/products/",
        "--shard-section",
        "blog=/blog/",
    )
    names = shard_of(out)
    assert names[server.url("/products/p1.html")] == "sitemap-products-1.xml"
    assert names[server.url("/products/p8.html")] == "sitemap-products-2.xml"
    assert names[server.url("/blog/post1.html")] == "sitemap-blog-1.xml"
    assert names[server.url("/")] == "sitemap-1.xml"


def test_second_run_on_the_same_state_is_refused(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, _ = live
    holder = StateStore(tmp_path / "public.state.sqlite")
    try:
        result = run_cli("crawl", server.url(), "--out", str(tmp_path / "public"), "-q")
    finally:
        holder.close()
    assert result.returncode == 2
    assert "is in use by pid" in result.stderr


def test_state_inside_the_public_folder_is_refused(tmp_path: Path) -> None:
    result = run_cli(
        "crawl", "http://127.0.0.1/", "--out", str(tmp_path / "pub"), "--state", str(tmp_path / "pub/s.db")
    )
    assert result.returncode == 2 and "inside the output folder" in result.stderr


def test_killed_crawl_resumes_to_the_same_set(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, _ = live
    reference = run(server, tmp_path / "reference", "--no-state")
    out = tmp_path / "public"
    server.reset()
    command = [str(CLI), "crawl", server.url(), "--out", str(out), "-q", "--delay", "0.4", *OPTIONS]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    recorded(tmp_path / "public.state.sqlite", 3)  # some pages are safe in the state store
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert not (out / "sitemap.xml").exists()
    fetched_before = set(server.paths())
    resumed = run(server, out, "--resume")
    assert "(resumed)" in resumed.process.stderr
    assert resumed.listed == reference.listed
    assert lastmods(out) == lastmods(tmp_path / "reference")
    refetched = [p for p in server.paths() if p in fetched_before and p not in NOT_PAGES]
    assert len(refetched) < len(fetched_before) - 1, "the resumed run started over"


def test_sigterm_keeps_the_previous_set_and_resume_finishes_the_run(
    live: tuple[SiteServer, Path], tmp_path: Path
) -> None:
    server, site = live
    out = tmp_path / "public"
    run(server, out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    edit(site / "products/p3.html", "10 EUR", "11 EUR")
    server.reset()
    command = [str(CLI), "crawl", server.url(), "--out", str(out), "-q", "--delay", "0.4", *OPTIONS]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    server.wait_for(4)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr  # 128 + SIGTERM
    assert "previous sitemaps kept; run it again with --resume to continue" in stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before  # nothing half-written
    resumed = run(server, out, "--resume")
    assert "(resumed)" in resumed.process.stderr
    assert server.url("/products/p3.html") in resumed.listed


class _Recorder(BaseHTTPRequestHandler):
    """An IndexNow endpoint that records what it receives and fails the first POST."""

    posts: list[dict[str, object]]
    statuses: list[int]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = 503 if not self.statuses else 200
        self.statuses.append(status)
        if status == 200:
            self.posts.append(json.loads(body))
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def indexnow() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Recorder", (_Recorder,), {"posts": [], "statuses": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/indexnow", handler
    httpd.shutdown()
    httpd.server_close()


def test_indexnow_gets_exactly_the_changes(
    live: tuple[SiteServer, Path], tmp_path: Path, indexnow: tuple[str, type[_Recorder]]
) -> None:
    server, site = live
    endpoint, recorder = indexnow
    key = "0123456789abcdef"
    (site / f"{key}.txt").write_text(key)
    options = ("--indexnow-endpoint", endpoint, "--indexnow-key", key, "--set", "SITEMAP_INDEXNOW_BATCH=4")
    out = tmp_path / "public"
    first = run(server, out, *options)
    assert "IndexNow: 11 URLs sent in 3 batch(es)" in first.process.stderr
    assert recorder.statuses[0] == 503  # retried
    assert [len(p["urlList"]) for p in recorder.posts] == [4, 4, 3]  # type: ignore[arg-type]
    sent = [u for p in recorder.posts for u in p["urlList"]]  # type: ignore[attr-defined]
    assert sorted(sent) == sorted(first.listed)
    assert recorder.posts[0]["key"] == key
    assert recorder.posts[0]["keyLocation"] == server.url(f"/{key}.txt")
    assert recorder.posts[0]["host"] == "127.0.0.1"

    recorder.posts.clear()
    second = run(server, out, *options)
    assert "IndexNow: nothing changed, nothing sent" in second.process.stderr
    assert recorder.posts == []

    edit(site / "products/p3.html", "10 EUR", "12 EUR")
    (site / "products/p8.html").unlink()
    run(server, out, *options)
    assert [p["urlList"] for p in recorder.posts] == [
        [server.url("/products/p3.html"), server.url("/products/p8.html")]
    ]
    report = json.loads((tmp_path / "public.indexnow.json").read_text())
    assert report["submitted"] == 2 and report["error"] is None


def test_indexnow_refuses_without_key_file(
    live: tuple[SiteServer, Path], tmp_path: Path, indexnow: tuple[str, type[_Recorder]]
) -> None:
    server, _ = live
    endpoint, recorder = indexnow
    result = run(server, tmp_path / "public", "--indexnow-endpoint", endpoint, "--indexnow-key", "missingkey123")
    assert "IndexNow: not sent: key file" in result.process.stderr and "answered HTTP 404" in result.process.stderr
    assert recorder.statuses == []


def test_update_fetches_only_the_given_urls(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, site = live
    out = tmp_path / "public"
    run(server, out)
    shards = shard_of(out)
    before = lastmods(out)
    edit(site / "products/p3.html", "10 EUR", "12 EUR")
    (site / "products/p9.html").write_text("<html><body><h1>Product 9</h1></body></html>")
    (site / "products/p8.html").unlink()
    age_files(out)
    server.reset()
    next_second()  # the index must change with the rewritten shards' lastmod
    result = run_cli(
        "update",
        server.url(),
        "--out",
        str(out),
        "-q",
        "--delay",
        "0",
        *OPTIONS,
        "--add",
        server.url("/products/p3.html"),
        "--add",
        server.url("/products/p9.html"),
        "--remove",
        server.url("/products/p8.html"),
    )
    assert result.returncode == 0, result.stderr
    assert sorted(server.paths()) == ["/products/p3.html", "/products/p9.html", "/robots.txt"]
    after = shard_of(out)
    assert url_set(after) == url_set(shards) - {server.url("/products/p8.html")} | {server.url("/products/p9.html")}
    assert after[server.url("/products/p9.html")] == shards[server.url("/products/p8.html")]  # the open shard
    marks = lastmods(out)
    assert marks[server.url("/products/p3.html")] != before[server.url("/products/p3.html")]
    unchanged = {
        u: m for u, m in marks.items() if u not in (server.url("/products/p3.html"), server.url("/products/p9.html"))
    }
    assert unchanged == {u: m for u, m in before.items() if u in unchanged}
    assert rewritten(out) == {
        shards[server.url("/products/p3.html")],
        shards[server.url("/products/p8.html")],
        "sitemap.xml",
    }
    removals = [json.loads(line) for line in (tmp_path / "public.removals.jsonl").read_text().splitlines()]
    assert removals == [
        {"url": server.url("/products/p8.html"), "status": None, "outcome": "excluded", "reason": "removed"}
    ]
    assert run_cli("validate", str(out)).returncode == 0


def test_update_needs_an_earlier_crawl(tmp_path: Path) -> None:
    result = run_cli("update", "http://127.0.0.1/", "--out", str(tmp_path / "out"), "--add", "http://127.0.0.1/x")
    assert result.returncode == 2 and "run crawl first" in result.stderr
    assert run_cli("update", "http://127.0.0.1/", "--out", str(tmp_path / "out")).returncode == 2


def url_set(mapping: dict[str, str]) -> set[str]:
    return set(mapping)


def test_webhook_runs_updates(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, site = live
    out = tmp_path / "public"
    run(server, out)
    (site / "products/p9.html").write_text("<html><body><h1>Product 9</h1></body></html>")
    env = {**os.environ, "SITEMAP_WEBHOOK_TOKEN": "s3cret-token"}
    command = [str(CLI), "serve", server.url(), "--out", str(out), "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        endpoint = line.split()[-1]
        body = json.dumps({"add": [server.url("/products/p9.html")]}).encode()

        def post(token: str, data: bytes = body) -> tuple[int, dict[str, object]]:
            request = urllib.request.Request(
                endpoint, data=data, method="POST", headers={"Authorization": f"Bearer {token}"}
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as error:
                return error.code, json.loads(error.read())

        assert post("wrong")[0] == 401
        assert post("s3cret-token", b"not json")[0] == 400
        status, outcome = post("s3cret-token")
        assert status == 200, outcome
        assert server.url("/products/p9.html") in shard_of(out)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_delta_sitemap_and_rotation(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, site = live
    out = tmp_path / "public"
    options = ("--delta", "--delta-rotate", "3")
    run(server, out, *options)
    full = shard_of(out)
    assert not any("delta" in name for name in full.values())
    edit(site / "products/p3.html", "10 EUR", "12 EUR")
    (site / "products/p9.html").write_text("<html><body><h1>Product 9</h1></body></html>")
    edit(site / "index.html", "</body>", '<a href="/products/p9.html">p9</a></body>')
    run(server, out, *options)
    names = shard_of(out)
    delta = {u for u, name in names.items() if name == "sitemap-delta-1.xml"}
    assert delta == {server.url("/"), server.url("/products/p3.html"), server.url("/products/p9.html")}
    assert all(names[u] == full[u] for u in names if u not in delta)  # the rest stays where it was
    assert run_cli("validate", str(out)).returncode == 0  # no loc in two files
    age_files(out)
    run(server, out, *options)  # nothing changed: the delta stays, nothing is rewritten
    assert rewritten(out) == set()
    run(server, out, *options)  # third run since the full generation: merge back
    merged = shard_of(out)
    assert not any("delta" in name for name in merged.values())
    assert merged[server.url("/products/p3.html")] == full[server.url("/products/p3.html")]
    assert merged[server.url("/")] == full[server.url("/")]
    assert server.url("/products/p9.html") in merged


def test_state_reused_for_another_site_starts_shards_afresh(live: tuple[SiteServer, Path], tmp_path: Path) -> None:
    server, _ = live
    out = tmp_path / "public"
    run(server, out)
    other = SiteServer(sites={"127.0.0.1": "live"}, root=server.root).start()  # same pages, another port
    try:
        result = run(other, out)
    finally:
        other.stop()
    assert sorted(set(shard_of(out).values())) == ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"]
    assert len(result.listed) == 11
