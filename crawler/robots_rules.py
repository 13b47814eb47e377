"""robots.txt read into Protego's rules (pure), one way for every reader: the robots
middleware that decides, and a shared crawl's exporter that checks what workers fetched
must read the same body the same way (UTF-8, a byte-order mark and undecodable bytes
ignored, as Scrapy's own Protego parser reads it)."""

from __future__ import annotations

from protego import Protego

__all__ = ["parse_robots"]


def parse_robots(body: bytes) -> Protego:
    return Protego.parse(body.decode("utf-8-sig", errors="ignore"))
