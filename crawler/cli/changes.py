"""The options of what a run changed and how much it may lose (SPEC S10), for crawl, update and audit."""

from __future__ import annotations

import argparse

from crawler.cli.published_check import add_published_check_options

__all__ = ["add_change_options"]


def add_change_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--changes", metavar="PATH", help="what this run added, changed, removed (default: DIR.changes.jsonl)"
    )
    parser.add_argument(
        "--max-shrink",
        type=float,
        metavar="PERCENT",
        help="publish nothing when the set would lose more than this share of its URLs (live: 50; 0: off)",
    )
    parser.add_argument(
        "--accept-shrink", action="store_true", default=None, help="publish this run even if it shrinks the set more"
    )
    add_published_check_options(parser)
