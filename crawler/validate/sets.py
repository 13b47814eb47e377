"""A whole sitemap set: an index with what it lists, a folder tree, one file.

Iterating a :class:`SitemapSet` yields every URL entry of the set and every
finding, file after file, while the files are read: the staging audit and
``validate`` read sets through it alike. The files share one origin and
one record of locs seen (for duplicates); an index may not list an index.

A local index's entries are files under the site root: the loc's URL path
below the folder served as ``/`` (``--root``, or the nearest folder above
the index under which its entries exist), else a file of that name beside
the index. A remote index's entries are fetched, on its own origin only
(a redirect to another origin is not followed: the entry cannot be read).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from crawler.addresses import Pinned
from crawler.urls import origin_of
from crawler.validate.crossed import hosts_index_findings, hosts_indexes
from crawler.validate.document import DocumentCheck, Entry, SetContext
from crawler.validate.findings import Finding
from crawler.validate.lastmods import SAME_LASTMOD_SHARE
from crawler.validate.read import SitemapReadError, read_head, read_sitemap

__all__ = ["MAX_FAILURES_IN_A_ROW", "SetOptions", "SitemapSet", "check_set"]

#: A remote index whose server failed this many times in a row is not read further.
MAX_FAILURES_IN_A_ROW = 3
#: How far above an index its site root is looked for.
MAX_ROOT_LEVELS = 8
_HOST_NAME = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)+")
_ROOT = re.compile(rb"<(?:[A-Za-z0-9_.-]+:)?(urlset|sitemapindex)[\s>/]")


@dataclass(frozen=True, slots=True)
class SetOptions:
    origin: str | None = None  # scheme://host[:port] every loc must use (default: inferred)
    root: Path | None = None  # the folder served as the site root (local indexes)
    follow: bool = True  # open what an index lists
    timeout: float = 30.0  # seconds per remote file, in all
    #: (origin ``scheme://host[:port]/``, headers): sent to that origin only (a staging site's login).
    credentials: Mapping[str, dict[str, str]] | None = None  # origin (scheme://host[:port]/) -> headers sent there only
    #: Where an index entry is fetched from (a staging copy of production's URLs), default: its loc.
    locate: Callable[[str], str] | None = None
    #: The User-Agent remote files are fetched with (the ``USER_AGENT`` setting); a remote set needs it.
    user_agent: str | None = None
    #: Other origins (``scheme://host[:port]``) whose locs are *origin*'s URLs: a staging copy's own.
    aliases: tuple[str, ...] = ()
    #: Other origins whose robots.txt names the set (cross-submission): their locs are their own.
    crossed: tuple[str, ...] = ()
    #: ``same-lastmod``: one lastmod on this share of a file's URLs (percent) or more.
    same_lastmod_share: int = SAME_LASTMOD_SHARE
    #: ``--resolve`` rules: names connected to these addresses (crawler/addresses.py).
    pinned: tuple[Pinned, ...] = ()


def _is_remote(location: str) -> bool:
    return location.startswith(("http://", "https://"))


class SitemapSet:
    """The entries and findings of a sitemap set; counts are final after iterating."""

    def __init__(self, target: str | Path, options: SetOptions | None = None) -> None:
        self.target = str(target)
        self.options = options or SetOptions()
        self.files = 0
        self.urls = 0
        self.skipped = 0  # XML files in a folder that are no sitemaps (feeds, configs)
        origin = self.options.origin
        if origin is None and _is_remote(self.target):
            origin = origin_of(self.target)
        self._context = SetContext(
            origin.lower() if origin else None,
            origin is not None,
            aliases=frozenset(alias.lower().rstrip("/") for alias in self.options.aliases),
            crossed=frozenset(other.lower().rstrip("/") for other in self.options.crossed),
            same_lastmod_share=self.options.same_lastmod_share,
        )
        self._kinds: dict[str, str | None] = {}  # file key -> root element, once checked
        self._unreadable = False

    def __iter__(self) -> Iterator[Entry | Finding]:
        if _is_remote(self.target) or not Path(self.target).is_dir():
            yield from self._file(self.target, None, nested=False)
            return
        folder = Path(self.target)
        hosts = [] if self.options.origin is not None else _host_folders(folder)
        indexes, urlsets = self._sitemaps_in(folder, skip={path.name for path in hosts})
        for path in indexes + urlsets:
            yield from self._file(str(path), folder, nested=False)
        origins: dict[str, str] = {}  # host folder -> the origin its set lists
        crossed: list[Path] = []  # indexes of every host's sitemaps (--index-host)
        for host in hosts:  # a crawl of several hosts: a set per host, each on its own origin
            self._context = replace(self._context, origin=None, seen={})
            indexes, urlsets = self._sitemaps_in(host)
            crossed += [path for path in indexes if path.name in hosts_indexes(host)]
            for path in [path for path in indexes if path not in crossed] + urlsets:
                yield from self._file(str(path), host, nested=False)
            origin = self._context.origin
            if origin is not None and urlsplit(origin).hostname != host.name:
                yield Finding(str(host), 1, 1, "host", f"the set in the folder of {host.name} lists URLs of {origin}")
            elif origin is not None:
                origins[host.name] = origin
        for path in crossed:
            yield from self._hosts_index(path, origins)
        if self.files == 0:
            other = f" ({self.skipped} other XML file{'s' if self.skipped != 1 else ''} skipped)"
            yield Finding(self.target, 1, 1, "no-sitemaps", f"no sitemap in {folder}" + other)

    def _hosts_index(self, path: Path, origins: dict[str, str]) -> Iterator[Finding]:
        self.files += 1
        yield from hosts_index_findings(path, origins, self.options.timeout)

    def _sitemaps_in(
        self, folder: Path, skip: set[str] | frozenset[str] = frozenset()
    ) -> tuple[list[Path], list[Path]]:
        """Indexes and sitemaps in a folder tree (hidden folders and the *skip* ones at its top left
        out), in walk order."""
        indexes: list[Path] = []
        urlsets: list[Path] = []
        for top, folders, names in os.walk(folder):
            left_out = skip if top == str(folder) else frozenset()
            folders[:] = sorted(name for name in folders if not name.startswith(".") and name not in left_out)
            for name in sorted(names):
                path = Path(top, name)
                if not name.endswith((".xml", ".xml.gz")) or not path.is_file():
                    continue
                head = read_head(path)
                match = _ROOT.search(head) if head is not None else None
                if head is not None and match is None:
                    self.skipped += 1
                elif match is not None and match.group(1) == b"sitemapindex":
                    indexes.append(path)
                else:
                    urlsets.append(path)  # unreadable ones too: their error is worth seeing
        return indexes, urlsets

    def _file(self, location: str, top: Path | None, nested: bool) -> Iterator[Entry | Finding]:
        key = location if _is_remote(location) else str(Path(location).resolve())
        if key in self._kinds:
            return
        self._kinds[key] = None
        self.files += 1
        self._unreadable = False
        credentials = self.options.credentials
        headers = None
        if credentials is not None and _is_remote(location):
            headers = credentials.get(origin_of(location) + "/")
        try:
            data = read_sitemap(
                location, self.options.timeout, headers, user_agent=self.options.user_agent, pinned=self.options.pinned
            )
        except SitemapReadError as error:
            self._unreadable = error.rule == "read"
            yield Finding(location, 1, 1, error.rule, str(error))
            return
        check = DocumentCheck(location, self._context)
        children: list[Entry] = []
        for item in check.run(data):
            if not isinstance(item, Entry):
                yield item
            elif item.kind == "url":
                self.urls += 1
                yield item
            else:
                children.append(item)
        del data
        self._kinds[key] = check.kind
        if check.kind == "sitemapindex" and self.options.follow and not nested:
            yield from self._children(location, children, top)

    def _children(self, index: str, entries: list[Entry], top: Path | None) -> Iterator[Entry | Finding]:
        if _is_remote(index):
            yield from self._remote_children(index, entries)
            return
        resolver = _Resolver(Path(index), entries, self.options.root, top)
        for entry in entries:
            path, why = resolver.resolve(entry.loc)
            if path is None:
                yield Finding(entry.file, entry.line, entry.col, "missing", f"{entry.loc}: {why}")
                continue
            key = str(path.resolve())
            if key == str(Path(index).resolve()):
                yield Finding(entry.file, entry.line, entry.col, "nested-index", f"{entry.loc} is this index itself")
                continue
            yield from self._child(str(path), key, entry, top)

    def _remote_children(self, index: str, entries: list[Entry]) -> Iterator[Entry | Finding]:
        # Only the set's origin and the index's own are fetched: never a local path, never another site.
        allowed = {self._context.origin, origin_of(index), *self._context.aliases, *self._context.crossed}
        locate = self.options.locate
        failures = 0
        for number, entry in enumerate(entries):
            url = locate(entry.loc) if locate else entry.loc
            if origin_of(url) not in allowed:
                continue  # reported as "host" already
            yield from self._child(url, url, entry, None)
            failures = failures + 1 if self._unreadable else 0
            rest = len(entries) - number - 1
            if failures >= MAX_FAILURES_IN_A_ROW and rest:
                message = f"{MAX_FAILURES_IN_A_ROW} sitemaps in a row could not be read; {rest} more not tried"
                yield Finding(entry.file, entry.line, entry.col, "missing", message)
                return

    def _child(self, location: str, key: str, entry: Entry, top: Path | None) -> Iterator[Entry | Finding]:
        self._unreadable = False
        yield from self._file(location, top, nested=True)
        if self._kinds.get(key) == "sitemapindex":
            message = f"{entry.loc} is an index: an index may not list another index"
            yield Finding(entry.file, entry.line, entry.col, "nested-index", message)


def _host_folders(folder: Path) -> list[Path]:
    """The subfolders of *folder* named after a host that hold a sitemap index at their top: the
    sets of a crawl of several hosts (``OUT/HOST/``), each checked on an origin of its own."""
    found = []
    for path in sorted(folder.iterdir()):
        if _HOST_NAME.fullmatch(path.name) and path.is_dir() and not path.is_symlink():
            heads = (read_head(each) for each in path.glob("*.xml*") if each.is_file())
            if any(head is not None and b"<sitemapindex" in head for head in heads):
                found.append(path)
    return found


def _url_path(loc: str) -> list[str] | None:
    """The segments of a loc's path, or ``None`` when no file can stand for it."""
    parts = urlsplit(loc)
    segments = [unquote(segment) for segment in parts.path.split("/") if segment]
    if parts.query or not segments or parts.path.endswith("/"):
        return None
    if any(segment in (".", "..") or "\\" in segment or "/" in segment or "\x00" in segment for segment in segments):
        return None
    return segments


class _Resolver:
    """Finds the local file of an index entry below the site root."""

    def __init__(self, index: Path, entries: list[Entry], root: Path | None, top: Path | None) -> None:
        self.index = index
        self.fallback = root is None
        self.root = root if root is not None else self._guess_root(index, entries, top)

    @staticmethod
    def _guess_root(index: Path, entries: list[Entry], top: Path | None) -> Path:
        candidates = [index.parent, *index.parent.parents][:MAX_ROOT_LEVELS]
        if top is not None and top in candidates:
            candidates = candidates[: candidates.index(top) + 1]
        sample = [segments for entry in entries[:5] if (segments := _url_path(entry.loc))]
        best, hits = index.parent, 0
        for candidate in candidates:
            below = index.parent.relative_to(candidate).parts  # the index's folder, as the URL path has it
            found = sum(
                tuple(segments[: len(below)]) == below and candidate.joinpath(*segments).is_file()
                for segments in sample
            )
            if found > hits:
                best, hits = candidate, found
        return best

    def resolve(self, loc: str) -> tuple[Path | None, str]:
        segments = _url_path(loc)
        if segments is None:
            return None, "no file can stand for this URL (a query or a folder): validate the live URL instead"
        path = self.root.joinpath(*segments)
        if self.fallback and self.index.parent.is_relative_to(self.root):
            # A guessed root: an entry outside the index's own folder (in the URL space) is no file of
            # this set, however the folders above happen to be filled (/etc/passwd).
            below = self.index.parent.relative_to(self.root).parts
            if tuple(segments[: len(below)]) != below:
                return None, f"no file for it below the index's folder {self.index.parent} (--root names a site root)"
        if path.is_file() and path.resolve().is_relative_to(self.root.resolve()):
            return path, ""
        if self.fallback:
            beside = self.index.parent / segments[-1]
            inside = beside.resolve().is_relative_to(self.index.parent.resolve())
            if beside.is_file() and inside and beside.resolve() != self.index.resolve():
                return beside, ""
        return None, f"no file {path} (site root {self.root}; --root names another)"


def check_set(target: str | Path, origin: str | None = None, follow: bool = True) -> list[Finding]:
    """Every finding of a set (for tests and small sets)."""
    return [item for item in SitemapSet(target, SetOptions(origin=origin, follow=follow)) if isinstance(item, Finding)]
