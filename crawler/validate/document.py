"""One sitemap or index document, checked in a single streaming pass (pure).

expat parses in C and tells the real line and column of every element; the
checker holds only the entry being read, so memory stays flat whatever a
file holds, and entries are handed on while the file is still being read.
DTDs and entity declarations are refused before parsing, never expanded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from xml.parsers import expat

from crawler.protocol import (
    MAX_BYTES,
    MAX_LOC_LENGTH,
    MAX_URLS,
    SITEMAP_NS,
    is_schema_datetime,
    is_w3c_datetime,
)
from crawler.validate.extensions import EntryMedia, FileState, check_extension
from crawler.validate.findings import Finding
from crawler.validate.hosts import is_dev_origin
from crawler.validate.lastmods import SAME_LASTMOD_SHARE, LastmodTally, in_future
from crawler.validate.schema import INDEX_ENTRY, URL, Node, check_sequence

__all__ = ["Checked", "DocumentCheck", "Entry", "SetContext", "check_document"]

_CHUNK = 1 << 20
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_DECLARED_ENCODING = re.compile(rb"""^(?:\xef\xbb\xbf)?<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_ABSOLUTE = re.compile(r"https?://[^/?#\s]+", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s")
#: The shortest loc the schema allows (``tLoc`` minLength).
MIN_LOC_LENGTH = 12


@dataclass(slots=True, frozen=True)
class Entry:
    """One ``<url>`` or index ``<sitemap>`` as read, with its position."""

    loc: str
    lastmod: str | None
    file: str
    line: int
    col: int
    kind: str  # "url" or "sitemap"
    media: EntryMedia | None = None


@dataclass(slots=True)
class SetContext:
    """What the files of one set share: the origin and the locs seen.

    *declared*: the origin was given (``--origin``, the index's own URL), not
    guessed from the first loc. *aliases*: other spellings of it (a staging
    copy's, whose own sitemap names it), their locs its URLs; *crossed*: hosts
    whose robots.txt names the set (cross-submission), their locs their own.
    Seen locs are 64-bit hashes: a million-URL set stays small in memory.
    """

    origin: str | None = None
    declared: bool = False
    aliases: frozenset[str] = frozenset()
    crossed: frozenset[str] = frozenset()
    same_lastmod_share: int = SAME_LASTMOD_SHARE  # percent
    seen: dict[int, str] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime.now(UTC))


class _Stop(Exception):
    """The root says this is no sitemap: nothing more to read."""


class DocumentCheck:
    """Checks one document; iterate :meth:`run` for its entries and findings."""

    def __init__(self, name: str, context: SetContext) -> None:
        self.name = name
        self.context = context
        self.kind: str | None = None
        self.entries = 0
        self._out: list[Entry | Finding] = []
        self._stack: list[Node] = []
        self._depth = 0
        self._expected = "url"
        self._root_at = (1, 1)
        self._state = FileState()
        self._lastmods = LastmodTally()
        self._here: set[int] = set()  # this file's loc keys (at most 50,000)
        self._parser = expat.ParserCreate(namespace_separator=" ")
        self._folder = _folder_of(name)

    def problem(self, node: Node, rule: str, message: str) -> None:
        self._out.append(Finding(self.name, node.line, node.col, rule, message))

    def run(self, data: bytes) -> Iterator[Entry | Finding]:
        refused = _refused(data)
        if refused:
            yield Finding(self.name, 1, 1, *refused)
            return
        parser = self._parser
        parser.buffer_text = True
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        parser.StartDoctypeDeclHandler = self._refuse
        parser.EntityDeclHandler = self._refuse
        try:
            for offset in range(0, len(data), _CHUNK):
                parser.Parse(data[offset : offset + _CHUNK], False)
                yield from self._out
                self._out.clear()
            parser.Parse(b"", True)
        except _Stop:
            yield from self._out
            return
        except expat.ExpatError as error:
            yield from self._out
            message = expat.ErrorString(error.code) or str(error)
            yield Finding(self.name, error.lineno, error.offset + 1, "xml", f"not well-formed XML: {message}")
            return
        yield from self._out
        yield from self._file_findings()

    def _refuse(self, *args: object) -> None:
        raise _Stop  # never reached: refused() saw the declaration first

    def _start(self, tag: str, attrs: dict[str, str]) -> None:
        self._depth += 1
        ns, _, name = tag.rpartition(" ")
        node = Node(ns, name, attrs, self._parser.CurrentLineNumber, self._parser.CurrentColumnNumber + 1)
        if self._depth == 1:
            self._root(node)
        elif self._stack:
            self._stack[-1].children.append(node)
            self._stack.append(node)
        else:
            self._stack.append(node)

    def _text(self, data: str) -> None:
        if self._stack:
            self._stack[-1].text += data

    def _end(self, tag: str) -> None:
        depth = self._depth
        self._depth -= 1
        if depth >= 2:
            node = self._stack.pop()
            if depth == 2:
                self._entry(node)

    def _root(self, node: Node) -> None:
        if node.ns != SITEMAP_NS:
            found = repr(node.ns) if node.ns else "none"
            self.problem(node, "namespace", f"root element must be in namespace {SITEMAP_NS}, found {found}")
            raise _Stop
        if node.name not in ("urlset", "sitemapindex"):
            self.problem(node, "root", f"root element must be urlset or sitemapindex, not {node.name}")
            raise _Stop
        self.kind = node.name
        self._expected = "url" if node.name == "urlset" else "sitemap"
        self._root_at = (node.line, node.col)

    def _entry(self, node: Node) -> None:
        kind, expected = self.kind, self._expected
        if node.ns == SITEMAP_NS and node.name == expected:
            self._check_entry(node)
        elif node.ns in (SITEMAP_NS, ""):
            self.problem(node, "element", f"<{node.name}> not allowed in <{kind}>, expected <{expected}>")
        elif self.entries:
            message = f"<{node.name}> of {node.ns} after a <{expected}>: the schema allows it only before the first"
            self.problem(node, "order", message)
        elif self._state.once("top " + node.ns):
            self.problem(node, "ignored", f"<{node.name}> of {node.ns} directly in <{kind}> is ignored")

    def _check_entry(self, node: Node) -> None:
        start = len(self._out)
        self._check_entry_parts(node)
        if len(self._out) - start > 1:  # one entry's findings in the order of the file
            self._out[start:] = sorted(self._out[start:], key=_position)

    def _check_entry_parts(self, node: Node) -> None:
        self.entries += 1
        if self.entries == MAX_URLS + 1:
            self.problem(node, "count", f"more than {MAX_URLS} entries")
        is_url = self.kind == "urlset"
        found = check_sequence(node, URL if is_url else INDEX_ENTRY, "loc", self.problem)
        media = EntryMedia() if is_url else None
        extension_seen = False
        for child in node.children:
            if child.ns == SITEMAP_NS:
                if extension_seen:
                    message = f"<{child.name}> after an extension element: the sitemaps.org elements come first"
                    self.problem(child, "order", message)
            elif not child.ns:
                self.problem(child, "element", f"<{child.name}> without a namespace is not allowed in <{node.name}>")
            else:
                extension_seen = True
                if media is not None:
                    check_extension(child, media, self._state, self.problem)
                elif self._state.once("index extension"):
                    self.problem(child, "ignored", f"<{child.name}> of {child.ns} in an index is ignored")
        locs = found.get("loc")
        lastmod = self._check_values(found, locs[0].value if locs else None)
        if locs and self._check_loc(locs[0], media):
            loc = locs[0]
            self._out.append(Entry(loc.value, lastmod, self.name, loc.line, loc.col, node.name, media))

    def _check_values(self, found: dict[str, list[Node]], loc: str | None) -> str | None:
        for node in found.get("changefreq", ())[:1]:
            if node.value not in _CHANGEFREQ:
                self.problem(node, "changefreq", f"invalid value {node.value!r}")
        for node in found.get("priority", ())[:1]:
            if not _is_priority(node.value):
                self.problem(node, "priority", f"must be 0.0 to 1.0, not {node.value!r}")
        nodes = found.get("lastmod")
        if not nodes:
            return None
        node = nodes[0]
        text = node.value
        if not is_schema_datetime(text):
            if is_w3c_datetime(text):
                message = f"{text!r}: the schema wants a full date, and seconds whenever a time is given"
            else:
                message = f"not a W3C datetime: {text!r}"
            self.problem(node, "lastmod", message)
            return None
        future = in_future(text, self.context.now, (self.name, node.line, node.col), loc)
        if future is not None:
            self._out.append(future)
        self._lastmods.add(text, node.line, node.col)
        return text

    def _check_loc(self, node: Node, media: EntryMedia | None) -> bool:
        """Report what is wrong with a loc; True when it can stand as an entry."""
        loc = node.value
        match = _ABSOLUTE.match(loc)
        if match is None:
            self.problem(node, "loc", f"not an absolute http(s) URL: {loc!r}")
            return False
        if not MIN_LOC_LENGTH <= len(loc) <= MAX_LOC_LENGTH:
            self.problem(node, "loc", f"{len(loc)} characters: the schema allows {MIN_LOC_LENGTH} to {MAX_LOC_LENGTH}")
        if _WHITESPACE.search(loc) or not loc.isascii():
            self.problem(node, "loc", f"must be percent-encoded, without spaces: {loc!r}")
        context = self.context
        origin = match.group(0).lower()
        if context.origin is None:
            context.origin = origin
        elif origin in context.aliases:
            loc = context.origin + loc[len(origin) :]  # the same page: a duplicate either way it is spelled
        elif origin != context.origin and origin not in context.crossed:
            self.problem(node, "host", f"{loc} is not on {context.origin}")
        elif not context.declared and is_dev_origin(origin) and self._state.once("dev-host"):
            self.problem(node, "dev-host", f"{loc} is on a development host (said once per file)")
        folder = self._folder
        here = origin + loc[len(match.group(0)) :]  # the origin lower-cased, as the folder's
        outside = folder and self.kind == "urlset" and here.startswith(origin) and not here.startswith(folder)
        if outside and self._state.once("outside-folder"):
            self.problem(
                node,
                "outside-folder",
                f"{loc} is outside {folder}, the sitemap's own folder: search engines may ignore it unless"
                " robots.txt names this sitemap (move the sitemap to the site root; said once per file)",
            )
        flavour = "sitemap " if media is None else "news " if media.news else "video " if media.videos else ""
        key = hash(flavour + loc)
        if key in self._here:
            self.problem(node, "duplicate", f"{loc} listed more than once in this file")
        else:
            self._here.add(key)
            first = context.seen.setdefault(key, self.name)
            if first != self.name:
                self.problem(node, "duplicate", f"{loc} also in {first}")
        return True

    def _file_findings(self) -> Iterator[Finding]:
        line, col = self._root_at
        if self.kind is not None and self.entries == 0:
            message = f"<{self.kind}> without <{self._expected}>: the schema wants at least one"
            if self.kind == "urlset":
                message += " (normal for a news sitemap between articles)"
            yield Finding(self.name, line, col, "empty", message)
        same = self._lastmods.same(self.name, self.entries, self.context.same_lastmod_share)
        if self.kind == "urlset" and same is not None:
            yield same


def _folder_of(name: str) -> str | None:
    """The folder URL a sitemap served from *name* covers (sitemaps.org: its URLs must be at or
    below it), when it is a sub-folder of a site; ``None`` for the root or a local file."""
    match = _ABSOLUTE.match(name)
    if match is None:
        return None
    folder = name.split("?", 1)[0].rsplit("/", 1)[0] + "/"
    if len(folder) <= len(match.group(0)) + 1:
        return None
    return match.group(0).lower() + folder[len(match.group(0)) :]


def _position(item: Entry | Finding) -> tuple[int, int, int]:
    return (item.line, item.col, isinstance(item, Entry))


def _refused(data: bytes) -> tuple[str, str] | None:
    if len(data) > MAX_BYTES:
        return "size", f"larger than {MAX_BYTES} bytes uncompressed"
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:  # anywhere: a DTD after 4 KB is one too
        return "doctype", "DTDs and entity declarations are not allowed in sitemaps"
    declared = _DECLARED_ENCODING.match(data[:200])
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or (declared and declared.group(1).lower() not in (b"utf-8", b"utf8")):
        return "encoding", "sitemaps must be UTF-8"
    return None


def _is_priority(text: str) -> bool:
    try:
        return 0.0 <= float(text) <= 1.0 and text[0].isdigit()
    except (ValueError, IndexError):
        return False


@dataclass(slots=True)
class Checked:
    """A whole document checked at once (tests, small files)."""

    kind: str | None
    entries: list[Entry]
    findings: list[Finding]

    @property
    def locs(self) -> list[str]:
        return [entry.loc for entry in self.entries]


def check_document(data: bytes, name: str, origin: str | None = None) -> Checked:
    """Check one uncompressed document; *origin* is the one every loc must use."""
    check = DocumentCheck(name, SetContext(origin, origin is not None))
    entries: list[Entry] = []
    findings: list[Finding] = []
    for item in check.run(data):
        if isinstance(item, Entry):
            entries.append(item)
        else:
            findings.append(item)
    return Checked(check.kind, entries, findings)
