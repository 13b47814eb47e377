"""The command line's parser class: every mistake a :class:`UsageError`, reported in one line."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

__all__ = ["Parser", "UsageError"]


class UsageError(Exception):
    """A mistake in how the command was called; reported in one line."""


class Parser(argparse.ArgumentParser):
    """Errors as :class:`UsageError`; with ``intermixed=True``, positionals anywhere among the
    options. ``config show --for audit URL`` needs it: argparse matches a run of positionals
    at once, so ``show`` took the optional URL along (as nothing) and the URL after the
    options was "unrecognized"; argparse's intermixed mode reads the options first."""

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
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

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")
