"""Validation of sitemap files against the sitemaps.org 0.9 protocol and the
image, video, news and xhtml extensions.

Rules are expressed in code (no schema download, no network for the rules):
namespace, root and child elements, element order, required ``loc``,
absolute locs on the expected origin, W3C datetimes, ``changefreq`` and
``priority`` values, the 50,000-entry and 50 MiB limits, no nested index, no
duplicate locs, UTF-8 only. Parsing is hardened: no DTDs, no entity
expansion, decompression and downloads capped.
"""

from __future__ import annotations

import gzip
import io
import re
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from crawler.sitemaps.rules import MAX_IMAGES_PER_URL, ExtensionCounts, check_extension
from crawler.sitemaps.xml import IMAGE_NS, MAX_BYTES, MAX_URLS, SITEMAP_NS

__all__ = [
    "Problem",
    "SitemapReport",
    "is_w3c_datetime",
    "read_sitemap",
    "validate_bytes",
    "validate_set",
    "validate_target",
]

_NS = "{" + SITEMAP_NS + "}"
_IMAGE = "{" + IMAGE_NS + "}image"
_URL_CHILDREN = ("loc", "lastmod", "changefreq", "priority")
_INDEX_CHILDREN = ("loc", "lastmod")
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_W3C_DATETIME = re.compile(
    r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])"
    r"(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))?)?)?"
)
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_ABSOLUTE = re.compile(r"https?://[^/?#\s]+", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s")
_ROOT = re.compile(rb"<(?:[A-Za-z0-9_]+:)?(urlset|sitemapindex)[\s>/]")
_FIRST_LOC = re.compile(rb"<(?:[A-Za-z0-9_]+:)?loc>\s*([^<\s]+)")
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
    locs: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    news: int = 0  # news:news entries

    @property
    def is_news(self) -> bool:
        """A Google News sitemap: its URLs may also stand in the regular sitemaps."""
        return self.news > 0 and self.news == len(self.locs)


class SitemapReadError(Exception):
    """A sitemap could not be read at all (missing, not gzip, too big, ...)."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


def read_sitemap(location: str | Path, timeout: float = 30.0) -> bytes:
    """The uncompressed bytes of a local file or an http(s) URL.

    Never reads more than the protocol's 50 MiB (plus one byte, so that an
    oversized file is seen as such) after decompression; gzip is recognised
    by its magic number, and a ``.gz`` name that is not gzip is an error.
    """
    name = str(location)
    try:
        if name.startswith(("http://", "https://")):
            request = urllib.request.Request(name, headers={"Accept-Encoding": "identity"})  # noqa: S310 - http(s) only
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                raw: bytes = response.read(MAX_BYTES + 1)
        else:
            with open(name, "rb") as file:
                raw = file.read(MAX_BYTES + 1)
    except (OSError, urllib.error.URLError, ValueError) as error:
        raise SitemapReadError("read", f"cannot read: {error}") from None
    if raw[:2] != b"\x1f\x8b":
        if urlsplit(name).path.endswith(".gz"):
            raise SitemapReadError("gzip", "named .gz but not gzip-compressed")
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
            data: bytes = unzipped.read(MAX_BYTES + 1)
            return data
    except (OSError, EOFError, zlib.error) as error:
        raise SitemapReadError("gzip", f"broken gzip data: {error}") from None


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
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
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


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _load(location: str | Path, origin: str | None) -> tuple[SitemapReport, str | None]:
    """The report of one file, and the origin its locs were held to (when
    none is given, the origin of its first loc: all must share it)."""
    try:
        data = read_sitemap(location)
    except SitemapReadError as error:
        return SitemapReport(None, [], [Problem(str(location), 0, error.rule, str(error))]), origin
    if origin is None:
        first = _FIRST_LOC.search(data)
        if first:
            origin = _origin(first.group(1).decode("utf-8", "replace"))
    return validate_bytes(data, str(location), origin), origin


def validate_set(index: str | Path, origin: str | None = None, seen: dict[int, str] | None = None) -> list[Problem]:
    """Validate a sitemap or an index and every sitemap it lists.

    A local index's entries are resolved as files beside it (by file name),
    a remote index's by fetching them. Locs must share *origin* (default: the
    origin of the index's own URL, or of its first entry). No nested index,
    no loc repeated across the set.
    """
    remote = str(index).startswith(("http://", "https://"))
    if origin is None and remote:
        origin = _origin(str(index))
    report, origin = _load(index, origin)
    problems = list(report.problems)
    seen = {} if seen is None else seen
    if report.kind == "urlset":
        _check_duplicates(report, str(index), seen, problems)
    if report.kind != "sitemapindex":
        return problems
    for loc in report.locs:
        child: str | Path = loc if remote else Path(index).parent / Path(urlsplit(loc).path).name
        if not remote and not Path(child).is_file():
            problems.append(Problem(str(index), 0, "missing", f"{loc} has no file {Path(child).name} beside the index"))
            continue
        child_report, _ = _load(child, origin)
        problems.extend(child_report.problems)
        if child_report.kind == "sitemapindex":
            problems.append(Problem(str(child), 1, "nested-index", "an index may not list another index"))
        _check_duplicates(child_report, str(child), seen, problems)
    return problems


def _check_duplicates(report: SitemapReport, name: str, seen: dict[int, str], problems: list[Problem]) -> None:
    # Keys are 64-bit hashes, not the URLs: a million-URL set stays small in memory.
    # News sitemaps are a separate set: their URLs are listed in the regular ones too.
    prefix = "news " if report.is_news else ""
    for loc in dict.fromkeys(report.locs):
        key = hash(prefix + loc)
        if key in seen and seen[key] != name:
            problems.append(Problem(name, 0, "duplicate", f"{loc} also in {seen[key]}"))
        else:
            seen[key] = name


def _root_name(path: Path) -> str | None:
    """``urlset`` or ``sitemapindex`` from the start of a file, without parsing it."""
    try:
        head = read_sitemap(path)[:4096]
    except SitemapReadError:
        return None
    match = _ROOT.search(head)
    return match.group(1).decode() if match else None


def validate_target(target: str, origin: str | None = None) -> tuple[int, list[Problem]]:
    """Validate a file, a folder or a URL; return (files checked, problems).

    In a folder every ``*.xml``/``*.xml.gz`` file is checked: each index with
    the sitemaps it lists, then the sitemaps no index lists.
    """
    if target.startswith(("http://", "https://")) or not Path(target).is_dir():
        return 1, validate_set(target, origin)
    folder = Path(target)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith((".xml", ".xml.gz")))
    problems: list[Problem] = []
    seen: dict[int, str] = {}
    covered: set[str] = set()
    standalone: list[Path] = []
    for path in files:
        if _root_name(path) == "sitemapindex":
            report, _ = _load(path, origin)
            problems.extend(validate_set(path, origin, seen))
            covered.update(Path(urlsplit(loc).path).name for loc in report.locs)
        else:
            standalone.append(path)
    for path in standalone:
        if path.name not in covered:
            problems.extend(validate_set(path, origin, seen))
    return len(files), problems
