"""The rules of the CMS publish webhook (``sitemap-crawler serve``), without any server.

``POST /update`` with ``Authorization: Bearer TOKEN`` and a JSON body
``{"add": [...], "remove": [...]}`` runs ``sitemap-crawler update`` for
those URLs and answers with its outcome. This module decides, from plain
values: whether a request's head is taken (:func:`check_head`, before any
body is read), what its body asks for (:func:`parse_body`), the update's
command line and the status its outcome is answered with, the bytes of an
answer given before a request is complete, and the log line of an answer
(never the token). ``crawler/cli/serve.py`` serves it on Twisted's web server.

The limits below are the ones the documentation gives (docs/guides/scheduled.md).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

from crawler.protocol import MAX_LOC_LENGTH

__all__ = [
    "LINGER",
    "MAX_BODY",
    "MAX_CONNECTIONS",
    "MAX_URLS_PER_REQUEST",
    "MAX_WAITING_UPDATES",
    "REQUEST_TIMEOUT",
    "BadRequest",
    "answer_bytes",
    "check_head",
    "log_line",
    "outcome",
    "parse_body",
    "status_of",
    "update_command",
]

MAX_BODY = 1_000_000
MAX_URLS_PER_REQUEST = 10_000
#: Connections open at once; the next one is answered 503 before its request is read.
MAX_CONNECTIONS = 128
#: Updates waiting behind the running one (they run one at a time); the next is answered 503.
MAX_WAITING_UPDATES = 32
#: Seconds from a connection's start to its whole request (line, headers, body): a deadline,
#: not an idle timer, so a client sending a byte every few seconds (slowloris) is still cut.
REQUEST_TIMEOUT = 10
#: Seconds a refused connection is drained after its answer before it is cut (RFC 9112 section 9.6).
LINGER = 2.0
#: Seconds before a client that was refused for load should try again (RFC 9110 section 10.2.3).
RETRY_AFTER = 10
PATHS = (b"/update", b"/update/")
_MAX_DEPTH = 4  # {"add": [...]}: anything deeper is not a webhook body
_MAX_LOGGED = 120  # characters of a client's path in a log line


class BadRequest(ValueError):
    """A request the webhook refuses: the status, a one-line reason, any headers the status needs."""

    def __init__(self, status: int, message: str, headers: Sequence[tuple[str, str]] = ()):
        super().__init__(message)
        self.status = status
        self.headers = tuple(headers)


def check_head(method: bytes, target: bytes, authorization: list[bytes] | None, length: int | None, token: str) -> None:
    """Refuse a request on its line and headers alone, before its body is read.

    *authorization* holds every ``Authorization`` value sent, *length* the
    ``Content-Length`` (None without one, or for a chunked body).
    """
    if target not in PATHS:
        raise BadRequest(404, "only POST /update is served")
    if method != b"POST":
        raise BadRequest(405, "only POST is allowed", [("Allow", "POST")])  # RFC 9110 section 15.5.6
    expected = b"Bearer " + token.encode()
    if not authorization or len(authorization) != 1 or not hmac.compare_digest(authorization[0], expected):
        # RFC 6750 section 3: the challenge names the scheme, and nothing about the token.
        raise BadRequest(401, "Authorization must be exactly 'Bearer <token>'", [("WWW-Authenticate", "Bearer")])
    if length is None:
        raise BadRequest(411, "a Content-Length is needed (chunked bodies are not taken)")
    if length == 0 or length > MAX_BODY:
        raise BadRequest(413 if length else 400, f"a JSON body of 1 to {MAX_BODY} bytes is needed")


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
    """The URLs to add and remove, or :class:`BadRequest` with a one-line reason."""
    if _depth(data) > _MAX_DEPTH:
        raise BadRequest(400, "the JSON body nests too deeply")
    try:
        payload = json.loads(data)
    except json.JSONDecodeError as error:
        raise BadRequest(
            400, f"the body is not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
    except (ValueError, RecursionError):  # bytes that are not UTF-8 (or -16/-32)
        raise BadRequest(400, "the body is not JSON text in UTF-8") from None
    if not isinstance(payload, dict):
        raise BadRequest(400, 'expected {"add": [URL, ...], "remove": [URL, ...]}')
    add, remove = _urls(payload, "add"), _urls(payload, "remove")
    if (not add and not remove) or len(add) + len(remove) > MAX_URLS_PER_REQUEST:
        raise BadRequest(400, f"between 1 and {MAX_URLS_PER_REQUEST} URLs to add or remove")
    return add, remove


def update_command(base: Sequence[str], add: Sequence[str], remove: Sequence[str]) -> list[str]:
    command = list(base)
    for url in add:
        command += ["--add", url]
    for url in remove:
        command += ["--remove", url]
    return command


def outcome(exit_code: int | None, stdout: bytes, stderr: bytes, time_limit: float | None = None) -> dict[str, object]:
    """What an update's answer says: its exit status and output, or that it was stopped at *time_limit*."""
    if time_limit is not None:
        return {"exit_code": None, "timed_out": True, "error": f"the update took more than {time_limit:g} s; stopped"}
    text = stderr.decode("utf-8", "replace")
    return {"exit_code": exit_code, "stdout": stdout.decode("utf-8", "replace"), "stderr": text[-4000:]}


def status_of(result: Mapping[str, object]) -> int:
    return 200 if result.get("exit_code") == 0 else 504 if result.get("timed_out") else 422


def answer_bytes(status: int, message: str, headers: Sequence[tuple[str, str]] = (), *, head: bool = False) -> bytes:
    """A whole HTTP/1.1 answer with a JSON error, for a request refused before it is complete."""
    body = json.dumps({"error": message}).encode()
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json"]
    lines += [f"Content-Length: {len(body)}", "Connection: close", *(f"{name}: {value}" for name, value in headers)]
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (b"" if head else body)


def log_line(
    peer: str, method: bytes | None, target: bytes | None, status: int, reason: str, *, seconds: float, token: str
) -> str:
    """One line for one answer: who, what, the status and why, and how long since the connection opened.

    The path is logged without its query, escaped and cut short, and the
    token is blanked wherever a client put it; headers are never logged.
    """
    path = (target or b"-").split(b"?", 1)[0].decode("latin-1")
    for form in {token, quote(token, safe="")}:
        path = path.replace(form, "[token]")
    path = path.encode("unicode_escape").decode("ascii")
    if len(path) > _MAX_LOGGED:
        path = path[:_MAX_LOGGED] + "..."
    verb = (method or b"-").decode("latin-1").encode("unicode_escape").decode("ascii")[:16]
    return f"webhook: {peer} {verb} {path} {status} {reason} ({seconds:.3f} s)\n"
