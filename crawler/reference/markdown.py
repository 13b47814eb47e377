"""Markdown (MyST) pieces for the generated reference: tables and inline code."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["GENERATED", "code", "table"]

#: The first lines of every generated page: where it comes from, so nobody edits it by hand.
GENERATED = "<!-- Generated from the code by crawler/reference (docs/conf.py); do not edit. -->\n\n"


def code(text: object) -> str:
    """*text* as inline code; a backtick inside gets a longer fence."""
    shown = str(text)
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A pipe table; cells on one line, ``|`` escaped."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
