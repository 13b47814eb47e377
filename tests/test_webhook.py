"""`sitemap-crawler serve` under abuse (issue 12): real sockets on 127.0.0.1 against the real server.

Timings are read from the server's own log line for each answer, which says
how long after its connection opened the answer went out.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from crawler.services.webhook import (
    LINGER,
    MAX_BODY,
    MAX_CONNECTIONS,
    MAX_WAITING_UPDATES,
    REQUEST_TIMEOUT,
    BadRequest,
    check_head,
    log_line,
)
from tests.conftest import CLI, crawl, run_cli
from tests.server import SiteServer

TOKEN = "s3cret-token"
#: A loaded 2-core machine may be this late with an answer the server gives at once.
PROMPT = 1.0
T = TypeVar("T")
LINE = re.compile(r"^webhook: (\S+) (\S+) (\S+) (\d{3}) (.*) \((\d+\.\d+) s\)$")


@dataclass(frozen=True)
class Logged:
    method: str
    path: str
    status: int
    reason: str
    seconds: float


class Served:
    """A running ``serve`` and its stderr, read as the server writes it."""

    def __init__(self, command: list[str], env: dict[str, str]):
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        self.endpoint = line.split()[-1]
        self.port = int(self.endpoint.split(":")[2].split("/")[0])
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def answers(self, status: int | None = None) -> list[Logged]:
        with self.changed:
            lines = list(self.lines)
        found = [Logged(m[2], m[3], int(m[4]), m[5], float(m[6])) for line in lines if (m := LINE.match(line))]
        return [each for each in found if status is None or each.status == status]

    def wait_for(self, count: int, status: int | None = None, timeout: float = 30) -> list[Logged]:
        """The answers with *status* once there are *count* of them (bounded by *timeout*)."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.answers(status)) >= count, timeout=timeout)
        found = self.answers(status)
        assert len(found) >= count, (count, status, self.lines)
        return found

    def stop(self) -> str:
        """SIGTERM; the whole stderr once the server has ended."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.reader.join(timeout=10)
        assert self.process.stderr is not None
        self.process.stderr.close()
        return "\n".join(self.lines)


def serve_command(site: str, out: Path, *options: str) -> list[str]:
    return [str(CLI), "serve", site, "--out", str(out), "--listen", "127.0.0.1:0", *options]


@pytest.fixture
def hook(tmp_path: Path) -> Iterator[Served]:
    """A server without an earlier crawl: fine for everything refused before an update runs."""
    served = Served(
        serve_command("http://127.0.0.1:9/", tmp_path / "out"), {**os.environ, "SITEMAP_WEBHOOK_TOKEN": TOKEN}
    )
    yield served
    served.stop()


@pytest.fixture
def serve(live_site: SiteServer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Served]:
    """A server over a crawled site whose updates are slow: 3 s between pages, 4 s at most
    (or the time limit the test gives as its parameter)."""
    out = tmp_path / "public"
    assert crawl(live_site.url(), out).code == 0
    config = tmp_path / "slow.toml"
    config.write_text("delay = 3\nconcurrency = 1\n")
    limit = str(getattr(request, "param", 4))
    command = serve_command(live_site.url(), out, "--config", str(config), "--update-timeout", limit)
    served = Served(command, {**os.environ, "SITEMAP_WEBHOOK_TOKEN": TOKEN})
    yield served
    served.stop()


def post(endpoint: str, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        endpoint, data=data, method="POST", headers={"Authorization": f"Bearer {TOKEN}", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def exchange(port: int, raw: bytes, timeout: float = 10) -> Answer:
    """Send *raw* bytes as they are and read the answer to the end (the server closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as client:
        client.sendall(raw)
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (field.partition(":") for field in fields)}
    return Answer(int(status_line.split()[1]), headers, body)


def request_bytes(method: str = "POST", authorization: str | None = f"Bearer {TOKEN}", body: bytes = b"{}") -> bytes:
    head = f"{method} /update HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
    if authorization is not None:
        head += f"Authorization: {authorization}\r\n"
    return head.encode() + b"\r\n" + body


# The rules, as plain functions.


@pytest.mark.parametrize(
    ("method", "target", "authorization", "length", "status"),
    [
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()], 10, None),
        (b"POST", b"/update/", [b"Bearer " + TOKEN.encode()], 10, None),
        (b"POST", b"/elsewhere", [b"Bearer " + TOKEN.encode()], 10, 404),
        (b"POST", b"/update?x=1", [b"Bearer " + TOKEN.encode()], 10, 404),
        (b"GET", b"/update", None, None, 405),
        (b"POST", b"/update", None, 10, 401),
        (b"POST", b"/update", [TOKEN.encode()], 10, 401),
        (b"POST", b"/update", [b"bearer " + TOKEN.encode()], 10, 401),
        (b"POST", b"/update", [b"Bearer  " + TOKEN.encode()], 10, 401),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode() + b"x"], 10, 401),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()[:-1]], 10, 401),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()] * 2, 10, 401),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()], None, 411),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()], 0, 400),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()], MAX_BODY, None),
        (b"POST", b"/update", [b"Bearer " + TOKEN.encode()], MAX_BODY + 1, 413),
    ],
)
def test_the_head_of_a_request_decides_before_its_body(
    method: bytes, target: bytes, authorization: list[bytes] | None, length: int | None, status: int | None
) -> None:
    if status is None:
        check_head(method, target, authorization, length, TOKEN)
        return
    with pytest.raises(BadRequest) as refused:
        check_head(method, target, authorization, length, TOKEN)
    assert refused.value.status == status
    assert "\n" not in str(refused.value)


def test_a_log_line_never_holds_the_token_a_query_or_a_control_character() -> None:
    line = log_line("127.0.0.1", b"GET", f"/x/{TOKEN}/y?key={TOKEN}".encode(), 404, "no", seconds=0.5, token=TOKEN)
    assert line == "webhook: 127.0.0.1 GET /x/[token]/y 404 no (0.500 s)\n"
    assert TOKEN not in log_line("::1", b"GET", b"/s3cret%2Dtoken", 404, "no", seconds=0, token="s3cret-token")
    odd = log_line("::1", None, b"/\x1b[31m" + b"a" * 500, 400, "no", seconds=0, token=TOKEN)
    assert "\x1b" not in odd and len(odd) < 200 and odd.startswith("webhook: ::1 - /\\x1b[31maaa")


# The server, over real sockets.

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
    "not-json": b"{'add': []}",
    "not-utf-8": b'{"add": ["\xff"]}',
}


def test_bad_bodies_get_a_400_with_a_one_line_reason_and_no_update(hook: Served) -> None:
    for name, body in BAD_BODIES.items():
        status, answer = post(hook.endpoint, body)
        assert status == 400 and "\n" not in str(answer["error"]), name
    assert "line 1 column 2" in hook.wait_for(len(BAD_BODIES))[-2].reason  # where the JSON went wrong
    assert hook.process.poll() is None
    assert _child_of(hook.process.pid) is None  # no update ran


def test_the_authorization_must_be_exactly_bearer_and_the_token(hook: Served) -> None:
    wrong = [TOKEN, f"bearer {TOKEN}", f"Bearer  {TOKEN}", f"Bearer {TOKEN}x", f"Basic {TOKEN}", "Bearer", None]
    for authorization in wrong:
        answer = exchange(hook.port, request_bytes(authorization=authorization))
        assert answer.status == 401, authorization
        assert answer.headers["www-authenticate"] == "Bearer" and json.loads(answer.body)["error"]
    twice = request_bytes().replace(b"\r\n\r\n", f"\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    assert exchange(hook.port, twice).status == 401
    assert exchange(hook.port, request_bytes(body=b'{"add": 5}')).status == 400  # the right one gets past
    assert [each.status for each in hook.wait_for(len(wrong) + 2)] == [401] * (len(wrong) + 1) + [400]


def test_other_methods_get_405_with_allow_post(hook: Served) -> None:
    for method in ("GET", "PUT", "DELETE", "PATCH", "OPTIONS"):
        answer = exchange(hook.port, request_bytes(method))
        assert (answer.status, answer.headers["allow"]) == (405, "POST"), method
        assert json.loads(answer.body) == {"error": "only POST is allowed"}
    head = exchange(hook.port, b"HEAD /update HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (head.status, head.headers["allow"], head.body) == (405, "POST", b"")  # RFC 9110 section 9.3.2
    assert exchange(hook.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == 404


def test_bodies_are_bounded_and_refusals_reach_a_client_still_sending(hook: Served) -> None:
    # 8 MB outlasts the socket buffers: the client is still sending when it is refused on its head.
    too_big = b"x" * 8 * MAX_BODY
    assert post(hook.endpoint, too_big) == (413, {"error": f"a JSON body of 1 to {MAX_BODY} bytes is needed"})
    assert post(hook.endpoint, too_big, {"Authorization": "Bearer nope"})[0] == 401
    chunked = f"POST /update HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert exchange(hook.port, chunked.encode() + b"2\r\n{}\r\n0\r\n\r\n").status == 411
    assert exchange(hook.port, request_bytes(body=b"")).status == 400
    both = request_bytes().replace(b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert exchange(hook.port, both).status == 400  # request smuggling (RFC 9112 section 6.1)


def test_slow_clients_cannot_starve_a_prompt_answer_and_are_cut_at_the_deadline(hook: Served) -> None:
    request = request_bytes()
    sockets = _sockets(hook.process.pid)
    slow = [socket.create_connection(("127.0.0.1", hook.port), timeout=5) for _ in range(40)]
    done = threading.Event()

    def dribble() -> None:  # one byte every 4 s on each, as the probe did
        for byte in range(len(request)):
            for client in slow:
                with contextlib.suppress(OSError):
                    client.sendall(request[byte : byte + 1])
            if done.wait(4):
                return

    sender = threading.Thread(target=dribble, daemon=True)
    sender.start()
    try:
        started = time.monotonic()
        status, _ = post(hook.endpoint, b'{"add": 5}')
        waited = time.monotonic() - started
        assert status == 400
        [answered] = hook.wait_for(1, 400)
        assert answered.seconds < PROMPT and waited < PROMPT + 2, (answered, waited)
        assert _threads(hook.process.pid) <= 4  # connections cost no thread
        cut = hook.wait_for(40, 408, timeout=REQUEST_TIMEOUT + 20)
        assert all(REQUEST_TIMEOUT <= each.seconds < REQUEST_TIMEOUT + 2.5 for each in cut), cut
        for client in slow:
            assert client.recv(4096).startswith(b"HTTP/1.1 408 ")
        # Still sending, they are drained for LINGER at most, then cut: the server holds no socket of theirs.
        _eventually(lambda: _sockets(hook.process.pid) <= sockets, timeout=LINGER + 5)
    finally:
        done.set()
        sender.join(timeout=10)
        for client in slow:
            client.close()


def test_connections_over_the_cap_are_answered_503_at_once(hook: Served) -> None:
    idle = [socket.create_connection(("127.0.0.1", hook.port), timeout=10) for _ in range(MAX_CONNECTIONS)]
    try:
        busy = exchange(hook.port, request_bytes(body=b'{"add": 5}'))
        assert (busy.status, busy.headers["retry-after"]) == (503, "10")
        assert json.loads(busy.body) == {"error": f"more than {MAX_CONNECTIONS} connections at once"}
        [refused] = hook.wait_for(1, 503)
        assert refused.seconds < PROMPT
    finally:
        for client in idle:
            client.close()
    _eventually(lambda: exchange(hook.port, request_bytes(body=b'{"add": 5}')).status == 400)


def test_abuse_leaves_one_line_per_refusal_no_traceback_and_no_token(hook: Served) -> None:
    refused = [
        f"POST /update?token={TOKEN} HTTP/1.1\r\n\r\n".encode(),
        f"POST /update HTTP/1.1 Bearer {TOKEN}\r\n\r\n".encode(),
        f"POST /{TOKEN} HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode(),
        request_bytes(authorization=TOKEN),
        b"POST /update HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
        b"POST /update HTTP/1.1\r\n" + b"X: y\r\n" * 600 + b"\r\n",
        b"POST /update HTTP/1.1\r\nX: a\x00b\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        f"POST /update HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: abc\r\n\r\n".encode(),
    ]
    for raw in refused:
        answer = exchange(hook.port, raw)
        assert 400 <= answer.status < 500 and json.loads(answer.body)["error"], raw[:40]
    for partial in (b"POST /upd", request_bytes()[:-1]):  # the client leaves mid-request: no answer, no line
        with socket.create_connection(("127.0.0.1", hook.port), timeout=10) as client:
            client.sendall(partial)
    with socket.create_connection(("127.0.0.1", hook.port), timeout=10) as client:  # leaves while its update runs
        client.sendall(request_bytes(body=b'{"add": ["http://127.0.0.1:9/x"]}'))
    left = hook.wait_for(len(refused) + 1)[-1]
    assert left.status == 422 and left.reason.endswith("the client had left")
    stderr = hook.stop()
    assert hook.process.returncode == 0
    assert "Traceback" not in stderr and TOKEN not in stderr, stderr
    assert len(stderr.splitlines()) == len(refused) + 1, stderr  # one line each, after "listening on"


@pytest.mark.parametrize("serve", [120], indirect=True)  # the first update outlasts the test
def test_updates_wait_in_a_bounded_queue_and_sigterm_stops_the_running_one(
    serve: Served, live_site: SiteServer
) -> None:
    body = json.dumps({"add": [live_site.url(f"/products/p{i}.html") for i in range(1, 5)]}).encode()
    first = socket.create_connection(("127.0.0.1", serve.port), timeout=30)
    first.sendall(request_bytes(body=body))
    child = _eventually(lambda: _child_of(serve.process.pid))
    assert f"SITEMAP_WEBHOOK_TOKEN={TOKEN}".encode() not in Path(f"/proc/{child}/environ").read_bytes()
    extra = 4
    queued = [
        socket.create_connection(("127.0.0.1", serve.port), timeout=30) for _ in range(MAX_WAITING_UPDATES + extra)
    ]
    try:
        for client in queued:
            client.sendall(request_bytes(body=body))
        refused = serve.wait_for(extra, 503, timeout=10)
        assert all(each.reason == f"{MAX_WAITING_UPDATES} updates are already waiting" for each in refused)
        assert all(each.seconds < PROMPT for each in refused)
        assert len(serve.answers()) == extra  # the others wait for their turn
        serve.stop()
        assert serve.process.returncode == 0
        assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()
    finally:
        for client in [first, *queued]:
            client.close()


def test_an_update_past_its_time_limit_is_stopped_and_answered_504(serve: Served, live_site: SiteServer) -> None:
    body = json.dumps({"add": [live_site.url(f"/products/p{i}.html") for i in range(1, 8)]}).encode()  # 3 s apart
    status, answer = post(serve.endpoint, body)
    assert status == 504 and "took more than 4 s" in str(answer["error"])
    [logged] = serve.wait_for(1, 504)
    assert 4 <= logged.seconds < 4 + 10  # the limit, plus starting the child and killing it on a loaded machine
    assert _child_of(serve.process.pid) is None  # stopped, not left running


def test_a_port_out_of_range_is_a_usage_error() -> None:
    result = run_cli("serve", "http://127.0.0.1/", "--out", "x", "--listen", "127.0.0.1:99999", "--token", TOKEN)
    assert result.returncode == 2 and "port from 0 to 65535" in result.stderr and "Traceback" not in result.stderr


def test_a_port_in_use_is_a_usage_error(hook: Served) -> None:
    result = run_cli("serve", "http://127.0.0.1/", "--out", "x", "--listen", f"127.0.0.1:{hook.port}", "--token", TOKEN)
    assert result.returncode == 2 and "cannot listen on" in result.stderr and "Traceback" not in result.stderr


def _eventually(probe: Callable[[], T], timeout: float = 10) -> T:
    """*probe*'s first true value, asked every 0.1 s for at most *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.1)
    return value


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def _sockets(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            count += os.readlink(fd).startswith("socket:")
    return count


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
