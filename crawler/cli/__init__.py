"""``sitemap-crawler``: the command-line entry point, one module per command.

User mistakes (bad options, bad config, unwritable folders) end with a
one-line message and exit status 2; a crawl that cannot produce a sitemap
ends with a message saying why and exit status 1; success is 0.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import sys
from collections.abc import Callable
from typing import Any

from crawler.cli.exits import EXIT_FAILED, EXIT_SIGNAL, EXIT_USAGE
from crawler.cli.parser import UsageError, build_parser
from crawler.failures import ConfigError
from crawler.logs import MASK, json_event

__all__ = ["build_parser", "main"]

#: Each command's module and function, imported only when that command runs: ``--help`` and
#: ``validate`` never load Scrapy's crawler machinery.
COMMANDS = {
    "crawl": ("crawler.cli.crawl", "run_crawl_command"),
    "update": ("crawler.cli.crawl", "run_crawl_command"),
    "serve": ("crawler.cli.serve", "run_serve"),
    "validate": ("crawler.cli.validate", "run_validate"),
    "coverage": ("crawler.cli.coverage", "run_coverage"),
    "check": ("crawler.cli.check", "run_check"),
    "audit": ("crawler.cli.audit", "run_audit"),
    "config": ("crawler.cli.config", "run_config"),
    "worker": ("crawler.cli.worker", "run_worker"),
}
#: Options whose values are secrets: masked in the process title (``ps``, /proc/PID/cmdline).
SECRET_OPTIONS = ("--password", "--header", "--cookie", "--token", "--indexnow-key")
#: Words in a setting's name that make its ``--set NAME=VALUE`` value a secret too.
SECRET_SETTING_WORDS = ("PASSWORD", "HEADERS", "COOKIES", "KEY", "TOKEN", "SECRET")
#: The password in a URL (``redis://:PASSWORD@host`` of ``--distributed`` and ``worker``).
_USERINFO = re.compile(r"(?<=://)[^/?#@\s]*@")


def _masked_word(word: str, option: str | None) -> str:
    """*word*, the value of *option* (None: an option or a positional), without its secret."""
    if option in SECRET_OPTIONS:
        return MASK
    if option == "--set":
        name, sep, _ = word.partition("=")
        if sep and any(part in name.upper() for part in SECRET_SETTING_WORDS):
            return f"{name}={MASK}"
    return _USERINFO.sub(f"{MASK}@", word)


def masked(argv: list[str]) -> list[str]:
    """*argv* with the values of secret options (and passwords in URLs) replaced by ``***``."""
    shown: list[str] = []
    pending: str | None = None  # the option whose value is the next word
    for word in argv:
        if pending is not None:
            shown.append(_masked_word(word, pending))
            pending = None
            continue
        option, sep, value = word.partition("=")
        if word.startswith("--") and sep:
            shown.append(f"{option}={_masked_word(value, option)}")
        elif word in (*SECRET_OPTIONS, "--set"):
            shown.append(word)
            pending = word
        else:
            shown.append(_masked_word(word, None))
    return shown


class Terminated(SystemExit):
    """Asked to stop by a signal: ``SystemExit(128 + N)``, told apart from any other exit."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated(128 + signum)


def _unraisable(unraisable: Any) -> None:
    """A stop raised where Python cannot pass it on (a weakref callback while importing, a
    ``__del__``) would be printed as a traceback and ignored, and the process would go on:
    it ends now, as the signal asked."""
    if isinstance(unraisable.exc_value, Terminated):
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(int(unraisable.exc_value.code or 1))
    sys.__unraisablehook__(unraisable)


def _option(argv: list[str], name: str) -> str | None:
    """The value of option *name* in *argv*, before parsing (for how to report a parse error)."""
    for position, word in enumerate(argv):
        if word == name and position + 1 < len(argv):
            return argv[position + 1]
        if word.startswith(name + "="):
            return word.partition("=")[2]
    return None


def _hide_secrets(argv: list[str]) -> None:
    if masked(argv) != argv:
        import setproctitle  # noqa: PLC0415 - only when there is something to hide

        setproctitle.setproctitle(" ".join(masked([sys.argv[0], *argv])))


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    _hide_secrets(arguments)
    # As PID 1 in a container a signal without a handler is ignored: every command stops on
    # SIGTERM (crawls and serve install their own, finer handlers over this one).
    signal.signal(signal.SIGTERM, _terminated)
    sys.unraisablehook = _unraisable
    parser = build_parser()
    args: Any = None
    try:
        args = parser.parse_args(arguments)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        module, name = COMMANDS[args.command]
        command: Callable[[Any], int] = getattr(importlib.import_module(module), name)
        return command(args)
    except (UsageError, ConfigError) as error:
        _say(arguments, str(error), "usage-error", EXIT_USAGE)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C in a command without its own handler (crawls have theirs)
        print("sitemap-crawler: stopped (Ctrl-C)", file=sys.stderr)
        return EXIT_SIGNAL + signal.SIGINT
    except Exception as error:
        if getattr(args, "verbose", 0):
            raise  # -v: where it happened, whole
        if isinstance(error, OSError):  # the machine's answer (a full disk, a permission): not a bug of ours
            _say(arguments, str(error), "error", EXIT_FAILED)
        else:
            words = f"internal error ({type(error).__name__}: {error}): a bug, please report it; -v shows where"
            _say(arguments, words, "internal-error", EXIT_FAILED)
        return EXIT_FAILED


def _say(arguments: list[str], message: str, event: str, status: int) -> None:
    """One line on stderr: JSON when the run logs JSON (a container), else words."""
    own = None if arguments[:1] == ["coverage"] else _option(arguments, "--log-format")  # coverage's: the logs read
    wants_json = "json" in (os.environ.get("SITEMAP_CRAWLER_LOG_FORMAT"), own) or (
        "container" in (os.environ.get("SITEMAP_CRAWLER_PROFILE"), _option(arguments, "--profile"))
    )
    if wants_json:
        print(json_event("ERROR", "sitemap-crawler", message, event=event, exit=status), file=sys.stderr)
    else:
        print(f"sitemap-crawler: error: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
