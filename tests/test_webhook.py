"""`sitemap-crawler serve` under abuse: bad bodies, stalled clients, a stop mid-update (issue 12)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.services.webhook import MAX_CONNECTIONS, READ_TIMEOUT
from tests.conftest import CLI, crawl, run_cli
from tests.server import SiteServer

TOKEN = "s3cret-token"


@pytest.fixture
def serve(live_site: SiteServer, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    out = tmp_path / "public"
    assert crawl(live_site.url(), out).code == 0
    config = tmp_path / "slow.toml"
    config.write_text("delay = 3\nconcurrency = 1\n")
    env = {**os.environ, "SITEMAP_WEBHOOK_TOKEN": TOKEN}
    command = [
        str(CLI),
        "serve",
        live_site.url(),
        "--out",
        str(out),
        "--listen",
        "127.0.0.1:0",
        "--config",
        str(config),
    ]
    command += ["--update-timeout", "4"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    line = process.stderr.readline()
    assert line.startswith("listening on http://127.0.0.1:"), line
    yield process, line.split()[-1]
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def post(endpoint: str, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        endpoint, data=data, method="POST", headers={"Authorization": f"Bearer {TOKEN}", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


BAD_BODIES = {
    "string": b'{"add": "https://a.example/"}',
    "dict": b'{"add": {"https://a.example/": 1}}',
    "null": b'{"add": null}',
    "numbers": b'{"add": [1, 2]}',
    "nul-byte": b'{"add": ["https://a.example/\\u0000x"]}',
    "200-kb-url": json.dumps({"add": ["https://a.example/" + "x" * 200_000]}).encode(),
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "list": b'["https://a.example/"]',
    "empty": b"{}",
}


def test_bad_bodies_get_a_4xx_and_no_update(serve: tuple[subprocess.Popen[str], str]) -> None:
    process, endpoint = serve
    for name, body in BAD_BODIES.items():
        status, answer = post(endpoint, body)
        assert 400 <= status < 500 and "error" in answer, name
    assert process.poll() is None  # still serving
    assert _child_of(process.pid) is None  # and no update ran


def test_a_content_length_that_is_not_a_number_is_refused(serve: tuple[subprocess.Popen[str], str]) -> None:
    _, endpoint = serve
    host, port = endpoint.split("/")[2].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as client:
        client.sendall(
            f"POST /update HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: abc\r\n\r\n".encode()
        )
        answer = client.recv(4096).decode()
    assert answer.startswith(("HTTP/1.0 400", "HTTP/1.1 400")), answer


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def test_stalled_clients_cost_a_bounded_number_of_threads_for_a_bounded_time(
    serve: tuple[subprocess.Popen[str], str],
) -> None:
    process, endpoint = serve
    host, port = endpoint.split("/")[2].split(":")
    stalled = [socket.create_connection((host, int(port)), timeout=5) for _ in range(2 * MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)  # let the server accept them all
        assert _threads(process.pid) <= MAX_CONNECTIONS + 4
        deadline = time.monotonic() + READ_TIMEOUT + 10
        status = 0
        while time.monotonic() < deadline:  # once the stalled ones time out, a real request is served
            try:
                status, _ = post(endpoint, b'{"add": 5}')
                break
            except (OSError, ValueError):
                time.sleep(0.5)
        assert status == 400
    finally:
        for client in stalled:
            client.close()


def test_stopping_the_server_stops_a_running_update(
    serve: tuple[subprocess.Popen[str], str], live_site: SiteServer
) -> None:
    process, endpoint = serve
    body = json.dumps({"add": [live_site.url(f"/products/p{i}.html") for i in range(1, 5)]}).encode()
    threading.Thread(target=lambda: _quietly(post, endpoint, body), daemon=True).start()
    child = None
    for _ in range(100):  # bounded: 10 s for the update to start
        child = _child_of(process.pid)
        if child:
            break
        time.sleep(0.1)
    assert child, "the update did not start"
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert process.returncode == 0
    assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()


def _quietly(function: object, *args: object) -> None:
    with contextlib.suppress(OSError, ValueError):
        function(*args)  # type: ignore[operator]


def _child_of(pid: int) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                return int(entry.name)
    return None


def test_a_port_out_of_range_is_a_usage_error() -> None:
    result = run_cli("serve", "http://127.0.0.1/", "--out", "x", "--listen", "127.0.0.1:99999", "--token", TOKEN)
    assert result.returncode == 2 and "port from 0 to 65535" in result.stderr and "Traceback" not in result.stderr


def test_an_update_past_its_time_limit_is_stopped_and_answered_504(
    serve: tuple[subprocess.Popen[str], str], live_site: SiteServer
) -> None:
    process, endpoint = serve
    body = json.dumps({"add": [live_site.url(f"/products/p{i}.html") for i in range(1, 8)]}).encode()  # 3 s apart
    started = time.monotonic()
    status, answer = post(endpoint, body)
    assert status == 504 and "took more than 4 s" in str(answer["error"])
    assert time.monotonic() - started < 20
    assert _child_of(process.pid) is None  # stopped, not left running
