"""Structural validation of sitemap files against the sitemaps.org 0.9 rules.

Rules are expressed in code (no schema download, no network): namespace,
root and child elements, element order, required ``loc``, absolute locs on
the expected origin, W3C datetimes, ``changefreq``/``priority`` values, the
50,000-entry and 50 MiB limits, no nested index, no duplicate locs. Parsing is
hardened: no DTDs, no entity expansion, decompression capped.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from crawler.sitemaps.xml import MAX_BYTES, MAX_URLS, SITEMAP_NS

__all__ = ["Problem", "SitemapReport", "is_w3c_datetime", "validate_bytes", "validate_set"]

_NS = "{" + SITEMAP_NS + "}"
_URL_CHILDREN = ("loc", "lastmod", "changefreq", "priority")
_INDEX_CHILDREN = ("loc", "lastmod")
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_W3C_DATETIME = re.compile(
    r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?)?)?"
)
MAX_LOC_LENGTH = 2048
#: Receives (line, rule, message) for each problem found.
_Sink = Callable[[int | None, str, str], None]


def is_w3c_datetime(text: str) -> bool:
    """W3C Datetime (a profile of ISO 8601): a time needs a timezone."""
    return _W3C_DATETIME.fullmatch(text) is not None


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
    locs: list[str]
    problems: list[Problem]


def _read_capped(path: Path) -> bytes:
    """File content, gunzipped if it is gzip, never more than MAX_BYTES + 1 bytes."""
    with open(path, "rb") as file:
        head = file.read(2)
        file.seek(0)
        if head != b"\x1f\x8b":
            return file.read(MAX_BYTES + 1)
        with gzip.GzipFile(fileobj=file) as unzipped:
            return unzipped.read(MAX_BYTES + 1)


def validate_bytes(data: bytes, name: str, origin: str | None = None) -> SitemapReport:
    """Validate one sitemap or index document given as uncompressed bytes.

    *origin* (``scheme://host[:port]``), when given, is the only origin locs
    may use (the sitemap's own, by the sitemaps.org same-host rule).
    """
    problems: list[Problem] = []
    locs: list[str] = []

    def problem(line: int | None, rule: str, message: str) -> None:
        problems.append(Problem(name, line or 0, rule, message))

    if len(data) > MAX_BYTES:
        problem(0, "size", f"larger than {MAX_BYTES} bytes uncompressed")
        return SitemapReport(None, locs, problems)
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
        problem(1, "doctype", "DTDs and entity declarations are not allowed in sitemaps")
        return SitemapReport(None, locs, problems)
    kind: str | None = None
    entries = 0
    try:
        for event, element in _events(data):
            if kind is None:
                kind = _check_root(element, problem)
                if kind is None:
                    return SitemapReport(None, locs, problems)
                continue
            if event != "end" or element.getparent() is None:
                continue
            if element.getparent().getparent() is not None:
                continue  # grandchildren are checked with their entry
            entries += 1
            loc = _check_entry(element, kind, origin, problem)
            if loc is not None:
                locs.append(loc)
            element.clear(keep_tail=True)
    except etree.XMLSyntaxError as error:
        problem(error.lineno, "xml", f"not well-formed XML: {error.msg}")
        return SitemapReport(kind, locs, problems)
    if kind is None:
        problem(1, "xml", "empty document")
    if entries > MAX_URLS:
        problem(0, "count", f"{entries} entries, more than {MAX_URLS}")
    seen: set[str] = set()
    for loc in locs:
        if loc in seen:
            problem(0, "duplicate", f"loc listed more than once: {loc}")
        seen.add(loc)
    return SitemapReport(kind, locs, problems)


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


def _check_entry(element: etree._Element, kind: str, origin: str | None, problem: _Sink) -> str | None:
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
    for child in element:
        if not isinstance(child.tag, str):
            continue
        qname = etree.QName(child)
        if qname.namespace != SITEMAP_NS:
            if kind == "sitemapindex":
                problem(child.sourceline, "element", f"extension element {qname.localname} not allowed in an index")
            continue  # extensions (image, video, ...) are checked elsewhere
        if qname.localname not in order:
            problem(child.sourceline, "element", f"<{qname.localname}> not allowed in <{expected}>")
            continue
        index = order.index(qname.localname)
        if index <= position:
            problem(child.sourceline, "order", f"<{qname.localname}> out of order or repeated in <{expected}>")
        position = max(position, index)
        text = (child.text or "").strip()
        if qname.localname == "loc":
            loc = text
            _check_loc(text, child.sourceline, origin, problem)
        elif qname.localname == "lastmod" and not is_w3c_datetime(text):
            problem(child.sourceline, "lastmod", f"not a W3C datetime: {text!r}")
        elif qname.localname == "changefreq" and text not in _CHANGEFREQ:
            problem(child.sourceline, "changefreq", f"invalid value {text!r}")
        elif qname.localname == "priority" and not _is_priority(text):
            problem(child.sourceline, "priority", f"must be 0.0 to 1.0, not {text!r}")
    if loc is None:
        problem(line, "loc", f"<{expected}> without <loc>")
    return loc


def _check_loc(loc: str, line: int | None, origin: str | None, problem: _Sink) -> None:
    parts = urlsplit(loc)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        problem(line, "loc", f"not an absolute http(s) URL: {loc!r}")
        return
    if len(loc) > MAX_LOC_LENGTH:
        problem(line, "loc", f"longer than {MAX_LOC_LENGTH} characters")
    if any(ch.isspace() for ch in loc) or not loc.isascii():
        problem(line, "loc", f"must be percent-encoded, without spaces: {loc!r}")
    if origin is not None and f"{parts.scheme}://{parts.netloc}".lower() != origin.lower():
        problem(line, "host", f"{loc} is not on {origin}")


def _is_priority(text: str) -> bool:
    try:
        return 0.0 <= float(text) <= 1.0 and text[0].isdigit()
    except (ValueError, IndexError):
        return False


def validate_set(index_path: Path, origin: str | None = None) -> list[Problem]:
    """Validate an index and every sitemap it lists, resolved as local files
    beside it; checks no nested index and no loc repeated across the set."""
    problems: list[Problem] = []
    try:
        data = _read_capped(index_path)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        return [Problem(str(index_path), 0, "read", str(error))]
    index = validate_bytes(data, str(index_path), origin)
    problems.extend(index.problems)
    if index.kind != "sitemapindex":
        return problems
    seen: dict[str, str] = {}
    for loc in index.locs:
        child = index_path.parent / Path(urlsplit(loc).path).name
        if not child.is_file():
            problems.append(Problem(str(index_path), 0, "missing", f"{loc} has no file {child.name} beside the index"))
            continue
        try:
            report = validate_bytes(_read_capped(child), str(child), origin)
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as error:
            problems.append(Problem(str(child), 0, "read", str(error)))
            continue
        problems.extend(report.problems)
        if report.kind == "sitemapindex":
            problems.append(Problem(str(child), 1, "nested-index", "an index may not list another index"))
        for url in report.locs:
            if url in seen:
                problems.append(Problem(str(child), 0, "duplicate", f"{url} also in {seen[url]}"))
            else:
                seen[url] = child.name
    return problems
