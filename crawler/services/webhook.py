"""A small HTTP endpoint for CMS publish webhooks (``sitemap-crawler serve``).

``POST /update`` with ``Authorization: Bearer TOKEN`` and a JSON body
``{"add": [...], "remove": [...]}`` runs ``sitemap-crawler update`` for
those URLs (one at a time: updates are serialised, the state store would
refuse a second one anyway) and answers with its outcome. Bound to
127.0.0.1 by default; the token is compared in constant time.
"""

from __future__ import annotations

import hmac
import json
import subprocess
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["MAX_BODY", "MAX_URLS_PER_REQUEST", "WebhookServer"]

MAX_BODY = 1_000_000
MAX_URLS_PER_REQUEST = 10_000


class WebhookServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], token: str, update_command: Sequence[str]):
        super().__init__(address, _Handler)
        self.token = token
        self.update_command = list(update_command)
        self.update_lock = threading.Lock()

    def run_update(self, add: list[str], remove: list[str]) -> dict[str, object]:
        command = [*self.update_command]
        for url in add:
            command += ["--add", url]
        for url in remove:
            command += ["--remove", url]
        with self.update_lock:
            result = subprocess.run(  # noqa: S603 - our own console script, arguments as a list
                command, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
            )
        return {"exit_code": result.returncode, "stdout": result.stdout, "stderr": result.stderr[-4000:]}


class _Handler(BaseHTTPRequestHandler):
    server: WebhookServer

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"webhook: {self.address_string()} {format % args}\n")

    def _answer(self, status: int, payload: dict[str, object]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/update":
            self._answer(404, {"error": "POST /update"})
            return
        supplied = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(supplied.encode(), self.server.token.encode()):
            self._answer(401, {"error": "bad or missing token"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self._answer(413 if length > MAX_BODY else 400, {"error": f"a JSON body of at most {MAX_BODY} bytes"})
            return
        try:
            payload = json.loads(self.rfile.read(length))
            add = [str(u) for u in payload.get("add", [])]
            remove = [str(u) for u in payload.get("remove", [])]
        except (ValueError, AttributeError, TypeError):
            self._answer(400, {"error": 'expected {"add": [URL, ...], "remove": [URL, ...]}'})
            return
        if (not add and not remove) or len(add) + len(remove) > MAX_URLS_PER_REQUEST:
            self._answer(400, {"error": f"between 1 and {MAX_URLS_PER_REQUEST} URLs to add or remove"})
            return
        outcome = self.server.run_update(add, remove)
        self._answer(200 if outcome["exit_code"] == 0 else 422, outcome)
