"""``sitemap-crawler validate``: check any sitemap set, ours or anyone's."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from crawler.cli.examples import VALIDATE_EXAMPLE
from crawler.cli.exits import EXIT_FAILED, EXIT_OK
from crawler.cli.hosting import add_resolve_option, pinned_of
from crawler.cli.usage import UsageError, refuse_credentials
from crawler.urls import normalize_url, site_root
from crawler.validate.findings import Finding
from crawler.validate.sets import SetOptions, SitemapSet
from settings import USER_AGENT
from settings.ranges import option_type

__all__ = ["add_validate_command", "run_validate"]


def add_validate_command(commands: Any) -> None:
    validate = commands.add_parser(
        "validate",
        help="validate a sitemap, an index (with what it lists) or a folder tree",
        description=(
            "Validate sitemaps against the sitemaps.org protocol and schemas and the image, video, news and "
            "hreflang extensions, ours or anyone's, plain or gzip. One line per finding: "
            "file:line:col: error|warning: rule: message. Exit status 1 on errors (on warnings too with --strict)."
        ),
        epilog=VALIDATE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument("target", metavar="PATH_OR_URL", help="a sitemap or index file, a folder, or an http(s) URL")
    validate.add_argument("--origin", metavar="URL", help="scheme://host[:port] every loc must use (default: inferred)")
    validate.add_argument(
        "--root", metavar="DIR", help="folder served as the site root, where an index's entries are looked up"
    )
    validate.add_argument(
        "--no-follow",
        dest="follow",
        action="store_false",
        help="check the file alone: an index's entries are not opened",
    )
    validate.add_argument("--strict", action="store_true", help="warnings fail the check too (exit status 1)")
    validate.add_argument(
        "--timeout",
        type=option_type("validate --timeout"),
        default=30.0,
        metavar="SECONDS",
        help="per remote file (30)",
    )
    add_resolve_option(validate)


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
    pinned = pinned_of(args)
    return SetOptions(
        origin=origin, root=root, follow=args.follow, timeout=args.timeout, user_agent=USER_AGENT, pinned=pinned
    )


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
