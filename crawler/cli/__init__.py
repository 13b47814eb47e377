"""``sitemap-crawler``: the command-line entry point, one module per command.

User mistakes (bad options, bad config, unwritable folders) end with a
one-line message and exit status 2; a crawl that cannot produce a sitemap
ends with a message saying why and exit status 1; success is 0.
"""

from __future__ import annotations

import sys

from crawler.cli.audit import run_audit
from crawler.cli.crawl import run_crawl_command
from crawler.cli.parser import UsageError, build_parser
from crawler.cli.serve import run_serve
from crawler.cli.validate import run_validate

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    commands = {
        "crawl": run_crawl_command,
        "update": run_crawl_command,
        "serve": run_serve,
        "validate": run_validate,
        "audit": run_audit,
    }
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return commands[args.command](args)
    except (UsageError, ValueError) as error:
        print(f"sitemap-crawler: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
