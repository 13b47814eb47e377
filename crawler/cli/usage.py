"""The command line's parser class: every mistake a :class:`UsageError`, reported in one line."""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
from typing import Any, NoReturn
from urllib.parse import urlsplit

__all__ = ["Parser", "UsageError", "package_version", "refuse_credentials"]


def package_version() -> str:
    """The installed distribution's version (``unknown`` in a checkout that was never installed)."""
    try:
        return importlib.metadata.version("sitemap-crawler")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class UsageError(Exception):
    """A mistake in how the command was called; reported in one line."""


def refuse_credentials(url: str, what: str) -> None:
    """A URL that carries ``user:password@`` is refused, the URL not echoed: it would reach the
    output, the logs and the process list."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        netloc = url.partition("://")[2].partition("/")[0]  # a broken URL: its own error says so, unechoed
    if "@" in netloc:
        raise UsageError(f"{what}: a URL with credentials (user:password@host) is refused; it is not shown here")


class Parser(argparse.ArgumentParser):
    """Errors as :class:`UsageError`; with ``intermixed=True``, positionals anywhere among the
    options. ``config show --for audit URL`` needs it: argparse matches a run of positionals
    at once, so ``show`` took the optional URL along (as nothing) and the URL after the
    options was "unrecognized"; argparse's intermixed mode reads the options first.

    No abbreviations (``allow_abbrev=False``, for the top parser and every subcommand's, which
    argparse makes with this class): ``--head`` or ``--cook`` would carry a secret that the
    process title does not mask, and a new option could silently change what an old one meant."""

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self._intermixed = intermixed
        self._reading = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if not self._intermixed or self._reading:
            return super().parse_known_args(args, namespace)
        self._reading = True  # parse_known_intermixed_args calls this method for each of its passes
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._reading = False

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As argparse's, but an unknown option's value is never echoed (``--head 'X-Token: ...'``
        was an abbreviation once: its value may be a secret), and the option meant is named."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras))
        return parsed

    def _unrecognized(self, extras: list[str]) -> str:
        shown, after_option = [], False
        for word in extras:
            if word.startswith("-"):
                shown.append(word.partition("=")[0])
                after_option = "=" not in word
            elif not after_option:  # every word after an unknown option may be its value, unquoted
                shown.append(word)
        known = [name for action in self._all_actions() for name in action.option_strings]
        first = next((w for w in shown if w.startswith("--")), "")
        close = difflib.get_close_matches(first, known, n=1)
        # A prefix of a longer option is an abbreviation, which is refused on purpose; else a typo.
        why = "options are never abbreviated: " if close and close[0].startswith(first) else ""
        hint = f" ({why}did you mean {close[0]}?)" if close else ""
        if close and close[0] == first:  # another command's option (audit --publish)
            hint = f" ({first} is not an option of this command)"
        return f"unrecognized arguments: {' '.join(shown)}{hint}"

    def _all_actions(self) -> list[argparse.Action]:
        """This parser's actions and its subcommands' (whichever the unknown option was given to)."""
        actions = list(self._actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):  # argparse has no public way to them
                actions += [each for sub in action.choices.values() for each in sub._actions]
        return actions

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")
