"""``--publish s3://BUCKET/PREFIX``: after the set is published into the output folder, mirror it
to S3-compatible object storage (crawl and update; the audit's set is a preview, never published).

boto3 is imported only here, and only when ``--publish`` is given: a plain crawl never loads it.
"""

from __future__ import annotations

import argparse
import signal
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from crawler.cli.usage import UsageError

if TYPE_CHECKING:  # the parser imports this module: --help stays fast
    from crawler.sitemaps.publish import PublishResult
    from crawler.sitemaps.remote import RemotePublish
    from settings.s3 import Publish

__all__ = [
    "add_publishing_options",
    "mirror_published",
    "preflight",
    "remote_fields",
    "remote_line",
]


def add_publishing_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--publish",
        metavar="s3://BUCKET/PREFIX",
        help="also publish the set to S3-compatible storage, mirrored from --out (changed shards, then the index)",
    )
    parser.add_argument(
        "--s3-endpoint-url",
        metavar="URL",
        help="endpoint of an S3-compatible service (default: AWS; credentials: boto3's default chain)",
    )


def preflight(publish: Publish) -> None:
    """Before the crawl: boto3 is installed and finds credentials (nothing is sent)."""
    try:
        from crawler.services.s3 import has_credentials  # noqa: PLC0415 - boto3 with --publish only
    except ImportError:
        raise UsageError("--publish needs boto3: pip install 'sitemap-crawler[s3]'") from None
    if not has_credentials():
        raise UsageError(
            f"--publish {publish.location}: no AWS credentials found (set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with an instance or container role)"
        )


def mirror_published(
    publish: Publish,
    published: PublishResult,
    *,
    overwrite_foreign: bool,
    sets: Mapping[str, PublishResult] | None = None,
    last: str = "",
) -> RemotePublish:
    """Mirror the set just published into its folder to the bucket; of a crawl of several hosts,
    each host's set (*sets*, by folder) under a prefix of its own, ``PREFIX/HOST/``, as in OUT, the
    set of *last* (the index host: its index of every host names the others' files) after the others."""
    from crawler.services.s3 import mirror  # noqa: PLC0415 - boto3 with --publish only
    from crawler.sitemaps.remote import RemotePublish, S3Location  # noqa: PLC0415

    location = publish.location
    ordered = sorted((sets or {}).items(), key=lambda item: (item[0] == last, item[0]))
    each = {"": published} if not sets else {f"{folder}/": result for folder, result in ordered}
    outcome = RemotePublish(str(location))
    # Scrapy's handlers outlive its reactor and would ignore a SIGTERM now: the uploads stop at once
    # instead (the bucket keeps a complete set whatever the moment), and the run exits 128 + signal.
    previous = {signum: signal.signal(signum, _interrupt) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        for folder, result in each.items():
            index = result.index_path
            names = [*(shard.name for shard in result.shards), *result.extras, index.name]
            under = S3Location(location.bucket, location.prefix + folder)
            done = mirror(
                index.parent, names, index.name, under, publish.endpoint_url, overwrite_foreign=overwrite_foreign
            )
            outcome.uploaded += [folder + name for name in done.uploaded]
            outcome.unchanged += [folder + name for name in done.unchanged]
            outcome.deleted += [folder + name for name in done.deleted]
            if done.error is not None:
                outcome.error, outcome.stopped_by = done.error, done.stopped_by
                outcome.target = done.target
                break
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return outcome


def _interrupt(signum: int, frame: Any) -> None:
    from crawler.sitemaps.remote import Interrupted  # noqa: PLC0415 - loaded already by the mirror

    raise Interrupted(signum)


def remote_line(remote: RemotePublish) -> str:
    """The summary's line about the bucket."""
    if remote.error is not None:
        return (
            f"sitemap-crawler: error: the sitemaps are published in the output folder, but not to {remote.target}: "
            f"{remote.error}; the bucket still holds a complete set"
        )
    done = f"{len(remote.uploaded)} uploaded, {len(remote.unchanged)} unchanged, {len(remote.deleted)} deleted"
    return f"Published to {remote.target}: {done}"


def remote_fields(remote: RemotePublish) -> dict[str, object]:
    """The bucket's part of the JSON summary event."""
    return {
        "target": remote.target,
        "uploaded": len(remote.uploaded),
        "unchanged": len(remote.unchanged),
        "deleted": len(remote.deleted),
        "error": remote.error,
    }
