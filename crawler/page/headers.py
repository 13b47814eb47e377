"""Facts read from a response's headers (pure, no Scrapy): robots
directives, RFC 8288 ``Link`` values, the media type and a trustworthy
``Last-Modified``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from email.utils import parsedate_to_datetime

from crawler.protocol import w3c_datetime
from crawler.urls import resolve_link

__all__ = [
    "HTML_TYPES",
    "is_html",
    "last_modified",
    "link_header_alternates",
    "link_header_targets",
    "media_type",
    "parse_link_header",
    "robots_directives",
]

#: Media types whose pages are parsed and may be listed by default.
HTML_TYPES = ("text/html", "application/xhtml+xml")
# X-Robots-Tag rules that carry a value after a colon and are not a user agent.
_VALUED_RULES = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})


def media_type(content_type: str | None) -> str:
    """``text/html`` for ``Text/HTML; charset=utf-8``; a missing header counts as HTML."""
    return (content_type or "text/html").split(";", 1)[0].strip().lower()


def is_html(content_type: str | None) -> bool:
    return media_type(content_type) in HTML_TYPES


def last_modified(value: str | None, date: str | None) -> str | None:
    """``Last-Modified`` as a W3C datetime, unless it merely echoes the fetch time.

    Dynamic pages often stamp every response with the current time (the
    ``Date`` header); such a value says nothing about the content and would
    make lastmod lie.
    """
    if not value:
        return None
    try:
        modified = parsedate_to_datetime(value)
        if date and abs((parsedate_to_datetime(date) - modified).total_seconds()) < 60:
            return None
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if modified.tzinfo is None:
        return None
    return w3c_datetime(modified)


#: The robots directives that keep a page out of the index (``none`` is ``noindex, nofollow``).
NOINDEX = frozenset({"noindex", "none"})


def is_noindex(directives: Iterable[str]) -> bool:
    """Whether *directives* (as :func:`robots_directives` gives them, or one value's parts) keep
    the page out of the index: the one spelling of that rule for the crawl, the renderer, the
    audit and ``check``."""
    return not NOINDEX.isdisjoint(directives)


def directive_value(text: str) -> str:
    """A robots meta content or X-Robots-Tag value in one spelling: ``noindex, nofollow``."""
    return ", ".join(_directive_list(text))


def _directive_list(text: str) -> Iterable[str]:
    return (part.strip().lower() for part in text.split(",") if part.strip())


def robots_directives(
    meta: dict[str, list[str]],
    header_values: Iterable[str],
    token: str,
    ignored: frozenset[tuple[str, str]] = frozenset(),
) -> frozenset[str]:
    """Robots directives that apply to crawler *token* (e.g. ``googlebot``).

    Sources: ``<meta name="robots">``, ``<meta name="TOKEN">`` and every
    ``X-Robots-Tag`` header, either plain (``noindex``) or scoped to a user
    agent (``googlebot: noindex``). ``none`` expands to noindex + nofollow.
    *ignored* (source, value) pairs, source ``meta`` or ``header`` and the
    value as :func:`directive_value` spells it, are read as if absent: a
    staging blocker previewed away, while a page's own, different directive
    still counts.
    """
    token = token.lower()
    found: set[str] = set()
    for name in ("robots", token):
        for content in meta.get(name, ()):
            if not ignored or ("meta", directive_value(content)) not in ignored:
                found.update(_directive_list(content))
    for value in header_values:
        if ignored and ("header", directive_value(value)) in ignored:
            continue
        agent: str | None = None
        for part in value.split(","):
            head, sep, rest = part.partition(":")
            head = head.strip().lower()
            if sep and head and head not in _VALUED_RULES and " " not in head:
                agent, part = head, rest
            directive = part.strip().lower()
            if directive and (agent is None or agent == token):
                found.add(directive)
    if "none" in found:
        found.update(("noindex", "nofollow"))
    return frozenset(found)


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_LINK_VALUE = re.compile(rf"""<([^>]*)>((?:\s*;\s*{_TOKEN}\s*(?:=\s*(?:"[^"]*"|[^;,\s]*))?)*)""")
_LINK_PARAM = re.compile(rf"""\s*;\s*({_TOKEN})\s*=\s*("([^"]*)"|[^;,\s]*)""")


def parse_link_header(header_values: Iterable[str], base_url: str) -> list[tuple[str, dict[str, str]]]:
    """RFC 8288 ``Link`` header values as (absolute target, parameters)."""
    links: list[tuple[str, dict[str, str]]] = []
    for value in header_values:
        for match in _LINK_VALUE.finditer(value):
            target = resolve_link(base_url, match.group(1))
            if not target:
                continue
            params: dict[str, str] = {}
            for param in _LINK_PARAM.finditer(match.group(2)):
                raw = param.group(3) if param.group(3) is not None else param.group(2)
                params.setdefault(param.group(1).lower(), raw)
            links.append((target, params))
    return links


def link_header_targets(header_values: Iterable[str], base_url: str, rel: str) -> list[str]:
    """Absolute targets of ``Link`` header values with relation *rel*."""
    return [
        target
        for target, params in parse_link_header(header_values, base_url)
        if rel in params.get("rel", "").lower().split()
    ]


def link_header_alternates(header_values: Iterable[str], base_url: str) -> list[tuple[str, str]]:
    """(hreflang, target) of ``Link: <...>; rel="alternate"; hreflang="..."`` values."""
    return [
        (params["hreflang"], target)
        for target, params in parse_link_header(header_values, base_url)
        if "alternate" in params.get("rel", "").lower().split() and "hreflang" in params
    ]
