"""Access log lines read into requests (pure): nginx's and Apache's ``combined`` and ``common``
formats, any nginx ``log_format`` line, and JSON lines (nginx ``escape=json`` and the field
names of common CDNs and cloud load balancers).

A line that does not parse is ``None``, never an exception: a log is read whole, and a bad
line is counted, not fatal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["COMBINED", "COMMON", "LogRequest", "Parser", "line_parser", "nginx_format"]

#: nginx's predefined ``combined`` format (Apache's is the same line).
COMBINED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"'
)
#: The Common Log Format: no referrer, no user agent.
COMMON = '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent'


@dataclass(frozen=True, slots=True)
class LogRequest:
    """One request of a log: who asked (address and user agent), when, for what, and the answer."""

    address: str
    time: float  # seconds since the epoch (UTC)
    target: str  # the request target: a path with its query, or an absolute URL
    status: int
    agent: str
    host: str = ""  # the Host the request named, when the log has it
    method: str = "GET"


Parser = Callable[[str], "LogRequest | None"]

_VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)\}")
#: The fields a line must give (one of each tuple's variables).
_NEEDED = {
    "address": ("remote_addr", "http_x_forwarded_for", "realip_remote_addr"),
    "time": ("time_local", "time_iso8601", "msec"),
    "target": ("request", "request_uri", "uri"),
    "status": ("status",),
}


def nginx_format(log_format: str) -> Parser:
    """A parser of the lines an nginx ``log_format`` *log_format* writes (``$name`` and
    ``${name}``, literal text between); ``ValueError`` when it lacks what a request needs."""
    names: list[str] = []
    pattern, last = [], 0
    for match in _VARIABLE.finditer(log_format):
        pattern.append(re.escape(log_format[last : match.start()]))
        name = match.group(1) or match.group(2)
        following = log_format[match.end() : match.end() + 1]
        if name in names:
            pattern.append(r".*?")  # a variable given twice: its first place is read
        else:
            names.append(name)
            # Inside quotes: anything but a quote (nginx writes one as \x22, Apache as \").
            body = r'[^"\\]*(?:\\.[^"\\]*)*' if following == '"' else r"\S*" if following == " " else r".*?"
            pattern.append(f"(?P<{name}>{body})")
        last = match.end()
    pattern.append(re.escape(log_format[last:]))
    for field, choices in _NEEDED.items():
        if not any(name in names for name in choices):
            raise ValueError(f"the log format has no ${choices[0]} (the request's {field})")
    compiled = re.compile("^" + "".join(pattern) + "$")

    def parse(line: str) -> LogRequest | None:
        found = compiled.match(line)
        return _request(found.groupdict()) if found else None

    return parse


def _request(fields: Mapping[str, str]) -> LogRequest | None:
    """A request of an nginx line's variables, or ``None`` when one is not what it should be."""
    address = _first_address(fields.get("remote_addr") or fields.get("realip_remote_addr") or "")
    if not address:
        address = _first_address(fields.get("http_x_forwarded_for") or "")
    when = _time(fields)
    status = fields.get("status", "")
    if "request" in fields:
        method, _, rest = fields["request"].partition(" ")
        target = rest.rsplit(" ", 1)[0] if rest.count(" ") else rest
    else:
        method = fields.get("request_method") or "GET"
        target = fields.get("request_uri") or _with_args(fields.get("uri", ""), fields.get("args", ""))
    if not address or when is None or not status.isdigit() or len(status) != 3 or not target:
        return None
    agent = fields.get("http_user_agent", "")
    host = fields.get("host") or fields.get("http_host") or fields.get("server_name") or ""
    return LogRequest(address, when, target, int(status), "" if agent == "-" else agent, host.lower(), method)


def _first_address(value: str) -> str:
    """The client address of an address field (X-Forwarded-For's first), ``-`` meaning none."""
    first = value.split(",", 1)[0].strip()
    return "" if first in ("", "-") else first


def _with_args(uri: str, args: str) -> str:
    return f"{uri}?{args}" if args and args != "-" else uri


def _time(fields: Mapping[str, str]) -> float | None:
    try:
        if text := fields.get("time_local"):
            return time_local(text)
        if text := fields.get("time_iso8601"):
            return _iso_time(text)
        if text := fields.get("msec"):
            return float(text)
    except ValueError:
        return None
    return None


@lru_cache(maxsize=4096)
def _day(text: str) -> float:
    """Seconds since the epoch of midnight UTC of ``04/Dec/2026``; ``ValueError`` if no such day."""
    return datetime.strptime(text, "%d/%b/%Y").replace(tzinfo=UTC).timestamp()


def time_local(text: str) -> float:
    """nginx's ``$time_local`` (``04/Dec/2026:10:00:00 +0100``) in seconds since the epoch: the
    day read once (cached), the time of day by hand, as strptime is the cost of a whole line."""
    digits = text[12:14] + text[15:17] + text[18:20] + text[22:26]
    if len(text) != 26 or text[11] != ":" or text[20] != " " or text[21] not in "+-" or not digits.isdecimal():
        raise ValueError(f"not a $time_local: {text!r}")
    hours, minutes, seconds = int(text[12:14]), int(text[15:17]), int(text[18:20])
    offset = (int(text[22:24]) * 60 + int(text[24:26])) * 60 * (1 if text[21] == "+" else -1)
    if hours > 23 or minutes > 59 or seconds > 60 or text[14] != ":" or text[17] != ":":
        raise ValueError(f"not a $time_local: {text!r}")
    return _day(text[:11]) + hours * 3600 + minutes * 60 + seconds - offset


def _iso_time(text: str) -> float | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


# --- JSON lines -------------------------------------------------------------------------------------

#: Each field's names in the JSON logs of nginx (``escape=json``, as users name them), Caddy,
#: Traefik, Cloudflare Logpush, Google Cloud's and Azure's load balancers, AWS WAF; dotted names
#: go into nested objects. The first one present wins.
JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "address": ("remote_addr", "client_ip", "clientIp", "ClientIP", "ClientAddr", "request.remote_ip",
                "httpRequest.remoteIp", "httpRequest.clientIp", "properties.clientIp", "ip"),
    "time": ("time_iso8601", "time_local", "timestamp", "time", "ts", "EdgeStartTimestamp", "StartUTC", "msec",
             "@timestamp"),
    "target": ("request_uri", "request", "uri", "ClientRequestURI", "RequestPath", "request.uri",
               "httpRequest.requestUrl", "properties.requestUri", "url"),
    "args": ("args", "query_string", "httpRequest.args"),
    "status": ("status", "EdgeResponseStatus", "DownstreamStatus", "httpRequest.status", "properties.httpStatusCode",
               "status_code"),
    "agent": ("http_user_agent", "user_agent", "userAgent", "ClientRequestUserAgent", "request_User-Agent",
              "httpRequest.userAgent", "properties.userAgent", "request.headers.User-Agent"),
    "host": ("host", "http_host", "ClientRequestHost", "RequestHost", "request.host", "properties.hostName"),
    "method": ("request_method", "method", "ClientRequestMethod", "RequestMethod", "request.method",
               "httpRequest.requestMethod", "properties.httpMethod"),
}  # fmt: skip


def _lookup(record: Mapping[str, object], name: str) -> object:
    if name in record:
        return record[name]
    value: object = record
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _field(record: Mapping[str, object], field: str) -> object:
    for name in JSON_FIELDS[field]:
        value = _lookup(record, name)
        if value not in (None, "", "-"):
            return value[0] if isinstance(value, list) and value else value
    return None


def json_line(line: str) -> LogRequest | None:
    """A request of one JSON object per line, its fields under any of :data:`JSON_FIELDS`' names."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    address, when, target, status = (_field(record, name) for name in ("address", "time", "target", "status"))
    method = str(_field(record, "method") or "GET")
    if isinstance(target, str) and " " in target and target.split(" ", 1)[0].isupper():  # a whole request line
        method, _, rest = target.partition(" ")
        target = rest.rsplit(" ", 1)[0] if " " in rest else rest
    moment = _json_time(when)
    code = int(status) if isinstance(status, int | str) and str(status).isdigit() else 0
    if not isinstance(address, str) or moment is None or not isinstance(target, str) or not 100 <= code <= 599:
        return None
    args = _field(record, "args")
    if isinstance(args, str) and "?" not in target:
        target = _with_args(target, args)
    agent, host = _field(record, "agent"), _field(record, "host")
    if not host and target.startswith(("http://", "https://")):
        host = urlsplit(target).hostname or ""
    return LogRequest(
        _first_address(address), moment, target, code, agent if isinstance(agent, str) else "",
        host.lower() if isinstance(host, str) else "", method,
    )  # fmt: skip


def _json_time(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
        while seconds > 1e11:  # milliseconds, microseconds or nanoseconds since the epoch
            seconds /= 1000
        return seconds
    if not isinstance(value, str):
        return None
    try:
        return time_local(value)
    except ValueError:
        pass
    try:
        return _json_time(float(value))
    except ValueError:
        return _iso_time(value)


# --- choosing a parser --------------------------------------------------------------------------------

_combined = nginx_format(COMBINED)
_common = nginx_format(COMMON)


def line_parser(log_format: str | None = None) -> Parser:
    """The parser of *log_format*: ``combined``, ``common``, ``json``, an nginx ``log_format``
    line, or ``None`` to tell each line's format by itself (JSON, else combined, else common)."""
    if log_format is None:
        return _any_line
    named = {"combined": _combined, "common": _common, "json": json_line}.get(log_format.strip().lower())
    return named or nginx_format(log_format)


def _any_line(line: str) -> LogRequest | None:
    if line.startswith("{"):
        return json_line(line)
    return _combined(line) or _common(line)
