"""The options of a crawl over several hosts (SPEC S2), for crawl, update, audit and config."""

from __future__ import annotations

import argparse

__all__ = ["add_host_options"]


def add_host_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--subdomains",
        action="store_true",
        default=None,
        help="also crawl every host of the start URL's domain that links lead to: one sitemap set per host",
    )
    parser.add_argument(
        "--host",
        action="append",
        metavar="HOST",
        help="also crawl this host (www.example.com, or *.example.com for any under it; repeatable)",
    )
    parser.add_argument("--max-hosts", type=int, metavar="N", help="hosts a crawl takes in at most (100)")
    parser.add_argument(
        "--resolve",
        action="append",
        metavar="HOST:PORT:ADDRESS",
        help="connect to ADDRESS for HOST:PORT without DNS, the URL unchanged (curl's; repeatable)",
    )
