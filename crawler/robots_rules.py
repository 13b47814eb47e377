"""robots.txt read into Protego's rules (pure), one way for every reader: the robots
middleware that decides, and a shared crawl's exporter that checks what workers fetched
must read the same body the same way (UTF-8, a byte-order mark and undecodable bytes
ignored, as Scrapy's own Protego parser reads it), and cut where RFC 9309 lets a crawler stop
(500 KiB, after the last complete line: a cut line is never read as a rule; the audit's
preflight reads no more than that either)."""

from __future__ import annotations

from urllib.parse import urlsplit

from protego import Protego

from crawler.scope import Scope

__all__ = ["MAX_ROBOTS_BYTES", "MAX_ROBOTS_REDIRECTS", "parse_robots", "redirect_followed", "truncated"]

#: RFC 9309 section 2.5: a crawler may stop parsing after 500 KiB.
MAX_ROBOTS_BYTES = 500 * 1024
#: RFC 9309 section 2.3.1.2: follow at least five consecutive redirects.
MAX_ROBOTS_REDIRECTS = 5


def redirect_followed(origin: str, target: str, *, same_host: bool = False) -> bool:
    """Whether robots.txt's redirect to *target* is followed: an http(s) URL on the same site
    (``example.com`` to ``www.example.com`` is common), or with *same_host* (a staging audit,
    which must not touch production) on the same host, any port."""
    if not target.startswith(("http://", "https://")):
        return False
    if same_host:
        return (urlsplit(target).hostname or "") == (urlsplit(origin).hostname or "")
    return Scope(origin).same_site(target)


def parse_robots(body: bytes) -> Protego:
    return Protego.parse(body.decode("utf-8-sig", errors="ignore"))


def truncated(body: bytes) -> bytes:
    """The first 500 KiB of *body*, cut after its last complete line."""
    if len(body) <= MAX_ROBOTS_BYTES:
        return body
    head = body[:MAX_ROBOTS_BYTES]
    return head[: head.rfind(b"\n") + 1] or head
