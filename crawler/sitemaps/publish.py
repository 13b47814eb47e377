"""Atomic publishing of a sitemap set into a folder that may hold other files.

A set is written completely into a staging folder inside the output folder
(same filesystem, so renames are atomic), then moved in file by file with
``os.replace``: changed shards first, the index last, stale shards removed
after. At every moment the published index lists only complete files, and a
failure before the swap leaves the previous set untouched. A manifest
remembers which files are ours (never touch anything else in the folder) and
their hashes, so unchanged shards keep their bytes, mtime and index lastmod.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from crawler.protocol import MAX_BYTES
from crawler.regular_file import read_regular_file
from crawler.sitemaps.naming import NEWS_GROUP
from crawler.sitemaps.stylesheet import STYLESHEET
from crawler.sitemaps.writer import ShardFile, render_index

__all__ = ["MANIFEST_NAME", "STAGING_PREFIX", "ForeignFiles", "PublishResult", "SitemapPublisher"]

MANIFEST_NAME = ".sitemap-manifest.json"
STAGING_PREFIX = ".sitemap-staging-"


@dataclass(slots=True)
class PublishResult:
    index_path: Path
    index_url: str
    shards: list[ShardFile]
    written: list[str]  # shard names whose content changed
    unchanged: list[str]
    removed: list[str]
    extras: list[str] = field(default_factory=list)  # files of the set the index does not list (the XSL)


class ForeignFiles(ValueError):
    """Files in the output folder that a publication would replace, and that are not ours."""

    def __init__(self, folder: Path, names: list[str]):
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        super().__init__(
            f"{folder} holds {shown}, not written by sitemap-crawler (no manifest lists it): "
            "move it away, or pass --overwrite-foreign to replace it"
        )
        self.names = names


class SitemapPublisher:
    """Stage, then atomically publish, one sitemap set in *out_dir*.

    *base_url* is the public URL the folder is served at (ends with ``/``);
    index ``<loc>`` values are built from it.
    """

    def __init__(
        self,
        out_dir: Path,
        base_url: str,
        index_name: str = "sitemap.xml",
        *,
        overwrite_foreign: bool = False,
        stylesheet: str | None = None,
        kept_extras: tuple[str, ...] = (),
    ):
        self.out_dir = out_dir
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.index_name = index_name
        self.overwrite_foreign = overwrite_foreign
        self.stylesheet = stylesheet  # the XSL's name beside the set (--stylesheet), published before the index
        # Extras another step writes after this set (add_extra): a publish keeps them, never removes them.
        self.kept_extras = kept_extras

    def foreign(self, names: Iterable[str]) -> list[str]:
        """Those of *names* that exist in the folder but are not ours (no manifest lists them)."""
        manifest = self.read_manifest()
        ours = {*manifest, *self._extras(), self.index_name} if manifest else set()
        return sorted(name for name in set(names) if name not in ours and (self.out_dir / name).exists())

    def foreign_set(self, basename: str) -> list[str]:
        """Files already in the folder that a set named *basename* could replace, and that are not ours."""
        if not self.out_dir.is_dir():
            return []
        names = [p.name for p in self.out_dir.glob(f"{basename}-*.xml*") if p.name.endswith((".xml", ".xml.gz"))]
        return self.foreign([self.index_name, *names])

    def stage(self) -> Path:
        """Create and return a fresh staging folder (removing stale ones)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for old in self.out_dir.glob(STAGING_PREFIX + "*"):
            shutil.rmtree(old, ignore_errors=True)
        return Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.out_dir))

    def withdraw(self) -> None:
        """Remove the published set: the index first (a reader never meets one naming a file
        already gone), the files its manifest names, the manifest last."""
        names = [name for name in self.read_manifest() if _own_file_name(name)]
        for name in [self.index_name, *names, *self._extras(), MANIFEST_NAME]:
            (self.out_dir / name).unlink(missing_ok=True)
        _fsync_dir(self.out_dir)

    def abort(self, staging: Path) -> None:
        shutil.rmtree(staging, ignore_errors=True)

    def add_extra(self, name: str, data: bytes) -> bool:
        """*data* as the file *name* beside the published set, swapped in whole, and kept among the
        set's extras (the manifest says it is ours; :meth:`withdraw` removes it). False when the
        file held *data* already (its mtime kept). :class:`ForeignFiles` when a file of that name
        is there and not ours (without ``overwrite_foreign``)."""
        if not self.overwrite_foreign and (clash := self.foreign([name])):
            raise ForeignFiles(self.out_dir, clash)
        path = self.out_dir / name
        changed = _read(path) != data or path.is_symlink()
        if changed:
            staging = self.stage()
            try:
                _write_synced(staging / name, data)
                os.replace(staging / name, path)
            finally:
                self.abort(staging)
        if name not in self._extras():
            self._set_extras([*self._extras(), name])
        _fsync_dir(self.out_dir)
        return changed

    def remove_extra(self, name: str) -> None:
        """The extra *name* no step writes any more: gone, and no longer the set's (a file of that
        name that is not the set's is left alone)."""
        if name in self._extras():
            (self.out_dir / name).unlink(missing_ok=True)
            self._set_extras([extra for extra in self._extras() if extra != name])

    def _set_extras(self, names: list[str]) -> None:
        """The manifest, swapped in whole with *names* as its extras (nothing without one)."""
        try:
            manifest = json.loads((self.out_dir / MANIFEST_NAME).read_text("utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(manifest, dict):
            manifest["extras"] = names
            temporary = self.out_dir / f"{STAGING_PREFIX}{MANIFEST_NAME}"
            _write_synced(temporary, json.dumps(manifest, indent=1).encode())
            os.replace(temporary, self.out_dir / MANIFEST_NAME)

    def read_manifest(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads((self.out_dir / MANIFEST_NAME).read_text("utf-8"))
            files = data["files"]
            return {str(k): dict(v) for k, v in files.items()} if isinstance(files, dict) else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}

    def listed(self) -> int | None:
        """How many URLs the published set lists (news sitemaps aside: theirs are listed in the
        shards too), or ``None`` when nothing of ours is published. A manifest written before it
        kept the count is counted from its files once."""
        try:
            data = json.loads((self.out_dir / MANIFEST_NAME).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        count = data.get("listed") if isinstance(data, dict) else None
        if isinstance(count, int) and not isinstance(count, bool):
            return count
        names = [name for name in self.read_manifest() if _own_file_name(name) and not self._news(name)]
        return sum(_locs(self.out_dir / name) for name in names) if names else None

    def _extras(self) -> list[str]:
        """The files of the published set its index does not list (the manifest's ``extras``)."""
        try:
            extras = json.loads((self.out_dir / MANIFEST_NAME).read_text("utf-8")).get("extras", [])
        except (OSError, ValueError, AttributeError):
            return []
        return (
            [name for name in extras if isinstance(name, str) and _own_file_name(name)]
            if isinstance(extras, list)
            else []
        )

    def _news(self, name: str) -> bool:
        return name.startswith(f"{self.index_name.removesuffix('.xml')}-{NEWS_GROUP}-")

    def publish(self, staging: Path, shards: list[ShardFile], now: str) -> PublishResult:
        """Swap the staged *shards* in; *now* (W3C datetime) dates changed files."""
        previous = self.read_manifest()
        files: dict[str, dict[str, str]] = {}
        written: list[str] = []
        unchanged: list[str] = []
        for shard in shards:
            old = previous.get(shard.name)
            path = self.out_dir / shard.name  # a symlink planted in its place is replaced, never served
            same = old is not None and old.get("sha256") == shard.sha256 and path.is_file() and not path.is_symlink()
            files[shard.name] = {
                "sha256": shard.sha256,
                "lastmod": old["lastmod"] if same and old and old.get("lastmod") else now,
            }
            (unchanged if same else written).append(shard.name)
        previous_extras = self._extras()
        extras = [self.stylesheet] if self.stylesheet else []
        extras += [name for name in self.kept_extras if name in previous_extras]
        clash = [] if self.overwrite_foreign else self.foreign([*written, *extras, self.index_name])
        if clash:
            raise ForeignFiles(self.out_dir, clash)
        index = render_index([(self.base_url + name, files[name]["lastmod"]) for name in files], self.stylesheet)
        for name in written:
            os.replace(staging / name, self.out_dir / name)
        if self.stylesheet and _read(self.out_dir / self.stylesheet) != STYLESHEET:  # before the index names it
            _write_synced(staging / self.stylesheet, STYLESHEET)
            os.replace(staging / self.stylesheet, self.out_dir / self.stylesheet)
        _fsync_dir(self.out_dir)
        if _read(self.out_dir / self.index_name) != index:  # an unchanged index keeps its file and mtime
            _write_synced(staging / self.index_name, index)
            os.replace(staging / self.index_name, self.out_dir / self.index_name)
        listed = sum(shard.url_count for shard in shards if not self._news(shard.name))
        manifest = {"index": self.index_name, "listed": listed, "files": files, "extras": extras}
        _write_synced(staging / MANIFEST_NAME, json.dumps(manifest, indent=1).encode())
        os.replace(staging / MANIFEST_NAME, self.out_dir / MANIFEST_NAME)
        _fsync_dir(self.out_dir)
        removed = [name for name in previous if name not in files and _own_file_name(name)]
        removed += [name for name in previous_extras if name not in extras and name not in files]
        for name in removed:
            (self.out_dir / name).unlink(missing_ok=True)
        self.abort(staging)
        return PublishResult(
            self.out_dir / self.index_name,
            self.base_url + self.index_name,
            shards,
            written,
            unchanged,
            removed,
            extras,
        )


def _own_file_name(name: str) -> bool:
    # The manifest is a file on disk: never let it name anything outside the folder.
    return bool(name) and Path(name).name == name and not name.startswith(".")


def _locs(path: Path) -> int:
    """The ``<loc>`` elements of a sitemap file, plain or gzip, read in bounded chunks."""
    count, tail = 0, b""
    try:
        with gzip.open(path) if path.name.endswith(".gz") else open(path, "rb") as file:
            while chunk := file.read(1 << 20):
                data = tail + chunk
                count += data.count(b"<loc>")
                tail = data[-4:]  # a tag cut in two is counted once, in the next chunk
    except (OSError, EOFError):
        return count
    return count


def _read(path: Path) -> bytes | None:
    """*path*'s bytes; ``None`` for a symlink, a FIFO or no file (each replaced by a file of ours)."""
    try:
        return read_regular_file(path, MAX_BYTES)  # an index or stylesheet of ours is never larger
    except OSError:
        return None


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
