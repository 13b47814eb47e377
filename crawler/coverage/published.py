"""What the site publishes and what the crawl met, into the coverage table (pure apart from
reading OUT and the crawl report): every listed URL with its section (the shard group of its
file), and every URL the crawl report explains, with its reason.

OUT is one set (its manifest at the top) or one set per host (``OUT/HOST/``). Only the files
the manifest names are read: what the tool published, nothing a folder happens to hold.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from crawler.addresses import HOST_NAME
from crawler.protocol import w3c_instant
from crawler.regular_file import open_regular, read_regular_file
from crawler.sitemaps.publish import MANIFEST_NAME
from crawler.urls import QueryParamFilter, normalize_url, site_root

__all__ = ["SCHEMA", "read_published", "read_report", "set_folders", "url_of"]

SCHEMA = """
CREATE TABLE listed (url TEXT PRIMARY KEY, section TEXT NOT NULL, lastmod REAL) WITHOUT ROWID;
CREATE TABLE met (url TEXT PRIMARY KEY, reason TEXT, status INTEGER) WITHOUT ROWID;
-- what earlier crawls knew of a fetched URL this one never met (crawler.coverage.earlier)
CREATE TABLE earlier (
    url TEXT PRIMARY KEY, last_seen TEXT, outcome TEXT, reason TEXT, listed INTEGER NOT NULL
) WITHOUT ROWID;
"""
_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
MAX_MANIFEST = 64 * 1024 * 1024  # a manifest names at most 50,000 files
#: The parameters the crawl strips by default (utm_*, gclid, ...): a crawler's fetch of
#: /a?utm_source=x is a fetch of /a, as the crawl would have met it.
_TRACKING = QueryParamFilter()


def set_folders(out: Path) -> list[Path]:
    """The set folders of OUT: OUT itself, or each host's folder (a host name, not a symlink);
    ``ValueError`` when none."""
    if (out / MANIFEST_NAME).is_file():
        return [out]
    folders = sorted(
        path.parent for path in out.glob(f"*/{MANIFEST_NAME}")
        if not path.parent.is_symlink() and HOST_NAME.fullmatch(path.parent.name)
    )  # fmt: skip
    if not folders:
        raise ValueError(f"{out}: no sitemap set written by sitemap-crawler here (no {MANIFEST_NAME})")
    return folders


def _files(folder: Path) -> tuple[str, list[str]]:
    """The index stem and the sitemap files the manifest of *folder* names: plain names of files
    in *folder* only (a manifest is a file on disk: it never makes the tool read elsewhere)."""
    path = folder / MANIFEST_NAME
    try:
        manifest = json.loads(read_regular_file(path, MAX_MANIFEST))
    except (OSError, ValueError, RecursionError) as error:
        raise ValueError(f"{path}: not a manifest of sitemap-crawler's ({error})") from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict):
        raise ValueError(f"{path}: not a manifest of sitemap-crawler's (no files)")  # noqa: TRY004 - for the user
    names = [name for name in files if _own_file(name)]
    return str(manifest.get("index") or "sitemap.xml").removesuffix(".xml"), names


def _own_file(name: object) -> bool:
    return (
        isinstance(name, str)
        and Path(name).name == name
        and not name.startswith(".")
        and name.endswith((".xml", ".xml.gz"))
    )


def _section(name: str, stem: str) -> str:
    """The shard group of file *name* of a set whose index is ``STEM.xml``: ``""`` for ``STEM-3.xml``."""
    core = name.removesuffix(".gz").removesuffix(".xml").removeprefix(stem + "-")
    group, _, number = core.rpartition("-")
    return group if number.isdigit() else ""


def _entries(path: Path) -> Iterator[tuple[str, float | None]]:
    """(loc, lastmod in seconds since the epoch or ``None``) of each ``<url>`` of a sitemap file
    (a regular file, never through a symlink); ``ValueError`` naming it when it cannot be read."""
    try:
        with open_regular(path) as raw:
            handle = gzip.GzipFile(fileobj=raw) if raw.read(2) == b"\x1f\x8b" else raw
            raw.seek(0)
            tag = _NS + "url"
            for _, element in etree.iterparse(handle, tag=tag, resolve_entities=False, no_network=True, huge_tree=True):
                loc, lastmod = element.findtext(_NS + "loc"), element.findtext(_NS + "lastmod")
                if loc:
                    moment = w3c_instant(lastmod.strip()) if lastmod else None
                    yield loc.strip(), moment.timestamp() if moment else None
                element.clear()
    except (OSError, EOFError, zlib.error, etree.XMLSyntaxError) as error:
        raise ValueError(f"{path}: not a readable sitemap ({error})") from None


def read_published(out: Path, db: sqlite3.Connection) -> list[str]:
    """Every listed URL of OUT's sets into ``listed``; the sets' origins (``scheme://host[:port]/``)."""
    origins: list[str] = []
    for folder in set_folders(out):
        stem, names = _files(folder)
        for name in names:
            entries = iter(_entries(folder / name))
            first = next(entries, None)
            if first is None:
                continue
            if (origin := site_root(first[0])) not in origins:
                origins.append(origin)
            section = _section(name, stem)
            rows = ((url, section, lastmod) for url, lastmod in chain((first,), entries))
            db.executemany("INSERT OR IGNORE INTO listed VALUES (?, ?, ?)", rows)
    db.commit()
    return origins


def read_report(path: Path, db: sqlite3.Connection) -> int:
    """The crawl report's URLs and reasons into ``met``; how many lines were read."""
    count = 0
    with path.open("rb") as lines:
        for raw in lines:
            try:
                line = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if not isinstance(line, dict) or not isinstance(line.get("url"), str) or line.get("outcome") == "warning":
                continue
            status = line.get("status")
            reason = line.get("reason") if line.get("outcome") != "listed" else None
            db.execute(
                "INSERT OR REPLACE INTO met VALUES (?, ?, ?)",
                (line["url"], reason, status if isinstance(status, int) else None),
            )
            count += 1
    db.commit()
    return count


def url_of(target: str, host: str, origins: dict[str, str], default: str, server: str = "") -> str | None:
    """The absolute, normal URL a log's request target names on this site, or ``None`` for a
    request to another host. *origins* maps each host name to its origin; *default* is the origin
    of a line that names no host. A *server* name (the virtual host that answered) picks a set
    when it is one's host, and is no other host's when not: it is a name of the server (Debian's
    Apache logs the machine's), not one the request asked for."""
    if target.lower().startswith(("http://", "https://")):
        parts = urlsplit(target)
        host = (parts.hostname or "").rstrip(".")  # lower case, without its port
        target = parts._replace(scheme="", netloc="").geturl()
        target = target if target.startswith("/") else "/" + target
    origin = origins.get(host) if host else origins.get(server, default)  # logged hosts come without a port
    if origin is None or not target.startswith("/"):
        return None
    try:
        return normalize_url(origin.rstrip("/") + target, params=_TRACKING)
    except ValueError:
        return None
