"""``--publish s3://BUCKET/PREFIX``: after the set is published into the output folder, mirror it
to S3-compatible object storage (crawl and update; the audit's set is a preview, never published).

boto3 is imported only here, and only when ``--publish`` is given: a plain crawl never loads it.
"""

from __future__ import annotations

import argparse
import signal
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


def mirror_published(publish: Publish, published: PublishResult, *, overwrite_foreign: bool) -> RemotePublish:
    """Mirror the set just published into its folder to the bucket."""
    from crawler.services.s3 import mirror  # noqa: PLC0415 - boto3 with --publish only

    index = published.index_path
    names = [*(shard.name for shard in published.shards), *published.extras, index.name]
    # Scrapy's handlers outlive its reactor and would ignore a SIGTERM now: the uploads stop at once
    # instead (the bucket keeps a complete set whatever the moment), and the run exits 128 + signal.
    previous = {signum: signal.signal(signum, _interrupt) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        return mirror(
            index.parent, names, index.name, publish.location, publish.endpoint_url, overwrite_foreign=overwrite_foreign
        )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


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
