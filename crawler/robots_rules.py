"""robots.txt read into Protego's rules (pure), one way for every reader: the robots
middleware that decides, and a shared crawl's exporter that checks what workers fetched
must read the same body the same way (UTF-8, a byte-order mark and undecodable bytes
ignored, as Scrapy's own Protego parser reads it), and cut where RFC 9309 lets a crawler stop
(500 KiB, after the last complete line: a cut line is never read as a rule; the audit's
preflight reads no more than that either)."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from protego import Protego

from crawler.scope import Scope

__all__ = ["MAX_ROBOTS_BYTES", "MAX_ROBOTS_REDIRECTS", "parse_robots", "redirect_followed", "truncated"]

#: RFC 9309 section 2.5: a crawler may stop parsing after 500 KiB.
MAX_ROBOTS_BYTES = 500 * 1024
#: RFC 9309 section 2.3.1.2: follow at least five consecutive redirects.
MAX_ROBOTS_REDIRECTS = 5


def redirect_followed(origin: str, target: str, *, same_host: bool = False) -> bool:
    """Whether robots.txt's redirect to *target* is followed: an http(s) URL without
    credentials on the same site (``example.com`` to ``www.example.com`` is common), or with
    *same_host* (a staging audit, which must not touch production) on the same host; either way
    on the origin's own port (or the default ports of an http to https move), so a checked site
    cannot turn the tool into a scanner of its machine's or network's other ports."""
    if not target.startswith(("http://", "https://")):
        return False
    there, here = urlsplit(target), urlsplit(origin)
    if there.username is not None or there.password is not None or not _same_port(here, there):
        return False
    if same_host:
        return (there.hostname or "") == (here.hostname or "")
    return Scope(origin).same_site(target)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _same_port(here: SplitResult, there: SplitResult) -> bool:
    try:
        port, origin_port = there.port, here.port
    except ValueError:  # not a number, or out of range
        return False
    target_default = port is None or port == _DEFAULT_PORTS.get(there.scheme)
    origin_default = origin_port is None or origin_port == _DEFAULT_PORTS.get(here.scheme)
    if target_default and origin_default:
        return True
    return port == origin_port and there.scheme == here.scheme


def parse_robots(body: bytes) -> Protego:
    return Protego.parse(body.decode("utf-8-sig", errors="ignore"))


def truncated(body: bytes) -> bytes:
    """The first 500 KiB of *body*, cut after its last complete line."""
    if len(body) <= MAX_ROBOTS_BYTES:
        return body
    head = body[:MAX_ROBOTS_BYTES]
    return head[: head.rfind(b"\n") + 1] or head
