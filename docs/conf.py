"""Sphinx configuration of the sitemap-crawler documentation (``make docs``).

The reference pages (docs/reference/*.md) are written from the code at each build
(crawler/reference), so the options, settings, reasons and exit statuses shown are the
ones the installed code has. The build is strict: ``make docs`` turns every warning (a
broken link, a missing reference, a page in no table of contents) into an error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's code, whether or not it is installed

from sphinx.util import logging  # noqa: E402

from crawler.cli.usage import package_version  # noqa: E402
from crawler.reference import write_pages  # noqa: E402

project = "sitemap-crawler"
author = "the sitemap-crawler authors"
copyright = "the sitemap-crawler authors, BSD-3-Clause licence"
version = release = package_version()

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# Links to a heading of another page (`[x](guides/audit.md#finding-kinds)`) are checked.
myst_heading_anchors = 4
myst_enable_extensions = ["deflist"]
# `--max-pages` stays two hyphens, quotes stay straight: what is shown is what is typed.
smartquotes = False
nitpicky = True
suppress_warnings: list[str] = []

html_theme = "alabaster"
html_title = f"sitemap-crawler {release}"
html_show_sourcelink = False
html_copy_source = False
# No index entries are written: an empty general index would be a page with nothing on it.
html_use_index = False
html_theme_options = {"description": "Correct XML sitemaps from a crawl", "fixed_sidebar": True}


def _write_reference(app: Any, config: Any) -> None:
    """Write the reference; a committed page that was stale is rewritten and warned about, so
    the strict build fails once (in CI: every time) until the new page is committed."""
    for path in write_pages(Path(app.srcdir) / "reference"):
        logging.getLogger(__name__).warning(
            "%s was not what the code generates: rewritten; commit it", path.relative_to(ROOT)
        )


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _write_reference)
    return {"parallel_read_safe": True}
