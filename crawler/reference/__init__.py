"""The reference pages of the documentation, generated from the code so they cannot drift.

The command line comes from the parser (:func:`crawler.cli.parser.build_parser`), the
settings from the settings module and its ranges, the reasons and warnings from
:mod:`crawler.reasons`, the exit statuses from :mod:`crawler.cli.exits`. ``docs/conf.py``
writes the pages before Sphinx reads its sources; tests read them as strings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from crawler.reference.commands import commands_page, environment_page
from crawler.reference.outcomes import exit_status_page, report_page
from crawler.reference.settings_table import settings_page

__all__ = ["PAGES", "write_pages"]

#: File name (under docs/reference/) -> the function that writes its Markdown.
PAGES: dict[str, Callable[[], str]] = {
    "commands.md": commands_page,
    "environment.md": environment_page,
    "settings.md": settings_page,
    "report.md": report_page,
    "exit-status.md": exit_status_page,
}


def write_pages(folder: Path) -> list[Path]:
    """Write every page into *folder*; the ones whose text changed (or that were missing) are
    returned: the committed copy was stale. An unchanged file is not touched, so Sphinx
    rebuilds only what changed."""
    folder.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, page in PAGES.items():
        path = folder / name
        text = page()
        if not path.exists() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
            stale.append(path)
    return stale
