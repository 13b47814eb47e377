"""Where a staging audit's secrets may come from besides the command line, which ``ps``
shows to every user of the machine: headers from environment variables
(``--header-env VAR``) and cookies from a file (``--cookie-file FILE``, a browser's or
curl's Netscape ``cookies.txt`` export, or one ``name=value`` per line).

No message here quotes a secret: it names the variable, the file and the line.
"""

from __future__ import annotations

import os
import time
from urllib.parse import urlsplit

from crawler.failures import ConfigError
from crawler.regular_file import read_regular_file

__all__ = ["COOKIE_FILE_BYTES", "cookies_from_file", "headers_from_environment"]

#: A cookie file larger than this is refused (a browser's whole export is far smaller).
COOKIE_FILE_BYTES = 1024 * 1024
#: The first line of a Netscape cookie file, as curl and the browsers' exporters write it.
_NETSCAPE = ("# Netscape HTTP Cookie File", "# HTTP Cookie File")


def headers_from_environment(variables: list[str]) -> list[str]:
    """The ``Name: value`` header held by each environment variable of *variables*."""
    lines = []
    for variable in variables:
        value = os.environ.get(variable)
        if value is None:
            raise ConfigError(f"--header-env {variable}: no such environment variable")
        if ":" not in value or "\n" in value.strip():
            raise ConfigError(f"--header-env {variable}: expected 'Name: value' on one line")
        lines.append(value)
    return lines


def _text(path: str) -> str:
    try:
        data = read_regular_file(path, COOKIE_FILE_BYTES)
    except OSError as error:
        raise ConfigError(f"cannot read --cookie-file {path}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"--cookie-file {path} is not UTF-8 text") from None


def _domain_matches(domain: str, subdomains: str, host: str) -> bool:
    """As a browser matches: the domain itself, and its subdomains only when the cookie says so
    (a host-only cookie of ``example.com`` is not ``staging.example.com``'s)."""
    domain = domain.lower().lstrip(".")
    return host == domain or (subdomains.upper() == "TRUE" and host.endswith("." + domain))


def _netscape(path: str, text: str, host: str, secure: bool) -> list[str]:
    """The cookies for *host* of a Netscape file (seven tab-separated fields a line: domain,
    subdomains, path, secure, expiry, name, value; ``#HttpOnly_`` before an HttpOnly domain),
    a Secure one only over https. Read from the text already checked, not opened again (the
    standard library's reader takes a file name)."""
    cookies, now = [], time.time()
    for number, line in enumerate(text.splitlines(), 1):
        line = line.removeprefix("#HttpOnly_").rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 7 or not fields[4].strip().isdigit():
            raise ConfigError(f"--cookie-file {path}:{number}: not a Netscape cookie line (7 fields, tab-separated)")
        domain, subdomains, _, only_https, expires, name, value = fields
        if 0 < int(expires) < now or not _domain_matches(domain, subdomains, host):
            continue  # expired (0: a session cookie, kept), or for another host
        if only_https.upper() == "TRUE" and not secure:
            continue  # Secure: never sent over plain http
        cookies.append(f"{name}={value}")
    return cookies


def cookies_from_file(path: str, url: str, *, required: bool = True) -> list[str]:
    """The ``name=value`` cookies of the file at *path* that are for *url*'s host: a Netscape
    file's cookies whose domain matches it (expired ones left out, Secure ones only for https;
    each is sent on every path of the origin), or every line of a plain file (blank lines and
    ``#`` comments skipped). *required*: a Netscape file with none for the host is an error."""
    text = _text(path)
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if text.lstrip().startswith(_NETSCAPE):
        cookies = _netscape(path, text, host, parts.scheme == "https")
        if not cookies and required:
            raise ConfigError(f"--cookie-file {path} holds no unexpired cookie for {host}")
        return cookies
    cookies = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, _ = line.partition("=")
        if not sep or not name.strip() or any(c in name for c in " \t;"):
            raise ConfigError(f"--cookie-file {path}:{number}: expected name=value")
        cookies.append(line)
    if not cookies:
        raise ConfigError(f"--cookie-file {path} holds no cookie")
    return cookies
