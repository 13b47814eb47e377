"""``sitemap-crawler``: the command-line entry point, one module per command.

User mistakes (bad options, bad config, unwritable folders) end with a
one-line message and exit status 2; a crawl that cannot produce a sitemap
ends with a message saying why and exit status 1; success is 0.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from crawler.cli.parser import UsageError, build_parser
from crawler.logs import MASK, json_event

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2
#: Each command's module and function, imported only when that command runs: ``--help`` and
#: ``validate`` never load Scrapy's crawler machinery.
COMMANDS = {
    "crawl": ("crawler.cli.crawl", "run_crawl_command"),
    "update": ("crawler.cli.crawl", "run_crawl_command"),
    "serve": ("crawler.cli.serve", "run_serve"),
    "validate": ("crawler.cli.validate", "run_validate"),
    "audit": ("crawler.cli.audit", "run_audit"),
    "config": ("crawler.cli.config", "run_config"),
    "worker": ("crawler.cli.worker", "run_worker"),
}
#: Options whose values are secrets: masked in the process title (``ps``, /proc/PID/cmdline).
SECRET_OPTIONS = ("--password", "--header", "--cookie", "--token")


def masked(argv: list[str]) -> list[str]:
    """*argv* with the values of secret options replaced by ``***``."""
    shown: list[str] = []
    hide = False
    for word in argv:
        if hide:
            shown.append(MASK)
            hide = False
            continue
        option, sep, _ = word.partition("=")
        if option in SECRET_OPTIONS:
            shown.append(f"{option}={MASK}" if sep else word)
            hide = not sep
        else:
            shown.append(word)
    return shown


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _option(argv: list[str], name: str) -> str | None:
    """The value of option *name* in *argv*, before parsing (for how to report a parse error)."""
    for position, word in enumerate(argv):
        if word == name and position + 1 < len(argv):
            return argv[position + 1]
        if word.startswith(name + "="):
            return word.partition("=")[2]
    return None


def _hide_secrets(argv: list[str]) -> None:
    if any(word.partition("=")[0] in SECRET_OPTIONS for word in argv):
        import setproctitle  # noqa: PLC0415 - only when there is something to hide

        setproctitle.setproctitle(" ".join(masked([sys.argv[0], *argv])))


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    _hide_secrets(arguments)
    # As PID 1 in a container a signal without a handler is ignored: every command stops on
    # SIGTERM (crawls and serve install their own, finer handlers over this one).
    signal.signal(signal.SIGTERM, _terminated)
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        module, name = COMMANDS[args.command]
        command: Callable[[Any], int] = getattr(importlib.import_module(module), name)
        return command(args)
    except (UsageError, ValueError) as error:
        wants_json = "json" in (os.environ.get("SITEMAP_CRAWLER_LOG_FORMAT"), _option(arguments, "--log-format")) or (
            "container" in (os.environ.get("SITEMAP_CRAWLER_PROFILE"), _option(arguments, "--profile"))
        )
        if wants_json:
            print(
                json_event("ERROR", "sitemap-crawler", str(error), event="usage-error", exit=EXIT_USAGE),
                file=sys.stderr,
            )
        else:
            print(f"sitemap-crawler: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
