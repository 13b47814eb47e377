"""Staging blockers: what keeps a whole staging site out of search engines (pure).

A site-wide ``X-Robots-Tag: noindex``, ``<meta name="robots"
content="noindex">`` or robots.txt ``Disallow: /`` is how staging sites are
kept out of the index. It is looked for on the start page before the crawl
(so ``--as-if-no-blocker`` knows which directive to read away) and
confirmed on every page after it: a blocker is site-wide, or it is not one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from crawler.audit.record import Page
from crawler.page.headers import directive_value, is_noindex, robots_directives
from crawler.page.html import parse_html
from crawler.robots_rules import parse_robots, truncated

__all__ = ["Blocker", "confirm", "start_page_blockers", "without_disallow_all"]

_DISALLOW_ALL_LINE = re.compile(rb"^[ \t]*disallow[ \t]*:[ \t]*/[ \t]*(?:#.*)?$", re.IGNORECASE | re.MULTILINE)


def without_disallow_all(body: bytes) -> bytes:
    """robots.txt *body* with its ``Disallow: /`` lines blanked: a staging blocker, previewed away."""
    return _DISALLOW_ALL_LINE.sub(b"", body)


@dataclass(slots=True)
class Blocker:
    kind: str  # "header", "meta" or "robots"
    value: str  # the directive as written (X-Robots-Tag value, meta content, robots.txt line)
    pages: int = 0  # pages carrying it, once the crawl is over
    of: int = 0  # pages that could carry it
    root: str = ""  # the host it blocks (scheme://host[:port]/), in an audit of several; "": all

    def covers(self, url: str) -> bool:
        """Whether *url* is on the host this blocker blocks."""
        return not self.root or url.startswith(self.root)

    @property
    def ignored(self) -> str | None:
        """``source:value`` that ``--as-if-no-blocker`` reads away (``SITEMAP_IGNORE_DIRECTIVES``)."""
        return None if self.kind == "robots" else f"{self.kind}:{directive_value(self.value)}"

    @property
    def site_wide(self) -> bool:
        return self.kind == "robots" or (self.of > 0 and self.pages == self.of)

    def describe(self) -> str:
        where = {
            "header": f"X-Robots-Tag: {self.value}",
            "meta": f'<meta name="robots" content="{self.value}">',
            "robots": "robots.txt: Disallow: /",
        }[self.kind]
        host = f" on {self.root}" if self.root else ""
        if self.kind == "robots":
            return f"{where}{host} for every crawler this audit speaks for"
        return f"{where} on {self.pages} of {self.of} pages{host}"


def _blocking(values: Iterable[str], kind: str, token: str) -> list[Blocker]:
    found = []
    for value in values:
        directives = robots_directives(
            {"robots": [value]} if kind == "meta" else {}, [value] if kind == "header" else [], token
        )
        if is_noindex(directives):
            found.append(Blocker(kind, value.strip()))
    return found


def start_page_blockers(
    url: str, *, header_values: list[str], body: bytes | None, robots_txt: bytes | None, agent: str, token: str
) -> list[Blocker]:
    """The blockers the start page and robots.txt show, before crawling."""
    blockers = _blocking(header_values, "header", token)
    if body:
        page = parse_html(body, url)
        blockers += _blocking([*page.meta.get("robots", ()), *page.meta.get(token, ())], "meta", token)
    if robots_txt is not None:
        read = truncated(robots_txt)  # as the crawl reads it: 500 KiB, the cut line dropped
        lifted = without_disallow_all(read)
        if not parse_robots(read).can_fetch(url, agent) and parse_robots(lifted).can_fetch(url, agent):
            blockers.append(Blocker("robots", "Disallow: /"))
    return blockers


def confirm(blockers: list[Blocker], pages: Iterable[Page]) -> list[Blocker]:
    """Count the pages kept out by each header or meta blocker's source; keep
    the site-wide ones (every page: a page may carry its own noindex instead)."""
    for page in pages:
        if not page.fetched_html:
            continue
        for blocker in blockers:
            if blocker.kind == "robots" or not blocker.covers(page.url):
                continue
            blocker.of += 1
            values = page.header_robots if blocker.kind == "header" else page.meta_robots
            if any(_is_blocking(value) for value in values):
                blocker.pages += 1
    return [blocker for blocker in blockers if blocker.site_wide]


def _is_blocking(value: str) -> bool:
    return is_noindex(directive_value(value).split(", "))
