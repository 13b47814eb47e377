"""Exact duplicates (pure): pages a search engine takes for one page, so a sitemap lists one.

Two pages are duplicates when they read the same (the content digest: title and visible
text of the page's content, volatile parts blanked) and show the same images. Where they
link matters only for a page made of links (less than :data:`OWN_TEXT` characters of text
outside them): pages of a template that share their text but link elsewhere (a link farm,
a directory) are not duplicates, since a duplicate wrongly called is a page missing from
the sitemap. A page with text of its own is the same page whatever its links say: real
templates put the page's own URL into them (WordPress's ``wp-login.php?redirect_to=``,
pagination and reply links relative to the current URL), so two copies never link alike.

Links are compared as sets, fragments dropped, the two pages themselves left out (the same
bytes at `/` and `/index.html` resolve `href="#top"` to each page itself, and a link to `/`
is a link to itself in one of them only), and so are links that carry the page's own URL
in their query string or extend its query string (``?p=5&replytocom=3`` on ``?p=5``).

:class:`Duplicates` keeps the pages listed so far, two 32-byte keys each: a set of links is
hashed as the XOR of its members' hashes, so "without the other page" is one XOR away and
every comparison is a lookup by key, never a scan. The detail of the ``duplicate``
reason names the URL kept; the audit and the next run read it back with :func:`kept_of`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote

__all__ = ["DUPLICATE_OF", "OWN_TEXT", "Duplicates", "duplicate_detail", "kept_of", "simpler_urls", "twins"]

DUPLICATE_OF = "same content as "
#: Characters of text outside links (spaces not counted) that make a page more than its links:
#: about a sentence.
OWN_TEXT = 100


def _h(value: str) -> int:
    return int.from_bytes(hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).digest())


def _content(digest: str, images: Iterable[str]) -> bytes:
    content = hashlib.blake2b(digest.encode(), digest_size=16)
    for image in sorted(set(images)):
        content.update(b"\0" + image.encode("utf-8", "surrogatepass"))
    return content.digest()


def _targets(url: str, links: Iterable[str]) -> set[str]:
    """Where a page links, fragments dropped, the page itself and links made of its URL left out."""
    page = url.partition("#")[0]
    query = "&" + page.partition("?")[2] + "&" if "?" in page else None
    targets = set()
    for link in links:
        target = link.partition("#")[0]
        if target == page or _made_of(target, page, query):
            continue
        targets.add(target)
    return targets


def _made_of(target: str, page: str, query: str | None) -> bool:
    """Whether *target* is the page's URL in another spelling (a trailing slash), carries it
    in its query string (a login's ``redirect_to``, a share button), or adds to its query."""
    if target.rstrip("/") == page.rstrip("/"):
        return True
    base, mark, rest = target.partition("?")
    if not mark:
        return False
    pairs = rest.split("&")
    joined = f"&{rest}&"
    if query is not None and base == page.partition("?")[0] and all(f"&{p}&" in joined for p in query.split("&") if p):
        return True
    itself = page.rstrip("/")
    return any(unquote(value).partition("#")[0].rstrip("/") == itself for _, _, value in map(_split_pair, pairs))


def _split_pair(pair: str) -> tuple[str, str, str]:
    return pair.partition("=")


def _keys(url: str, digest: str, images: Iterable[str], links: Iterable[str]) -> tuple[bytes, bytes]:
    """A page's keys: its content with its links, and with its links plus itself. A twin that links
    to it (or that it links to) then meets one of them, as does one that does not."""
    content = _content(digest, images)
    mix = 0
    for target in _targets(url, links):
        mix ^= _h(target)
    with_itself = mix ^ _h(url.partition("#")[0])
    return content + mix.to_bytes(16), content + with_itself.to_bytes(16)


class Duplicates:
    """The pages listed so far, by content and links: in an SQLite table at *path* (a scratch
    file, about 100 bytes of disk a page and a bounded page cache in memory, whatever the size
    of the site), or in memory without one."""

    def __init__(self, path: Path | None = None) -> None:
        self._db = sqlite3.connect(path or ":memory:", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")  # scratch: a crash loses nothing worth keeping
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("PRAGMA locking_mode=EXCLUSIVE")  # this process's alone: no file lock per statement
        self._db.execute("CREATE TABLE IF NOT EXISTS kept (key BLOB PRIMARY KEY, url TEXT NOT NULL) WITHOUT ROWID")

    def find(self, url: str, digest: str, images: Sequence[str], links: Sequence[str]) -> str | None:
        """The URL already kept that *url* duplicates, or ``None``."""
        for key in _keys(url, digest, images, links):
            row = self._db.execute("SELECT url FROM kept WHERE key = ?", (key,)).fetchone()
            if row is not None and row[0] != url:
                return str(row[0])
        return None

    def remember(self, url: str, digest: str, images: Sequence[str], links: Sequence[str]) -> None:
        """*url* is the one kept for its content (listed now, or the last run's choice before it comes)."""
        self._db.executemany(
            "INSERT OR IGNORE INTO kept VALUES (?, ?)", ((key, url) for key in _keys(url, digest, images, links))
        )

    def close(self) -> None:
        self._db.close()


def twins(a: tuple[str, str, Sequence[str], Sequence[str]], b: tuple[str, str, Sequence[str], Sequence[str]]) -> bool:
    """Whether pages *a* and *b*, each (url, digest, images, links), are duplicates (compared in full)."""
    (url_a, digest_a, images_a, links_a), (url_b, digest_b, images_b, links_b) = a, b
    if _content(digest_a, images_a) != _content(digest_b, images_b):
        return False
    both = {url_a.partition("#")[0], url_b.partition("#")[0]}
    return _targets(url_a, links_a) - both == _targets(url_b, links_b) - both


def simpler_urls(url: str) -> list[str]:
    """The URLs *url* adds to, of which a copy of it would be the one to keep: its path's parent
    folders, and the URL with its query string or one of its parameters dropped
    (``/post/comment-page-1/`` -> ``/post/``; ``/?p=5&cpage=1`` -> ``/?p=5``)."""
    base, _, query = url.partition("#")[0].partition("?")
    scheme_end = base.find("://") + 3
    path_start = base.find("/", scheme_end)
    if path_start < 0:
        return []
    origin, path = base[:path_start], base[path_start:]
    found = []
    if query:
        found.append(base)
        pairs = query.split("&")
        if len(pairs) > 1:
            found.extend(f"{base}?{'&'.join(pairs[:i] + pairs[i + 1 :])}" for i in range(len(pairs)))
    folders = path.rstrip("/").split("/")[:-1]
    found.extend(origin + "/".join(folders[: i + 1]) + "/" for i in range(len(folders)))
    return found


def duplicate_detail(kept: str) -> str:
    return DUPLICATE_OF + kept


def kept_of(detail: str | None) -> str | None:
    """The URL a ``duplicate`` detail names, or ``None``."""
    if not detail or not detail.startswith(DUPLICATE_OF):
        return None
    return detail.removeprefix(DUPLICATE_OF) or None
