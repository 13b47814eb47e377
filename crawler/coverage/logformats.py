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
from urllib.parse import urlsplit

from crawler.coverage.logtimes import bounded, iso_time, json_time, time_local

__all__ = ["COMBINED", "COMMON", "LogRequest", "Parser", "line_parser", "nginx_format"]

#: nginx's predefined ``combined`` format (Apache's is the same line).
COMBINED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"'
)
#: Apache's ``vhost_combined``: the virtual host and port, then the combined line.
VHOST_COMBINED = "$server_name:$server_port " + COMBINED
#: The Common Log Format: no referrer, no user agent.
COMMON = '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent'


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs a fifth of a line's parse
class LogRequest:
    """One request of a log: who asked (address and user agent), when, for what, and the answer."""

    address: str
    time: float  # seconds since the epoch (UTC)
    target: str  # the request target: a path with its query, or an absolute URL
    status: int
    agent: str
    host: str = ""  # the Host the request named, when the log has it
    method: str = "GET"
    server: str = ""  # the name of the server (virtual host) that answered: Apache's %v, $server_name


Parser = Callable[[str], "LogRequest | None"]

_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Variables read by their own shape wherever they stand (a space in one, a colon after another).
_SHAPES = {
    "time_local": r"\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}",
    "server_name": r"\[[^\]\s]*\]|[^\s:\"]*",  # an IPv6 address in brackets, or a name
}
#: Variables that may stand right before another (``$scheme://$host$request_uri``), by their shape.
_HOST = r"[^\s/\"?#]*"
_BEFORE_A_VARIABLE = {
    "scheme": r"[A-Za-z][A-Za-z0-9+.-]*", "host": _HOST, "http_host": _HOST, "is_args": r"\??",
    "server_port": r"\d*", "uri": r"[^\s?\"]*",
}  # fmt: skip
#: The fields a line must give (one of each tuple's variables).
_NEEDED = {
    "address": ("remote_addr", "http_x_forwarded_for", "realip_remote_addr"),
    "time": ("time_local", "time_iso8601", "msec"),
    "target": ("request", "request_uri", "uri"),
    "status": ("status",),
}


def nginx_format(log_format: str, *, more: bool = False) -> Parser:
    """A parser of the lines an nginx ``log_format`` *log_format* writes (``$name`` and
    ``${name}``, literal text between); ``ValueError`` when it lacks what a request needs. With
    *more*, a line may go on after the format (nginx's ``main``, Apache's ``combinedio``: the
    combined line and more fields)."""
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
            pattern.append(f"(?P<{name}>{_body(name, following)})")
        last = match.end()
    pattern.append(re.escape(log_format[last:]))
    for field, choices in _NEEDED.items():
        if not any(name in names for name in choices):
            raise ValueError(f"the log format has no ${choices[0]} (the request's {field})")
    compiled = re.compile("^" + "".join(pattern) + (r"(?: .*)?$" if more else "$"))

    def parse(line: str) -> LogRequest | None:
        found = compiled.match(line)
        return _request(found.groupdict()) if found else None

    return parse


def _body(name: str, following: str) -> str:
    """The pattern of variable *name*'s value, given the character that follows it: never a lazy
    ``.*?`` between literals (a line that does not match would backtrack for minutes)."""
    if name in _SHAPES:
        return _SHAPES[name]
    if following == "$":  # another variable right after it: only a value of a known shape ends there
        if name not in _BEFORE_A_VARIABLE:
            raise ValueError(f"the log format has ${name} right before another variable: where it ends is not known")
        return _BEFORE_A_VARIABLE[name]
    if following == '"':  # inside quotes: anything but a quote (nginx writes one as \x22, Apache as \")
        return r'[^"\\]*(?:\\.[^"\\]*)*'
    if following in ("", " "):  # the line's end (a format may be followed by more fields), or a space
        return r"\S*"
    return f"[^{re.escape(following)}]*"


def _request(fields: Mapping[str, str]) -> LogRequest | None:
    """A request of an nginx line's variables, or ``None`` when one is not what it should be."""
    address = client_address(fields.get("remote_addr") or fields.get("realip_remote_addr") or "")
    if not address:
        address = client_address(fields.get("http_x_forwarded_for") or "")
    when = _time(fields)
    status = fields.get("status", "")
    if "request" in fields:
        method, _, rest = fields["request"].partition(" ")
        target = rest.rsplit(" ", 1)[0] if rest.count(" ") else rest
    else:
        method = fields.get("request_method") or "GET"
        target = fields.get("request_uri") or _with_args(fields.get("uri", ""), fields.get("args", ""))
    if not address or when is None or not _is_status(status) or not target:
        return None
    if "\\" in target:
        target = _unescaped(target)
    agent = fields.get("http_user_agent", "")
    host = _host(fields.get("host")) or _host(fields.get("http_host"))
    server = _host(fields.get("server_name"))
    return LogRequest(address, when, target, int(status), "" if agent == "-" else agent, host, method, server)


_ESCAPE = re.compile(r"\\x([0-9A-Fa-f]{2})|\\([\"\\])")


def _unescaped(target: str) -> str:
    r"""A target as the client sent it: nginx writes a byte it will not log as is as ``\xNN``,
    Apache too, and a quote or backslash as ``\"``, ``\\``; each becomes its ``%NN``, as a URL
    spells it."""
    return _ESCAPE.sub(lambda m: f"%{(m.group(1) or f'{ord(m.group(2)):02X}').upper()}", target)


def _is_status(text: str) -> bool:
    return len(text) == 3 and text.isascii() and text.isdigit() and text[0] in "12345"


def _host(value: object) -> str:
    """A logged host name, lower case, without its port or a trailing dot; ``""`` for none
    (``-``, nginx's catch-all ``_``)."""
    if not isinstance(value, str):
        return ""
    text = value.strip().lower().rstrip(".")
    if text.startswith("["):
        return text.split("]", 1)[0] + "]"
    text = text.rsplit(":", 1)[0] if text.count(":") == 1 else text
    return "" if text in ("", "-", "_") else text


def client_address(value: str) -> str:
    """The client address of an address field: of an ``X-Forwarded-For`` list the last one, the
    one the nearest proxy added (the first ones are whatever the client sent, anyone can write
    a crawler's address there); ``ip:port`` and ``[v6]:port`` without the port; ``-`` is none."""
    last = value.rsplit(",", 1)[-1].strip()
    if last.startswith("[") and "]" in last:
        last = last[1 : last.index("]")]
    elif last.count(":") == 1:
        last = last.split(":", 1)[0]
    return "" if last in ("", "-") else last


def _with_args(uri: str, args: str) -> str:
    return f"{uri}?{args}" if args and args != "-" else uri


def _time(fields: Mapping[str, str]) -> float | None:
    try:
        if text := fields.get("time_local"):
            return bounded(time_local(text))
        if text := fields.get("time_iso8601"):
            return iso_time(text)
        if text := fields.get("msec"):
            return json_time(float(text))
    except ValueError:
        return None
    return None


# --- JSON lines -------------------------------------------------------------------------------------

#: Each field's names in the JSON logs of nginx (``escape=json``, as users name them), Caddy,
#: Traefik, Cloudflare Logpush, Google Cloud's and Azure's load balancers, AWS WAF and API
#: Gateway, Vercel's log drains; dotted names go into nested objects. The first one present wins.
JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "address": ("remote_addr", "client_ip", "clientIp", "ClientIP", "ClientHost", "ClientAddr", "request.remote_ip",
                "httpRequest.remoteIp", "httpRequest.clientIp", "properties.clientIp", "proxy.clientIp",
                "request.client_ip", "sourceIp", "ip"),
    "time": ("time_iso8601", "time_local", "timestamp", "time", "ts", "EdgeStartTimestamp", "StartUTC", "msec",
             "@timestamp", "requestTime", "proxy.timestamp"),
    "target": ("request_uri", "request", "uri", "ClientRequestURI", "RequestPath", "request.uri",
               "httpRequest.requestUrl", "properties.requestUri", "proxy.path", "url", "path"),
    "args": ("args", "query_string", "httpRequest.args"),
    "status": ("status", "EdgeResponseStatus", "DownstreamStatus", "httpRequest.status", "properties.httpStatusCode",
               "status_code", "proxy.statusCode", "statusCode"),
    "agent": ("http_user_agent", "user_agent", "userAgent", "ClientRequestUserAgent", "request_User-Agent",
              "httpRequest.userAgent", "properties.userAgent", "request.headers.User-Agent", "proxy.userAgent"),
    "host": ("proxy.host", "host", "http_host", "ClientRequestHost", "RequestHost", "request.host",
             "properties.hostName"),  # Vercel's top-level host may be the deployment's own name
    "method": ("request_method", "method", "ClientRequestMethod", "RequestMethod", "request.method",
               "httpRequest.requestMethod", "properties.httpMethod", "proxy.method", "httpMethod"),
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
    """The first of *field*'s names that holds a value (a string or a number: Caddy's
    ``request`` is an object, its ``request.uri`` the target)."""
    for name in JSON_FIELDS[field]:
        value = _lookup(record, name)
        value = value[0] if isinstance(value, list) and value else value
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value not in ("", "-"):
            return value
    return None


def json_line(line: str) -> LogRequest | None:
    """A request of one JSON object per line, its fields under any of :data:`JSON_FIELDS`' names."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # a line nested past Python's depth is no log line either
        return None
    if not isinstance(record, dict):
        return None
    address, when, target, status = (_field(record, name) for name in ("address", "time", "target", "status"))
    method = str(_field(record, "method") or "GET")
    if isinstance(target, str) and " " in target and target.split(" ", 1)[0].isupper():  # a whole request line
        method, _, rest = target.partition(" ")
        target = rest.rsplit(" ", 1)[0] if " " in rest else rest
    moment = json_time(when)
    code = int(str(status)) if _is_status(str(status)) else 0
    if not isinstance(address, str) or moment is None or not isinstance(target, str) or not code:
        return None
    args = _field(record, "args")
    if isinstance(args, str) and "?" not in target:
        target = _with_args(target, args)
    agent, host = _field(record, "agent"), _host(_field(record, "host"))
    if not host and target.lower().startswith(("http://", "https://")):
        host = _host(urlsplit(target).hostname or "")
    if not (address := client_address(address)):
        return None
    return LogRequest(address, moment, target, code, agent if isinstance(agent, str) else "", host, method)


# --- choosing a parser --------------------------------------------------------------------------------

_combined = nginx_format(COMBINED, more=True)
_common = nginx_format(COMMON)
#: Apache's ``vhost_combined`` (``%v:%p`` before the combined line), as Debian's Apache logs by default.
_vhost = nginx_format(VHOST_COMBINED, more=True)


def line_parser(log_format: str | None = None) -> Parser:
    """The parser of *log_format*: ``combined``, ``common``, ``vhost_combined``, ``json``, an nginx ``log_format``
    line, or ``None`` to tell each line's format by itself (JSON, else combined, else common)."""
    if log_format is None:
        return _any_line
    named = {"combined": _combined, "common": _common, "vhost_combined": _vhost, "json": json_line}
    parser = named.get(log_format.strip().lower())
    return parser or nginx_format(log_format)


def _any_line(line: str) -> LogRequest | None:
    if line.startswith("{"):
        return json_line(line)
    return _combined(line) or _common(line) or _vhost(line)
