"""The options of a crawl over several hosts (SPEC S2), for crawl, update, audit and config;
``--resolve`` for check and validate too."""

from __future__ import annotations

import argparse

from crawler.addresses import Pinned, read_pinned
from crawler.cli.usage import UsageError

__all__ = ["add_host_options", "add_resolve_option", "pinned_of"]


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
        "--max-pages-per-host", type=int, metavar="N", help="pages each host may take of the budget (0: no share)"
    )
    parser.add_argument(
        "--index-host",
        metavar="HOST",
        help="also write on HOST one index of every host's sitemaps (cross-submission: each host's robots.txt "
        "names it)",
    )
    add_resolve_option(parser)


def add_resolve_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--resolve",
        action="append",
        metavar="HOST:PORT:ADDRESS",
        help="connect to ADDRESS for HOST:PORT without DNS, the URL unchanged (curl's; repeatable)",
    )


def pinned_of(args: argparse.Namespace) -> tuple[Pinned, ...]:
    """The ``--resolve`` rules of a command that reads no settings (check, validate)."""
    try:
        return tuple(read_pinned(text) for text in args.resolve or ())
    except ValueError as error:
        raise UsageError(f"--resolve: {error}") from None
