"""Mirroring a published sitemap set to S3-compatible object storage: the plan (pure).

The set is published into the local folder first (:mod:`crawler.sitemaps.publish`), then
mirrored from there. Object storage has no rename, only a PUT that replaces one object
atomically, so consistency comes from the order of the writes:

1. the *claim*: the remote manifest (an object under the prefix) is rewritten to list every
   name this run may write, the changed ones with no checksum (their content is unknown until
   their PUT is confirmed), so a run killed after any upload leaves no object that the next run
   does not know as ours;
2. the changed shards (a shard whose checksum in the manifest equals the local one, and whose
   object exists, is skipped);
3. the index, last: a reader sees the old index with all its shards, or the new one with all of
   its shards, never an index naming a missing shard;
4. the shards no index names any more, deleted: only those the manifest lists (a foreign object
   under the prefix is never deleted, nor overwritten without ``--overwrite-foreign``);
5. the final manifest: exactly the new set, with its checksums.

Interrupted anywhere, the remote set stays complete, and the next run converges: what it
does not know to be up to date (no checksum) is uploaded again. No boto3 here
(:mod:`crawler.services.s3` talks to the service), no Scrapy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from crawler.failures import ConfigError

__all__ = [
    "MANIFEST_NAME",
    "ForeignObjects",
    "Interrupted",
    "MirrorPlan",
    "RemotePublish",
    "S3Location",
    "Upload",
    "headers_for",
    "manifest_bytes",
    "parse_s3_url",
    "plan_mirror",
    "read_manifest",
]

#: The remote manifest, under the prefix: which objects are ours, and their checksums.
MANIFEST_NAME = ".sitemap-manifest.json"
#: Shard names are stable across runs (``sitemap-1.xml`` keeps its name when its content
#: changes, crawler/sitemaps/naming.py), so a shard may not be cached longer than the index.
MAX_AGE = 300
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX_PART = re.compile(r"[A-Za-z0-9!_.*'()-]+")


#: The longest prefix: S3 keys end at 1,024 bytes, and the set's names (the manifest's, a news shard's
#: with a six-digit number and .gz, the stylesheet's) need a hundred at the most.
MAX_PREFIX_BYTES = 1024 - 100


@dataclass(frozen=True, slots=True)
class S3Location:
    bucket: str
    prefix: str  # "" or "some/folder/" (ends with "/")

    def key(self, name: str) -> str:
        return self.prefix + name

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


def parse_s3_url(url: str) -> S3Location:
    """``s3://BUCKET/PREFIX`` as a location; ``ValueError`` (one line) for anything else."""
    scheme, sep, rest = url.strip().partition("://")
    if scheme.lower() != "s3" or not sep:
        raise ConfigError(f"{url!r} is not an s3://BUCKET/PREFIX URL")
    bucket, _, prefix = rest.partition("/")
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise ConfigError(f"{url!r}: {bucket!r} is not a bucket name (3 to 63 lower-case letters, digits, '.' or '-')")
    parts = [part for part in prefix.split("/") if part]
    if any(part in (".", "..") or not _PREFIX_PART.fullmatch(part) for part in parts):
        raise ConfigError(f"{url!r}: the prefix may hold letters, digits and !_.*'()- between '/', no '.' or '..'")
    location = S3Location(bucket, "".join(part + "/" for part in parts))
    if len(location.prefix.encode()) > MAX_PREFIX_BYTES:
        # S3 keys end at 1,024 bytes: the prefix leaves room for the set's longest file names.
        raise ConfigError(f"s3://{bucket}/...: the prefix is over {MAX_PREFIX_BYTES} bytes (S3 keys end at 1,024)")
    return location


def headers_for(name: str) -> tuple[str, str]:
    """(Content-Type, Cache-Control) of an object of the set.

    A gzip shard is ``application/gzip`` with no Content-Encoding: the object IS a gzip file,
    as its ``.gz`` name says, and every client gets the same bytes. S3 does not negotiate, so
    ``Content-Encoding: gzip`` would be sent to clients that never asked for it, and a client
    whose HTTP layer decodes it holds XML under a ``.gz`` name (the next gunzip fails: the
    "double gzip" reading). Search engines read gzip sitemap files by themselves (sitemaps.org,
    Google and Bing accept ``.xml.gz``)."""
    if name == MANIFEST_NAME:
        return "application/json", "no-cache"
    content_type = "application/gzip" if name.endswith(".gz") else "application/xml"
    if name.endswith(".xsl"):
        content_type = "text/xsl"
    return content_type, f"public, max-age={MAX_AGE}"


@dataclass(frozen=True, slots=True)
class Upload:
    name: str
    sha256: str


@dataclass(frozen=True, slots=True)
class MirrorPlan:
    """The writes of one mirror run, in the order they must happen."""

    claim: dict[str, str | None] | None  # the manifest written first (None: not needed)
    uploads: list[Upload]  # the changed shards, then the index (when changed)
    deletes: list[str]  # names no index names any more, ours
    final: dict[str, str | None] | None  # the manifest written last (None: unchanged)
    unchanged: list[str]


@dataclass(slots=True)
class RemotePublish:
    """What the mirror did (or why it stopped): for the summary and the JSON log."""

    target: str
    uploaded: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    error: str | None = None  # one line, no credential in it
    stopped_by: int | None = None  # the signal (SIGTERM, SIGINT) that stopped the uploads


class Interrupted(BaseException):  # like KeyboardInterrupt: no library code may swallow it
    """A signal arrived during the uploads (raised by the CLI's handler, caught by the mirror)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class ForeignObjects(ValueError):
    """Objects under the prefix that the mirror would replace, and that are not ours."""

    def __init__(self, location: S3Location, names: list[str]):
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        super().__init__(
            f"{location} holds {shown}, not written by sitemap-crawler (its manifest does not list it): "
            "move it away, or pass --overwrite-foreign to replace it"
        )


def read_manifest(data: bytes | None) -> dict[str, str | None]:
    """The remote manifest's {name: sha256 or None}; ``{}`` when missing or unreadable."""
    if data is None:
        return {}
    try:
        files = json.loads(data.decode("utf-8"))["files"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {
        str(name): (str(sha) if isinstance(sha, str) else None) for name, sha in files.items() if _own_name(str(name))
    }


def manifest_bytes(index_name: str, files: Mapping[str, str | None]) -> bytes:
    return json.dumps({"index": index_name, "files": dict(sorted(files.items()))}, indent=1).encode()


def plan_mirror(
    local: Mapping[str, str],
    index_name: str,
    manifest: Mapping[str, str | None],
    existing: set[str],
    *,
    location: S3Location,
    overwrite_foreign: bool = False,
) -> MirrorPlan:
    """The writes that make the remote set under *location* the local one.

    *local*: {name: sha256} of the local set (the index among them, named *index_name*);
    *manifest*: the remote manifest; *existing*: the names of the objects now under the prefix.
    ``ForeignObjects`` when a name to write is taken by an object that is not ours."""
    foreign = sorted(name for name in local if name in existing and name not in manifest)
    if foreign and not overwrite_foreign:
        raise ForeignObjects(location, foreign)
    changed = [name for name in local if manifest.get(name) != local[name] or name not in existing]
    shards = [name for name in changed if name != index_name]
    stale = [name for name in manifest if name not in local and name != MANIFEST_NAME]
    claim: dict[str, str | None] = {**manifest, **dict.fromkeys(changed)}
    final: dict[str, str | None] = dict(local)
    return MirrorPlan(
        claim=claim if claim != dict(manifest) else None,
        uploads=[Upload(name, local[name]) for name in [*shards, *([index_name] if index_name in changed else [])]],
        deletes=[name for name in stale if name in existing],
        final=final if final != dict(manifest) else None,
        unchanged=[name for name in local if name not in changed],
    )


def _own_name(name: str) -> bool:
    # The manifest is read from the bucket: never let it name anything outside the prefix.
    return bool(name) and "/" not in name and "\\" not in name and not name.startswith(".")
