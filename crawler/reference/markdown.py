"""Markdown (MyST) pieces for the generated reference: tables and inline code."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["GENERATED", "code", "prose", "table"]

#: The first lines of every generated page: where it comes from, so nobody edits it by hand.
GENERATED = "<!-- Generated from the code by crawler/reference (docs/conf.py); do not edit. -->\n\n"


def code(text: object) -> str:
    """*text* as inline code; a backtick inside gets a longer fence."""
    shown = str(text)
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


#: Inline code spans, left as they are; outside them text is escaped.
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def prose(text: str) -> str:
    """Help text as Markdown: ``<html lang>`` outside code spans is text, not a tag to render."""
    parts, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts += [text[last : span.start()].replace("<", "&lt;"), span.group(0)]
        last = span.end()
    parts.append(text[last:].replace("<", "&lt;"))
    return "".join(parts)


def _cell(text: str) -> str:
    return prose(" ".join(text.split())).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A pipe table; cells on one line, ``|`` escaped."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
