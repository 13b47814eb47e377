"""S3-compatible object storage through boto3: the plan of :mod:`crawler.sitemaps.remote`
carried out, write by write, in its order.

Imported only when ``--publish s3://...`` is given (a plain crawl never loads boto3).
Credentials come the standard AWS way, boto3's default chain (environment, shared
files and profiles, instance or container role); they are never printed, and a failure is
one line with any of them masked.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from crawler.sitemaps.remote import (
    MANIFEST_NAME,
    ForeignObjects,
    Interrupted,
    RemotePublish,
    S3Location,
    headers_for,
    manifest_bytes,
    plan_mirror,
    read_manifest,
)

__all__ = ["has_credentials", "mirror"]

#: Attempts per request (boto3's standard retry mode: backoff on throttling, 5xx, dropped connections).
ATTEMPTS = 3
_MASK = "***"


def has_credentials() -> bool:
    """Whether boto3's default chain finds credentials (nothing is sent anywhere)."""
    return boto3.session.Session().get_credentials() is not None


def mirror(
    folder: Path, names: list[str], index_name: str, location: S3Location, endpoint_url: str | None,
    *, overwrite_foreign: bool = False,
) -> RemotePublish:  # fmt: skip
    """Make the objects under *location* the set *names* of *folder* (*index_name* last)."""
    outcome = RemotePublish(str(location))
    session = boto3.session.Session()
    step = "reading the local set"
    try:
        local = {name: _sha256(folder / name) for name in names}
        step = "connecting"
        s3 = session.client("s3", endpoint_url=endpoint_url, config=_config(endpoint_url))
        step = f"reading {location}{MANIFEST_NAME}"
        manifest = read_manifest(_get(s3, location, MANIFEST_NAME))
        step = f"listing {location}"
        existing = _names(s3, location)
        plan = plan_mirror(
            local, index_name, manifest, existing, location=location, overwrite_foreign=overwrite_foreign
        )
        if plan.claim is not None:
            step = f"writing {location}{MANIFEST_NAME}"
            _put(s3, location, MANIFEST_NAME, manifest_bytes(index_name, plan.claim))
        for upload in plan.uploads:
            step = f"uploading {upload.name}"
            data = (folder / upload.name).read_bytes()
            if hashlib.sha256(data).hexdigest() != upload.sha256:
                raise OSError(f"{folder / upload.name} changed while it was uploaded")
            _put(s3, location, upload.name, data, upload.sha256)
            outcome.uploaded.append(upload.name)
        for name in plan.deletes:
            step = f"deleting {name}"
            s3.delete_object(Bucket=location.bucket, Key=location.key(name))
            outcome.deleted.append(name)
        if plan.final is not None:
            step = f"writing {location}{MANIFEST_NAME}"
            _put(s3, location, MANIFEST_NAME, manifest_bytes(index_name, plan.final))
        outcome.unchanged = plan.unchanged
    except Interrupted as stop:
        outcome.stopped_by = stop.signum
        outcome.error = f"stopped by signal {stop.signum} while {step}"
    except ForeignObjects as error:
        outcome.error = str(error)
    except ClientError as error:
        detail = error.response.get("Error", {})
        outcome.error = _masked(session, f"{step} failed: {detail.get('Code', '?')}: {detail.get('Message', '')}")
    except (BotoCoreError, OSError, ValueError) as error:  # ValueError: botocore refusing a value
        outcome.error = _masked(session, f"{step} failed: {error}")
    return outcome


def _config(endpoint_url: str | None) -> Config:
    options: dict[str, Any] = {}
    if endpoint_url is not None:
        # boto3 1.36 and later send CRC checksum headers (aws-chunked bodies) with every PUT, which
        # many S3-compatible services refuse (MinIO, Backblaze B2, OVH, Ceph...): only when an
        # operation requires one, unless $AWS_REQUEST_CHECKSUM_CALCULATION (or ..._VALIDATION) says otherwise.
        for name in ("request_checksum_calculation", "response_checksum_validation"):
            if f"AWS_{name.upper()}" not in os.environ:
                options[name] = "when_required"
    return Config(
        retries={"max_attempts": ATTEMPTS, "mode": "standard"}, connect_timeout=10, read_timeout=60, **options
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _get(s3: Any, location: S3Location, name: str) -> bytes | None:
    try:
        response = s3.get_object(Bucket=location.bucket, Key=location.key(name))
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise
    body: bytes = response["Body"].read()
    return body


def _names(s3: Any, location: S3Location) -> set[str]:
    """The names of the objects directly under the prefix (not in its sub-folders)."""
    names: set[str] = set()
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=location.bucket, Prefix=location.prefix, Delimiter="/")
    for page in pages:
        names.update(item["Key"][len(location.prefix) :] for item in page.get("Contents", ()))
    return names


def _put(s3: Any, location: S3Location, name: str, data: bytes, sha256: str | None = None) -> None:
    content_type, cache_control = headers_for(name)
    s3.put_object(
        Bucket=location.bucket,
        Key=location.key(name),
        Body=data,
        ContentType=content_type,
        CacheControl=cache_control,
        Metadata={"sha256": sha256 or hashlib.sha256(data).hexdigest()},
    )


def _masked(session: Any, message: str) -> str:
    """*message* on one line, with any credential of the session masked."""
    credentials = session.get_credentials()
    if credentials is not None:
        frozen = credentials.get_frozen_credentials()
        for secret in (frozen.secret_key, frozen.token, frozen.access_key):
            if secret:
                message = message.replace(secret, _MASK)
    return " ".join(message.split())
