"""``check --expect DIR``: the served set against the folder it was published from (pure).

A file served that DIR lacks is an old one left on the server; a file whose served
bytes differ from DIR's is a cache or CDN serving an old copy. A sitemap robots.txt
names that is none of our set's (a CMS's own) is another tool's, said as such.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

from crawler.addresses import HOST_NAME
from crawler.check.served import read_served
from crawler.sitemaps.publish import MANIFEST_NAME

__all__ = ["beside", "foreign_top", "stale"]


def _index_name(folder: Path) -> str:
    """The index file name of the set published in *folder* (its manifest says), else the default."""
    try:
        name = json.loads((folder / MANIFEST_NAME).read_text("utf-8")).get("index")
    except (OSError, ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name.endswith(".xml") and "/" not in name else "sitemap.xml"


def foreign_top(expect: Path, top: str) -> str | None:
    """Why *top*, a sitemap robots.txt names, is another tool's, or ``None``: *expect* (our published
    folder) has no file of its name, and the name is not one of our set's (``sitemap.xml``,
    ``sitemap-*``, after the folder's index). A CMS's own (WordPress's wp-sitemap.xml) is no old
    copy of ours to delete: it is said once, as such, and its files are not compared."""
    name = unquote(urlsplit(top).path).rsplit("/", 1)[-1]
    stem = _index_name(expect).removesuffix(".xml")
    if not name or (expect / name).is_file() or name == f"{stem}.xml" or name.startswith(f"{stem}-"):
        return None
    return (
        f"robots.txt also names {top}, which {expect} does not hold: another tool's sitemap (a CMS's"
        " or a plugin's own), not an old copy of ours. Search engines read both sets: turn that one off,"
        " or keep only one Sitemap: line"
    )


def stale(expect: Path, url: str, base: str, document: bytes) -> str | None:
    """Why the file served at *url* (below *base*, the folder URL of DIR) is not what *expect*
    holds, or ``None`` when it is."""
    relative = unquote(urlsplit(url[len(base) :]).path)
    local = expect / relative
    # Only a file inside DIR: no "..", no absolute path (an encoded %2F), no symlink out of it.
    inside = not Path(relative).is_absolute() and ".." not in Path(relative).parts
    if not inside or not local.resolve().is_relative_to(expect.resolve()) or not local.is_file():
        return f"{url} is served, but {expect} has no {relative}: an old file left on the server"
    if read_served(url, {}, local.read_bytes()).document != document:
        return f"{url} differs from {local}: a cache or CDN serves an old copy (or the upload failed)"
    return None


def beside(expect: Path | None, url: str) -> Path | None:
    """The folder beside *expect* (``OUT/HOST/``) that holds the set of *url*'s host, if there is one:
    where a file of another host listed by an index of every host was published from."""
    if expect is None:
        return None
    host = (urlsplit(url).hostname or "").lower()
    folder = expect.parent / host
    return folder if HOST_NAME.fullmatch(host) and folder.is_dir() else None
