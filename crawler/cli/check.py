"""``sitemap-crawler check``: read a published sitemap set over HTTP as a search engine does.

The parser part (:func:`add_check_command`) imports no Scrapy; :func:`run_check`
runs the check (crawler/spiders/check.py) and prints it as validate prints: one
line per finding on stdout (or one JSON document with ``--json``), the verdict on
stderr; exit status 0 when no error was found, 1 otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crawler.cli.exits import EXIT_FAILED, EXIT_OK
from crawler.cli.hosting import add_resolve_option, pinned_of
from crawler.cli.usage import UsageError, refuse_credentials
from crawler.sitemaps.publish import MANIFEST_NAME
from settings.ranges import option_type

__all__ = ["add_check_command", "run_check"]

CHECK_EXAMPLE = """\
example:
  sitemap-crawler check https://www.example.com/
  sitemap-crawler check https://www.example.com/sitemap.xml --sample 200 --expect public/ --json
"""
#: Listed URLs fetched by default.
DEFAULT_SAMPLE = 50


def add_check_command(commands: Any) -> None:
    """``sitemap-crawler check`` (*commands*: the parser's subparsers)."""
    check = commands.add_parser(
        "check",
        help="read a published sitemap set over HTTP as a search engine does",
        description=(
            "Fetch robots.txt, the sitemap index and every sitemap it lists from URL (a site root: the sitemaps "
            "robots.txt names, else /sitemap.xml; or a sitemap or index URL) with the crawler's User-Agent, and "
            "check what a search engine checks: robots.txt's Sitemap: line and rules, status 200, Content-Type, "
            "gzip (never twice), every rule validate applies, locs on the index's host; then fetch a sample of "
            "the listed URLs: 200, not redirected, indexable, canonical to themselves. One line per finding: "
            "url:line:col: error|warning: rule: message. Exit status 1 on errors."
        ),
        epilog=CHECK_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("url", metavar="URL", help="a site root or the URL of a sitemap or sitemap index")
    check.add_argument(
        "--sample",
        type=option_type("check --sample"),
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"listed URLs fetched, spread over the sitemaps ({DEFAULT_SAMPLE}; 0: none)",
    )
    check.add_argument("--json", action="store_true", help="print the findings and counts as one JSON document")
    check.add_argument(
        "--expect",
        metavar="DIR",
        help="the folder the set was published from (of several hosts: DIR/HOST); a file that differs is stale",
    )
    add_resolve_option(check)
    check.add_argument(
        "--timeout",
        type=option_type("check --timeout"),
        default=30.0,
        metavar="SECONDS",
        help="the most one request may take (30)",
    )
    check.add_argument(
        "--deadline",
        type=option_type("check --deadline"),
        default=600.0,
        metavar="SECONDS",
        help="the most the whole check may take (600)",
    )


def _url(text: str) -> str:
    refuse_credentials(text, "check")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{text!r} is not an http(s) URL (a site root or a sitemap URL)")
    try:
        parts.port  # noqa: B018 - raises for a port that is no number
    except ValueError:
        raise UsageError(f"{text!r} has a bad port") from None
    return text if parts.path else text + "/"


def run_check(args: argparse.Namespace) -> int:
    from crawler.spiders.check import check_published  # noqa: PLC0415 - Scrapy only when a check runs
    from settings import SITEMAP_ROBOTS_TOKEN, USER_AGENT  # noqa: PLC0415 - the crawler's own identity

    url = _url(args.url)
    expect = None
    if args.expect is not None:
        expect = Path(args.expect)
        if not expect.is_dir():
            raise UsageError(f"--expect {args.expect}: no such folder")
        host = expect / (urlsplit(url).hostname or "")
        if (host / MANIFEST_NAME).is_file() and not (expect / MANIFEST_NAME).is_file():
            expect = host  # the output of a crawl of several hosts: this host's set
    pinned_of(args)  # a mistake is said before any request
    result = check_published(
        url,
        user_agent=USER_AGENT,
        robots_agent=SITEMAP_ROBOTS_TOKEN,
        expect=expect,
        sample=int(args.sample),
        timeout=args.timeout,
        deadline=args.deadline,
        resolve=tuple(args.resolve or ()),
    )
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
    else:
        for finding in result.findings:
            print(finding)
    print(result.verdict(), file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_FAILED
