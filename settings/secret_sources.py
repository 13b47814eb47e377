"""Where a staging audit's secrets may come from besides the command line, which ``ps``
shows to every user of the machine: headers from environment variables
(``--header-env VAR``) and cookies from a file (``--cookie-file FILE``, a browser's or
curl's Netscape ``cookies.txt`` export, or one ``name=value`` per line).

No message here quotes a secret: it names the variable, the file and the line.
"""

from __future__ import annotations

import os
import stat
import time

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
            raise ValueError(f"--header-env {variable}: no such environment variable")
        if ":" not in value or "\n" in value.strip():
            raise ValueError(f"--header-env {variable}: expected 'Name: value' on one line")
        lines.append(value)
    return lines


def _text(path: str) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        raise ValueError(f"cannot read --cookie-file {path}: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):  # a FIFO or a device could hang or never end
            raise ValueError(f"--cookie-file {path} is not a regular file")
        if status.st_size > COOKIE_FILE_BYTES:
            raise ValueError(f"--cookie-file {path} is larger than {COOKIE_FILE_BYTES:,} bytes")
        data = file.read(COOKIE_FILE_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--cookie-file {path} is not UTF-8 text") from None


def _domain_matches(domain: str, host: str) -> bool:
    domain = domain.lower().lstrip(".")
    return host == domain or host.endswith("." + domain)


def _netscape(path: str, text: str, host: str) -> list[str]:
    """The cookies for *host* of a Netscape file (seven tab-separated fields a line: domain,
    subdomains, path, secure, expiry, name, value; ``#HttpOnly_`` before an HttpOnly domain).
    Read from the text already checked, not opened again (the standard library's reader
    takes a file name)."""
    cookies, now = [], time.time()
    for number, line in enumerate(text.splitlines(), 1):
        line = line.removeprefix("#HttpOnly_").rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 7 or not fields[4].strip().isdigit():
            raise ValueError(f"--cookie-file {path}:{number}: not a Netscape cookie line (7 fields, tab-separated)")
        domain, _, _, _, expires, name, value = fields
        if 0 < int(expires) < now or not _domain_matches(domain, host):
            continue  # expired (0: a session cookie, kept), or for another site
        cookies.append(f"{name}={value}")
    return cookies


def cookies_from_file(path: str, host: str) -> list[str]:
    """The ``name=value`` cookies of the file at *path* that are for *host*: a Netscape
    file's cookies whose domain matches *host* (expired ones left out), or every line of a
    plain file (blank lines and ``#`` comments skipped)."""
    text = _text(path)
    if text.lstrip().startswith(_NETSCAPE):
        cookies = _netscape(path, text, host.lower())
        if not cookies:
            raise ValueError(f"--cookie-file {path} holds no unexpired cookie for {host}")
        return cookies
    cookies = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, _ = line.partition("=")
        if not sep or not name.strip() or any(c in name for c in " \t;"):
            raise ValueError(f"--cookie-file {path}:{number}: expected name=value")
        cookies.append(line)
    if not cookies:
        raise ValueError(f"--cookie-file {path} holds no cookie")
    return cookies
