"""A small HTTP endpoint for CMS publish webhooks (``sitemap-crawler serve``).

``POST /update`` with ``Authorization: Bearer TOKEN`` and a JSON body
``{"add": [...], "remove": [...]}`` runs ``sitemap-crawler update`` for
those URLs (one at a time: updates are serialised, the state store would
refuse a second one anyway) and answers with its outcome. Bound to
127.0.0.1 by default; the token is compared in constant time.

It holds under abuse: at most :data:`MAX_CONNECTIONS` connections at once
(the rest are closed before any work), a read timeout per connection, a
capped body and JSON depth, strict types (lists of http(s) URL strings),
a time limit per update, and the running update is stopped with the
server. Every bad request gets a 4xx with a short JSON error.
"""

from __future__ import annotations

import hmac
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crawler.protocol import MAX_LOC_LENGTH

__all__ = ["MAX_BODY", "MAX_CONNECTIONS", "MAX_URLS_PER_REQUEST", "WebhookServer"]

MAX_BODY = 1_000_000
MAX_URLS_PER_REQUEST = 10_000
MAX_CONNECTIONS = 32
#: Seconds a client may take to send its request.
READ_TIMEOUT = 10.0
_MAX_DEPTH = 4  # {"add": [...]}: anything deeper is not a webhook body


class BadRequest(ValueError):
    """A request the webhook refuses, with the status to answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _depth(text: bytes) -> int:
    """How deeply brackets nest in a JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in text:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _urls(payload: dict[str, Any], key: str) -> list[str]:
    value = payload.get(key, [])
    if not isinstance(value, list) or not all(isinstance(url, str) for url in value):
        raise BadRequest(400, f'"{key}" must be a list of URL strings')
    for url in value:
        if len(url) > MAX_LOC_LENGTH or not url.isprintable() or not url.startswith(("http://", "https://")):
            raise BadRequest(
                400, f'"{key}" holds something that is not an http(s) URL of at most {MAX_LOC_LENGTH} characters'
            )
    return value


def parse_body(data: bytes) -> tuple[list[str], list[str]]:
    """The URLs to add and remove, or :class:`BadRequest`."""
    if _depth(data) > _MAX_DEPTH:
        raise BadRequest(400, "the JSON body nests too deeply")
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        raise BadRequest(400, 'expected {"add": [URL, ...], "remove": [URL, ...]}') from None
    if not isinstance(payload, dict):
        raise BadRequest(400, 'expected {"add": [URL, ...], "remove": [URL, ...]}')
    add, remove = _urls(payload, "add"), _urls(payload, "remove")
    if (not add and not remove) or len(add) + len(remove) > MAX_URLS_PER_REQUEST:
        raise BadRequest(400, f"between 1 and {MAX_URLS_PER_REQUEST} URLs to add or remove")
    return add, remove


class WebhookServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a burst of clients waits to be accepted (and refused) rather than retrying SYNs

    def __init__(self, address: tuple[str, int], token: str, update_command: Sequence[str], update_timeout: float):
        super().__init__(address, _Handler)
        self.token = token
        self.update_command = list(update_command)
        self.update_timeout = update_timeout
        self.update_lock = threading.Lock()
        self.connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.child: subprocess.Popen[str] | None = None
        self.stopping = False

    def process_request(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        """Refuse a connection over the cap before a thread is started for it."""
        if not self.connections.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()

    def run_update(self, add: list[str], remove: list[str]) -> dict[str, object]:
        command = [*self.update_command]
        for url in add:
            command += ["--add", url]
        for url in remove:
            command += ["--remove", url]
        with self.update_lock:
            if self.stopping:
                return {"exit_code": None, "error": "the server is stopping"}
            child = self.child = subprocess.Popen(  # noqa: S603 - our own console script, arguments as a list
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
            )
            try:
                stdout, stderr = child.communicate(timeout=self.update_timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                stdout, stderr = child.communicate()
                return {
                    "exit_code": None,
                    "timed_out": True,
                    "error": f"the update took more than {self.update_timeout:g} s; stopped",
                }
            finally:
                self.child = None
        return {"exit_code": child.returncode, "stdout": stdout, "stderr": stderr[-4000:]}

    def stop_update(self) -> None:
        """Stop the running update with the server: no orphan keeps the state store."""
        self.stopping = True
        child = self.child
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()


class _Handler(BaseHTTPRequestHandler):
    server: WebhookServer
    timeout = READ_TIMEOUT  # per connection: a stalled client is dropped

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"webhook: {self.address_string()} {format % args}\n")

    def log_error(self, format: str, *args: object) -> None:
        self.log_message(format, *args)

    def _answer(self, status: int, payload: dict[str, object]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        try:
            add, remove = self._read()
        except BadRequest as error:
            self._answer(error.status, {"error": str(error)})
            return
        except OSError:  # the client went away or stalled past the timeout
            return
        outcome = self.server.run_update(add, remove)
        status = 200 if outcome.get("exit_code") == 0 else 504 if outcome.get("timed_out") else 422
        self._answer(status, outcome)

    def _read(self) -> tuple[list[str], list[str]]:
        if self.path.rstrip("/") != "/update":
            raise BadRequest(404, "POST /update")
        supplied = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(supplied.encode(), self.server.token.encode()):
            raise BadRequest(401, "bad or missing token")
        raw_length = self.headers.get("Content-Length") or ""
        if not raw_length.isdigit():
            raise BadRequest(411 if not raw_length else 400, "a Content-Length header with a number is needed")
        length = int(raw_length)
        if length <= 0 or length > MAX_BODY:
            raise BadRequest(413 if length > MAX_BODY else 400, f"a JSON body of at most {MAX_BODY} bytes")
        return parse_body(self.rfile.read(length))
