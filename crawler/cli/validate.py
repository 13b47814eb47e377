"""``sitemap-crawler validate``: check any sitemap set, ours or anyone's."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from crawler.cli.exits import EXIT_FAILED, EXIT_OK
from crawler.cli.parser import UsageError
from crawler.cli.usage import refuse_credentials
from crawler.urls import normalize_url, site_root
from crawler.validate.findings import Finding
from crawler.validate.sets import SetOptions, SitemapSet
from settings import USER_AGENT

__all__ = ["run_validate"]


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'s' if count != 1 else ''}"


def _options(args: argparse.Namespace, remote: bool) -> SetOptions:
    origin = None
    if args.origin:
        refuse_credentials(args.origin if "://" in args.origin else "https://" + args.origin, "--origin")
        given = args.origin if "://" in args.origin else "https://" + args.origin
        try:
            origin = site_root(normalize_url(given)).rstrip("/")
        except ValueError:
            raise UsageError(f"--origin {args.origin!r} is not a URL") from None
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout}")
    root = None
    if args.root:
        if remote:
            raise UsageError("--root is for local files; a remote index's entries are fetched")
        root = Path(args.root)
        if not root.is_dir():
            raise UsageError(f"--root {args.root}: no such folder")
    return SetOptions(origin=origin, root=root, follow=args.follow, timeout=args.timeout, user_agent=USER_AGENT)


def run_validate(args: argparse.Namespace) -> int:
    target = str(args.target)
    remote = target.startswith(("http://", "https://"))
    if remote:
        refuse_credentials(target, "validate")
    if not remote and not Path(target).exists():
        raise UsageError(f"{target}: no such file or folder")
    sitemaps = SitemapSet(target, _options(args, remote))
    started = time.monotonic()
    errors = warnings = 0
    for item in sitemaps:
        if isinstance(item, Finding):
            print(item)
            if item.is_error:
                errors += 1
            else:
                warnings += 1
    elapsed = time.monotonic() - started
    failed = errors > 0 or (args.strict and warnings > 0)
    if errors:
        verdict = _plural(errors, "error") + (f", {_plural(warnings, 'warning')}" if warnings else "")
    elif warnings:
        verdict = ("not valid with --strict: " if args.strict else "valid, ") + _plural(warnings, "warning")
    else:
        verdict = "valid"
    read = f"{_plural(sitemaps.files, 'file')}, {_plural(sitemaps.urls, 'URL')} read in {elapsed:.1f} s"
    skipped = f"; {_plural(sitemaps.skipped, 'other XML file')} skipped" if sitemaps.skipped else ""
    print(f"{target}: {verdict} ({read}{skipped})", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK
