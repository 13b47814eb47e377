"""An index of every host's sitemaps (``--index-host``) in an output folder of several hosts (pure).

It sits in the folder of one host, ``OUT/HOST/``, and lists the files of every host's set on
their own hosts. ``validate OUT`` reads it apart from that host's own set: each entry must be
a file the index of its host's set lists. Whether search engines take it (each other host's
robots.txt naming it) is ``check``'s to see.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from crawler.sitemaps.publish import MANIFEST_NAME
from crawler.urls import origin_of
from crawler.validate.document import DocumentCheck, Entry, SetContext
from crawler.validate.findings import Finding
from crawler.validate.read import SitemapReadError, read_head, read_sitemap

__all__ = ["HOSTS_INDEX_END", "hosts_index_findings", "hosts_indexes"]

#: How the file of an index of every host's sitemaps ends (crawler.sitemaps.hosts.hosts_index_name).
HOSTS_INDEX_END = "-hosts.xml"
_INDEX_ROOT = re.compile(rb"<(?:[A-Za-z0-9_.-]+:)?sitemapindex[\s>/]")


def _manifest(folder: Path) -> dict[str, object]:
    try:
        data = json.loads((folder / MANIFEST_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def hosts_indexes(folder: Path) -> set[str]:
    """The indexes of every host's sitemaps in a host's *folder*: the extras its manifest names so
    (any other index there is the host's own set's)."""
    extras = _manifest(folder).get("extras")
    names = extras if isinstance(extras, list) else []
    return {name for name in names if isinstance(name, str) and name.endswith(HOSTS_INDEX_END)}


def _own_entries(folder: Path, origin: str) -> set[str]:
    """The locs the index of the set in *folder* (its manifest's, else ``sitemap.xml``) lists."""
    name = _manifest(folder).get("index")
    index = folder / (name if isinstance(name, str) and "/" not in name else "sitemap.xml")
    try:
        data = read_sitemap(str(index))
    except SitemapReadError:
        return set()
    entries = DocumentCheck(str(index), SetContext(origin, True)).run(data)
    return {item.loc for item in entries if isinstance(item, Entry)}


def hosts_index_findings(path: Path, origins: dict[str, str], timeout: float = 30.0) -> Iterator[Finding]:
    """What is wrong with the index at *path*; *origins*: each host folder beside it -> the origin
    its set lists."""
    try:
        data = read_sitemap(str(path), timeout)
    except SitemapReadError as error:
        yield Finding(str(path), 1, 1, error.rule, str(error))
        return
    folders = {origin: host for host, origin in origins.items()}
    own: dict[str, set[str]] = {}
    check = DocumentCheck(str(path), SetContext(origins.get(path.parent.name), True))
    for item in check.run(data):
        if isinstance(item, Finding):
            if item.rule != "host":  # each entry's host is judged below, against the sets beside
                yield item
            continue
        host = folders.get(origin_of(item.loc))
        where = (item.file, item.line, item.col)
        if host is None:
            yield Finding(*where, "host", f"{item.loc} is on no host with a set here")
            continue
        if host not in own:
            own[host] = _own_entries(path.parent.parent / host, origins[host])
        file = path.parent.parent / host / urlsplit(item.loc).path.rpartition("/")[2]
        if item.loc in own[host]:
            continue
        if file.is_file() and _INDEX_ROOT.search(read_head(file) or b""):
            yield Finding(*where, "nested-index", f"{item.loc} is an index: an index may not list another index")
        else:
            yield Finding(*where, "missing", f"{item.loc}: not a file of {host}'s set (its index lists no such)")
    if check.kind != "sitemapindex":
        yield Finding(str(path), 1, 1, "root", "an index of every host's sitemaps must be a sitemapindex")
