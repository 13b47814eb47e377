"""Validation of a whole sitemap set: an index with what it lists, or a folder.

Locs must share one origin across the set, an index may not list another
index, and no loc may stand in two files (news sitemaps are a set of their
own: their URLs are listed in the regular sitemaps too).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from crawler.validate.protocol import Problem, SitemapReport, validate_bytes
from crawler.validate.read import SitemapReadError, read_sitemap

__all__ = ["validate_set", "validate_target"]

#: A remote index whose server failed this many times in a row is not read further.
MAX_FAILURES_IN_A_ROW = 3
_ROOT = re.compile(rb"<(?:[A-Za-z0-9_]+:)?(urlset|sitemapindex)[\s>/]")
_FIRST_LOC = re.compile(rb"<(?:[A-Za-z0-9_]+:)?loc>\s*([^<\s]+)")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _load(location: str | Path, origin: str | None, timeout: float = 30.0) -> tuple[SitemapReport, str | None]:
    """The report of one file, and the origin its locs were held to (when
    none is given, the origin of its first loc: all must share it)."""
    try:
        data = read_sitemap(location, timeout)
    except SitemapReadError as error:
        return SitemapReport(None, [], [Problem(str(location), 0, error.rule, str(error))]), origin
    if origin is None:
        first = _FIRST_LOC.search(data)
        if first:
            origin = _origin(first.group(1).decode("utf-8", "replace"))
    return validate_bytes(data, str(location), origin), origin


def validate_set(
    index: str | Path, origin: str | None = None, seen: dict[int, str] | None = None, timeout: float = 30.0
) -> list[Problem]:
    """Validate a sitemap or an index and every sitemap it lists.

    A local index's entries are resolved as files beside it (by file name),
    a remote index's by fetching them. Locs must share *origin* (default: the
    origin of the index's own URL, or of its first entry). No nested index,
    no loc repeated across the set.
    """
    remote = str(index).startswith(("http://", "https://"))
    if origin is None and remote:
        origin = _origin(str(index))
    report, origin = _load(index, origin, timeout)
    problems = list(report.problems)
    seen = {} if seen is None else seen
    if report.kind == "urlset":
        _check_duplicates(report, str(index), seen, problems)
    if report.kind != "sitemapindex":
        return problems
    failures = 0
    for number, loc in enumerate(report.locs):
        child: str | Path = loc if remote else Path(index).parent / Path(urlsplit(loc).path).name
        if remote and (
            not loc.lower().startswith(("http://", "https://")) or _origin(loc).lower() != (origin or "").lower()
        ):
            # Only the index's own origin is fetched: never a local path, never another site.
            problems.append(Problem(str(index), 0, "host", f"{loc} is not on {origin}; not fetched"))
            continue
        if not remote and not Path(child).is_file():
            problems.append(Problem(str(index), 0, "missing", f"{loc} has no file {Path(child).name} beside the index"))
            continue
        child_report, _ = _load(child, origin, timeout)
        problems.extend(child_report.problems)
        unreadable = child_report.kind is None and any(p.rule == "read" for p in child_report.problems)
        failures = failures + 1 if remote and unreadable else 0
        if failures >= MAX_FAILURES_IN_A_ROW:
            rest = len(report.locs) - number - 1
            if rest:
                message = f"{MAX_FAILURES_IN_A_ROW} sitemaps in a row could not be read; {rest} more not tried"
                problems.append(Problem(str(index), 0, "read", message))
            break
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


def validate_target(target: str, origin: str | None = None, timeout: float = 30.0) -> tuple[int, list[Problem]]:
    """Validate a file, a folder or a URL; return (files checked, problems).

    In a folder every ``*.xml``/``*.xml.gz`` file is checked: each index with
    the sitemaps it lists, then the sitemaps no index lists.
    """
    if target.startswith(("http://", "https://")) or not Path(target).is_dir():
        return 1, validate_set(target, origin, timeout=timeout)
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
