"""The command line of a shared crawl: the ``worker`` command, and the options of the
coordinator and its workers that keep the Redis from steering the crawl (no Scrapy import)."""

from __future__ import annotations

import argparse
from typing import Any

from crawler.cli.hosting import add_resolve_option
from crawler.cli.rendering import add_chromium_option
from settings.ranges import option_type

__all__ = ["add_redis_safety", "add_worker_command"]

WORKER_EXAMPLE = """\
example:
  export SITEMAP_CRAWLER_SHARED_SECRET_FILE=/etc/sitemap-crawler/secret      # on every machine
  sitemap-crawler crawl https://www.example.com/ --out public/ --distributed redis://:PASSWORD@redis.internal:6379/0
  sitemap-crawler worker redis://:PASSWORD@redis.internal:6379/0 --url https://www.example.com/   # on the others
"""


def add_redis_safety(parser: argparse.ArgumentParser) -> None:
    """The shared secret, the AUTH rule and the TLS trust, for the coordinator and its workers alike."""
    parser.add_argument(
        "--shared-secret-file",
        metavar="FILE",
        help="a file holding the shared crawl's secret (else the secret is in $SITEMAP_CRAWLER_SHARED_SECRET)",
    )
    parser.add_argument(
        "--insecure-redis", action="store_true", default=None, help="accept a Redis on 127.0.0.1 with no password"
    )
    parser.add_argument(
        "--redis-ca-file",
        metavar="FILE",
        help="CA certificates (PEM) to trust for rediss://, besides the system's ($SITEMAP_CRAWLER_REDIS_CA_FILE)",
    )


def add_worker_command(commands: Any) -> None:
    """``sitemap-crawler worker`` (*commands*: the parser's subparsers)."""
    worker = commands.add_parser(
        "worker",
        help="join a crawl shared through Redis (started with crawl --distributed)",
        description=(
            "Join the current crawl of the Redis at REDIS_URL: its configuration comes from there, published and "
            "signed by the coordinator (the same shared secret on both). Leases requests, fetches them and hands the "
            "facts to the coordinator's exporter; ends when the crawl is over everywhere. Any number of workers, on "
            "any machine that reaches the Redis."
        ),
        epilog=WORKER_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    redis_help = "redis://:PASSWORD@HOST:PORT/DB of the crawl (default: $SITEMAP_CRAWLER_DISTRIBUTED)"
    worker.add_argument("redis_url", metavar="REDIS_URL", nargs="?", help=redis_help)
    worker.add_argument(
        "--wait",
        type=option_type("worker --wait"),
        default=30.0,
        metavar="SECONDS",
        help="how long to wait for a crawl to join (30)",
    )
    worker.add_argument("--url", metavar="URL", help="refuse to join unless the crawl is of this site")
    add_redis_safety(worker)
    add_chromium_option(worker)
    add_resolve_option(worker)  # this machine's own: where a name connects is never taken from the Redis
    worker.add_argument("--verbose", "-v", action="count", default=0, help="log more (-v info, -vv debug)")
    worker.add_argument("--log-format", choices=("text", "json"), help="logs on stderr: text (default) or json lines")
