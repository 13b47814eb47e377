"""`validate` and IndexNow fetch only what they should, within a deadline (issue 12)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import crawl, run_cli

SITEMAP = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    "<url><loc>{origin}/a</loc></url></urlset>\n"
)


class Recorder(BaseHTTPRequestHandler):
    """Serves an index, a good sitemap and a sitemap that trickles in at a byte a second."""

    protocol_version = "HTTP/1.1"
    paths: list[str]
    index_locs: list[str]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.paths.append(self.path)
        origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        if self.path == "/sitemap.xml":
            entries = "".join(f"<sitemap><loc>{loc.format(origin=origin)}</loc></sitemap>" for loc in self.index_locs)
            body = f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>'
            self._send(body.encode())
        elif self.path.startswith("/silent"):
            time.sleep(8)  # answers nothing for a while, then the thread ends
        elif self.path == "/slow.xml" or self.path.endswith("key.txt"):
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(20):  # 20 bytes at most, one a second, then the thread ends
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(1)
        else:
            self._send(SITEMAP.format(origin=origin).encode())

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def recorder() -> Iterator[tuple[str, type[Recorder]]]:
    handler = type("R", (Recorder,), {"paths": [], "index_locs": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    httpd.shutdown()
    httpd.server_close()


def test_a_remote_index_never_makes_validate_open_local_files_or_other_sites(
    recorder: tuple[str, type[Recorder]], tmp_path: Path
) -> None:
    origin, handler = recorder
    other = ThreadingHTTPServer(("127.0.0.1", 0), type("O", (Recorder,), {"paths": [], "index_locs": []}))
    threading.Thread(target=other.serve_forever, daemon=True).start()
    secret = tmp_path / "secret.xml"
    secret.write_text(SITEMAP.format(origin=origin))
    handler.index_locs = [
        "{origin}/good.xml",
        f"file://{secret}",
        str(secret),
        f"http://127.0.0.1:{other.server_address[1]}/theirs.xml",
    ]
    try:
        result = run_cli("validate", f"{origin}/sitemap.xml", timeout=60)
        other_paths = list(other.RequestHandlerClass.paths)  # type: ignore[attr-defined]
    finally:
        other.shutdown()
        other.server_close()
    assert result.returncode == 1
    assert handler.paths == ["/sitemap.xml", "/good.xml"]
    assert other_paths == []
    refused = [line for line in result.stdout.splitlines() if ": error: loc: " in line or ": error: host: " in line]
    assert len(refused) == 3, result.stdout
    assert any(f"{other.server_address[1]}/theirs.xml is not on {origin}" in line for line in refused)


def test_a_slow_remote_sitemap_costs_the_timeout_not_forever(recorder: tuple[str, type[Recorder]]) -> None:
    origin, _ = recorder
    started = time.monotonic()
    result = run_cli("validate", f"{origin}/slow.xml", "--timeout", "2", timeout=60)
    assert time.monotonic() - started < 15
    assert result.returncode == 1 and "within 2 s" in result.stdout


def test_a_silent_server_costs_three_timeouts_not_one_per_entry(recorder: tuple[str, type[Recorder]]) -> None:
    origin, handler = recorder
    handler.index_locs = [f"{{origin}}/silent-{i}.xml" for i in range(50)]
    started = time.monotonic()
    result = run_cli("validate", f"{origin}/sitemap.xml", "--timeout", "1", timeout=60)
    assert time.monotonic() - started < 20
    assert result.returncode == 1
    assert len([p for p in handler.paths if p.startswith("/silent")]) == 3
    assert "47 more not tried" in result.stdout


def test_a_dtd_anywhere_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "late-dtd.xml"
    padding = "<!-- " + "x" * 5000 + " -->"
    path.write_text(
        f'<?xml version="1.0"?>{padding}<!DOCTYPE urlset [<!ENTITY e "x">]>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://e.com/&e;</loc></url></urlset>'
    )
    result = run_cli("validate", str(path))
    assert result.returncode == 1 and ": doctype: " in result.stdout


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "sitemap.xml"
    os.mkfifo(fifo)
    result = run_cli("validate", str(fifo), timeout=30)
    assert result.returncode == 1 and "not a regular file" in result.stdout


def test_a_slow_indexnow_key_file_does_not_keep_the_run_alive(
    recorder: tuple[str, type[Recorder]], tmp_path: Path
) -> None:
    origin, handler = recorder
    started = time.monotonic()
    result = crawl(
        f"{origin}/",
        tmp_path / "public",
        "--indexnow-endpoint",
        f"{origin}/indexnow",
        "--indexnow-key",
        "abcdef123456",
        "--indexnow-key-location",
        f"{origin}/abcdef123456key.txt",
        "--set",
        "SITEMAP_INDEXNOW_TIMEOUT=2",
    )
    elapsed = time.monotonic() - started
    assert result.code == 0, result.process.stderr  # published; the notification failed, said so
    assert "/abcdef123456key.txt" in handler.paths  # the key file was asked for, and trickled
    assert elapsed < 30
    assert "IndexNow: not sent: key file" in result.process.stderr and "within 2 s" in result.process.stderr
