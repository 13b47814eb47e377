"""A careless user, a second run, a broken state store: no file is lost, every
mistake is one line and a clear exit status (issue 12)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.state.lock import FileLock
from tests.conftest import CLI, crawl, run_cli
from tests.server import SiteServer


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line_usage_error(result: subprocess.CompletedProcess[str], text: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0] and "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("options", "text"),
    [
        (("--report", "{tmp}/public.state.sqlite"), "would be the same file"),
        (("--report", "{tmp}/public/sitemap.xml"), "inside the output folder"),
        (("--removals", "{tmp}/public/removals.jsonl"), "inside the output folder"),
        (("--removals", "{tmp}/public.crawl-report.jsonl"), "would be the same file"),
        (("--state", "{tmp}/public.lock"), "would be the same file"),
        (("--concurrency", "0"), "CONCURRENT_REQUESTS_PER_DOMAIN must be at least 1"),
        (("--set", "DOWNLOAD_MAXSIZE=abc"), "DOWNLOAD_MAXSIZE must be a whole number"),
        (("--timeout", "0"), "DOWNLOAD_TIMEOUT must be at least"),
    ],
)
def test_colliding_paths_and_bad_values_are_refused_before_the_crawl(
    options: tuple[str, ...], text: str, tmp_path: Path
) -> None:
    (tmp_path / "public").mkdir()
    (tmp_path / "public" / "sitemap.xml").write_text("the live_site index")
    before = files_under(tmp_path)
    args = [option.replace("{tmp}", str(tmp_path)) for option in options]
    result = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "public"), *args)
    one_line_usage_error(result, text)
    assert files_under(tmp_path) == before  # nothing written, nothing replaced


def test_a_state_store_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "public.state.sqlite.lock").mkdir()  # the lock's name taken by a folder
    result = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "public"))
    one_line_usage_error(result, "cannot lock state store")


def test_one_run_per_output_folder_whatever_the_state(live_site: SiteServer, tmp_path: Path) -> None:
    holder = FileLock(tmp_path / "public.lock", "output folder")
    try:
        result = run_cli("crawl", live_site.url(), "--out", str(tmp_path / "public"), "--no-state", "--delay", "0")
    finally:
        holder.release()
    one_line_usage_error(result, "is in use by pid")
    assert live_site.paths() == []


def test_a_side_file_that_cannot_be_written_does_not_undo_the_publication(
    live_site: SiteServer, tmp_path: Path
) -> None:
    (tmp_path / "blocker").write_text("a file where a folder should be")
    out = tmp_path / "public"
    result = crawl(live_site.url(), out, "--removals", str(tmp_path / "blocker" / "removals.jsonl"))
    assert result.code == 3, result.process.stderr
    assert result.listed, "the sitemaps are published"
    assert result.process.stdout.strip() == f"Sitemap: {live_site.url('/sitemap.xml')}"
    assert "the sitemaps are published, but the removals report" in result.process.stderr
    again = crawl(live_site.url(), out)  # the run counted as published: the next one is a normal run 2
    assert again.code == 0 and "unchanged pages answered 304" in again.process.stderr


def test_our_own_staging_and_manifest_are_never_crawled(live_site: SiteServer, tmp_path: Path) -> None:
    home = Path(live_site.root) / "live" / "index.html"
    home.write_text(
        home.read_text().replace(
            "</body>",
            '<a href="/.sitemap-staging-x1/sitemap-1.xml">s</a><a href="/.sitemap-manifest.json">m</a></body>',
        )
    )
    result = crawl(live_site.url(), tmp_path / "public")
    assert result.code == 0, result.process.stderr
    assert not [path for path in live_site.paths() if path.startswith("/.sitemap")]
    assert result.reason(live_site.url("/.sitemap-manifest.json")) == "excluded"


def test_temp_files_of_a_killed_run_are_removed(live_site: SiteServer, tmp_path: Path) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    stale = tmp_path / f".public.crawl-report.jsonl.{gone.stdout.strip()}.tmp"  # its process has ended
    stale.write_text("half a report")
    (tmp_path / ".public.removals.jsonl.tmp").write_text("half a removals report")
    result = crawl(live_site.url(), tmp_path / "public")
    assert result.code == 0, result.process.stderr
    assert not stale.exists() and not (tmp_path / ".public.removals.jsonl.tmp").exists()


def test_stored_facts_that_do_not_decode_are_fetched_again_never_gone(live_site: SiteServer, tmp_path: Path) -> None:
    out = tmp_path / "public"
    first = crawl(live_site.url(), out, "--max-urls-per-file", "4")
    assert first.code == 0, first.process.stderr
    broken = live_site.url("/products/p3.html")
    with sqlite3.connect(tmp_path / "public.state.sqlite") as db:
        db.execute("UPDATE page_facts SET facts = ? WHERE url = ?", (b"not zlib at all", broken))
    live_site.reset()
    second = crawl(live_site.url(), out, "--max-urls-per-file", "4")
    assert second.code == 0, second.process.stderr
    assert second.listed == first.listed
    fetched = [hit for hit in live_site.hits if hit.path == "/products/p3.html"]
    assert [hit.status for hit in fetched] == [304, 200]  # asked again without validators
    assert (tmp_path / "public.removals.jsonl").read_text() == ""


def test_a_users_own_sitemap_in_the_folder_is_never_replaced_silently(live_site: SiteServer, tmp_path: Path) -> None:
    out = tmp_path / "public"
    out.mkdir()
    (out / "sitemap.xml").write_text("my own index, written by hand")
    result = run_cli("crawl", live_site.url(), "--out", str(out), "--delay", "0")
    one_line_usage_error(result, "not written by sitemap-crawler")
    assert (out / "sitemap.xml").read_text() == "my own index, written by hand"
    assert live_site.paths() == []
    forced = crawl(live_site.url(), out, "--overwrite-foreign")
    assert forced.code == 0 and forced.listed
    again = crawl(live_site.url(), out)  # ours now: the manifest lists it
    assert again.code == 0, again.process.stderr


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs, where the machine lets the tests mount one (root in CI)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_says_no_space_left_and_keeps_the_previous_set(tiny_disk: Path, tmp_path: Path) -> None:
    from tests.traps import TrapServer

    server = TrapServer().start()  # one page whose <url> entry is 9 MB: more than the disk holds
    out = tiny_disk / "public"
    out.mkdir()
    try:
        result = run_cli(
            "crawl", server.url("/big-images.html"), "--out", str(out), "--delay", "0", "-q", "--no-state",
            "--report", str(tmp_path / "report.jsonl"), "--removals", str(tmp_path / "removals.jsonl"),
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 1
    assert f"no space left on the device of {out}" in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr and result.stderr.count("ERROR") <= 1
    assert [p.name for p in out.iterdir()] == []  # the staging folder is gone, nothing half-written


def test_a_run_stopped_twice_says_it_was_stopped(live_site: SiteServer, tmp_path: Path) -> None:
    command = [str(CLI), "crawl", live_site.url(), "--out", str(tmp_path / "public"), "--delay", "2", "-q", "-v"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    live_site.wait_for(1)  # the crawl has asked for its first page: its signal handlers are in place
    process.send_signal(signal.SIGTERM)
    lines: list[str] = []
    for line in process.stderr:  # bounded by the process: it ends, at the latest, when its crawl does
        lines.append(line)
        if "shutting down gracefully" in line:
            break  # the first signal is handled: a second one is not merged into it
    process.send_signal(signal.SIGTERM)  # the second one forces the stop
    stderr = "".join(lines) + process.communicate(timeout=60)[1]
    assert process.returncode == 143  # 128 + SIGTERM
    assert "stopped" in stderr.splitlines()[-1] and "previous sitemaps kept" in stderr.splitlines()[-1], stderr
    assert not (tmp_path / "public" / "sitemap.xml").exists()


def test_a_state_store_on_a_full_disk_is_one_error_not_one_per_url(tiny_disk: Path, tmp_path: Path) -> None:
    from tests.traps import TrapServer

    server = TrapServer().start()  # 2,000 links a page: the facts of 150 pages fill 1 MB
    try:
        result = run_cli(
            "crawl", server.url("/farm/0"), "--out", str(tmp_path / "public"), "--delay", "0", "-q",
            "--max-pages", "150", "--state", str(tiny_disk / "state.sqlite"),
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "state store" in last and "could not be written" in last and "full" in last, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("ERROR") <= 3
    assert not (tmp_path / "public" / "sitemap.xml").exists()
