"""The sitemaps.org 0.9 rules for one sitemap or index document (pure).

Rules are expressed in code (no schema download): namespace, root and child
elements, element order, required ``loc``, absolute locs on the expected
origin, W3C datetimes, ``changefreq`` and ``priority`` values, the
50,000-entry and 50 MiB limits, no duplicate locs, UTF-8 only; extension
elements go to :mod:`crawler.validate.extensions`. Parsing is hardened: no
DTDs, no entity expansion.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from lxml import etree

from crawler.protocol import (
    IMAGE_NS,
    MAX_BYTES,
    MAX_IMAGES_PER_URL,
    MAX_LOC_LENGTH,
    MAX_URLS,
    SITEMAP_NS,
    is_w3c_datetime,
)
from crawler.validate.extensions import ExtensionCounts, check_extension

__all__ = ["Problem", "SitemapReport", "validate_bytes"]

_NS = "{" + SITEMAP_NS + "}"
_IMAGE = "{" + IMAGE_NS + "}image"
_URL_CHILDREN = ("loc", "lastmod", "changefreq", "priority")
_INDEX_CHILDREN = ("loc", "lastmod")
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_ABSOLUTE = re.compile(r"https?://[^/?#\s]+", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s")
#: Receives (line, rule, message) for each problem found.
_Sink = Callable[[int | None, str, str], None]


@dataclass(slots=True, frozen=True)
class Problem:
    file: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.rule}: {self.message}"


@dataclass(slots=True)
class SitemapReport:
    """What one file turned out to be, and what is wrong with it."""

    kind: str | None  # "urlset", "sitemapindex" or None when unreadable
    locs: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    news: int = 0  # news:news entries

    @property
    def is_news(self) -> bool:
        """A Google News sitemap: its URLs may also stand in the regular sitemaps."""
        return self.news > 0 and self.news == len(self.locs)


def validate_bytes(data: bytes, name: str, origin: str | None = None) -> SitemapReport:
    """Validate one sitemap or index document given as uncompressed bytes.

    *origin* (``scheme://host[:port]``), when given, is the only origin locs
    may use (the sitemap's own, by the sitemaps.org same-host rule).
    """
    report = SitemapReport(None)

    def problem(line: int | None, rule: str, message: str) -> None:
        report.problems.append(Problem(name, line or 0, rule, message))

    if len(data) > MAX_BYTES:
        problem(0, "size", f"larger than {MAX_BYTES} bytes uncompressed")
        return report
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:  # anywhere: a DTD after 4 KB is one too
        problem(1, "doctype", "DTDs and entity declarations are not allowed in sitemaps")
        return report
    declared = _DECLARED_ENCODING.match(data[:200])
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or (declared and declared.group(1).lower() not in (b"utf-8", b"utf8")):
        problem(1, "encoding", "sitemaps must be UTF-8")
        return report
    counts = ExtensionCounts()
    entries = 0
    depth = 0
    try:
        for event, element in _events(data):
            if event == "start":
                depth += 1
                if depth == 1:
                    report.kind = _check_root(element, problem)
                    if report.kind is None:
                        return report
                continue
            depth -= 1
            if depth != 1:
                continue  # grandchildren are checked with their entry
            entries += 1
            assert report.kind is not None
            loc = _check_entry(element, report.kind, origin, counts, problem)
            if loc is not None:
                report.locs.append(loc)
            element.clear(keep_tail=True)
    except etree.XMLSyntaxError as error:
        problem(error.lineno, "xml", f"not well-formed XML: {error.msg}")
        return report
    report.news = counts.news
    if report.kind is None:
        problem(1, "xml", "empty document")
    if entries > MAX_URLS:
        problem(0, "count", f"{entries} entries, more than {MAX_URLS}")
    seen: set[str] = set()
    for loc in report.locs:
        if loc in seen:
            problem(0, "duplicate", f"loc listed more than once: {loc}")
        seen.add(loc)
    return report


def _events(data: bytes) -> Iterator[tuple[str, etree._Element]]:
    parser = etree.XMLPullParser(
        events=("start", "end"), resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    for offset in range(0, len(data), 1 << 20):
        parser.feed(data[offset : offset + (1 << 20)])
        yield from parser.read_events()
    parser.close()
    yield from parser.read_events()


def _check_root(root: etree._Element, problem: _Sink) -> str | None:
    tag = etree.QName(root)
    if tag.namespace != SITEMAP_NS:
        problem(
            root.sourceline, "namespace", f"root element must be in namespace {SITEMAP_NS}, found {tag.namespace!r}"
        )
        return None
    if tag.localname not in ("urlset", "sitemapindex"):
        problem(root.sourceline, "root", f"root element must be urlset or sitemapindex, not {tag.localname}")
        return None
    return str(tag.localname)


def _check_entry(
    element: etree._Element, kind: str, origin: str | None, counts: ExtensionCounts, problem: _Sink
) -> str | None:
    expected = "url" if kind == "urlset" else "sitemap"
    line = element.sourceline
    if not isinstance(element.tag, str):
        return None  # comments and processing instructions are allowed
    if element.tag != _NS + expected:
        problem(line, "element", f"<{etree.QName(element).localname}> not allowed in <{kind}>, expected <{expected}>")
        return None
    order = _URL_CHILDREN if kind == "urlset" else _INDEX_CHILDREN
    position = -1
    loc: str | None = None
    images = 0
    for child in element:
        if not isinstance(child.tag, str):
            continue
        if not child.tag.startswith(_NS):
            if kind == "sitemapindex":
                problem(child.sourceline, "element", f"extension element {child.tag} not allowed in an index")
                continue
            if child.tag == _IMAGE:
                images += 1
                if images == MAX_IMAGES_PER_URL + 1:
                    problem(child.sourceline, "image-count", f"more than {MAX_IMAGES_PER_URL} images in one <url>")
            check_extension(child, line, is_w3c_datetime, counts, problem)
            continue
        name = child.tag[len(_NS) :]
        if name not in order:
            problem(child.sourceline, "element", f"<{name}> not allowed in <{expected}>")
            continue
        index = order.index(name)
        if index <= position:
            problem(child.sourceline, "order", f"<{name}> out of order or repeated in <{expected}>")
        position = max(position, index)
        text = (child.text or "").strip()
        if name == "loc":
            loc = text
            _check_loc(text, child.sourceline, origin, problem)
        elif name == "lastmod" and not is_w3c_datetime(text):
            problem(child.sourceline, "lastmod", f"not a W3C datetime: {text!r}")
        elif name == "changefreq" and text not in _CHANGEFREQ:
            problem(child.sourceline, "changefreq", f"invalid value {text!r}")
        elif name == "priority" and not _is_priority(text):
            problem(child.sourceline, "priority", f"must be 0.0 to 1.0, not {text!r}")
    if loc is None:
        problem(line, "loc", f"<{expected}> without <loc>")
    return loc


def _check_loc(loc: str, line: int | None, origin: str | None, problem: _Sink) -> None:
    match = _ABSOLUTE.match(loc)
    if match is None:
        problem(line, "loc", f"not an absolute http(s) URL: {loc!r}")
        return
    if len(loc) > MAX_LOC_LENGTH:
        problem(line, "loc", f"longer than {MAX_LOC_LENGTH} characters")
    if _WHITESPACE.search(loc) or not loc.isascii():
        problem(line, "loc", f"must be percent-encoded, without spaces: {loc!r}")
    if origin is not None and match.group(0).lower() != origin.lower():
        problem(line, "host", f"{loc} is not on {origin}")


def _is_priority(text: str) -> bool:
    try:
        return 0.0 <= float(text) <= 1.0 and text[0].isdigit()
    except (ValueError, IndexError):
        return False
