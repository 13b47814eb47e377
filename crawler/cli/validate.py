"""``sitemap-crawler validate``: check any sitemap set, ours or anyone's."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from crawler.cli.parser import UsageError
from crawler.urls import normalize_url, site_root
from crawler.validate.sets import validate_target

__all__ = ["run_validate"]


def run_validate(args: argparse.Namespace) -> int:
    target = str(args.target)
    remote = target.startswith(("http://", "https://"))
    if not remote and not Path(target).exists():
        raise UsageError(f"{target}: no such file or folder")
    origin = None
    if args.origin:
        origin = site_root(
            normalize_url(args.origin) if "://" in args.origin else normalize_url("https://" + args.origin)
        )
        origin = origin.rstrip("/")
    started = time.monotonic()
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, not {args.timeout}")
    files, problems = validate_target(target, origin, args.timeout)
    for problem in problems:
        print(problem)
    elapsed = time.monotonic() - started
    verdict = "valid" if not problems else f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    print(f"{target}: {verdict} ({files} file{'s' if files != 1 else ''} read in {elapsed:.1f} s)", file=sys.stderr)
    return 0 if not problems else 1
