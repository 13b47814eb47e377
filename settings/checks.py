"""Checks across settings, before anything is crawled (exit status 2 at the CLI).

Every file a run writes beside the output folder must be a file of its
own, and none of them may sit inside that folder, which is served
publicly. The Scrapy settings the options map to are checked too, so a
bad ``--concurrency`` or ``--set DOWNLOAD_MAXSIZE=abc`` is a one-line
error, not a traceback or a crawl that never starts.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy.settings import BaseSettings

from settings.values import number, whole_number

if TYPE_CHECKING:
    from settings.config import SitemapConfig

__all__ = ["beside", "check_paths", "check_scrapy_values", "run_files"]

#: Scrapy settings behind options, as (name, lowest value, whole number).
_SCRAPY_VALUES = (
    ("CONCURRENT_REQUESTS", 1, True),
    ("CONCURRENT_REQUESTS_PER_DOMAIN", 1, True),
    ("DOWNLOAD_DELAY", 0, False),
    ("DOWNLOAD_TIMEOUT", 0.001, False),
    ("DOWNLOAD_MAXSIZE", 0, True),
    ("DOWNLOAD_WARNSIZE", 0, True),
    ("RETRY_TIMES", 0, True),
)


def beside(output_dir: Path, suffix: str) -> Path:
    """``<parent>/<folder>.<suffix>``: beside the output folder, never inside
    it, because that folder is often served publicly."""
    output_dir = output_dir.absolute()
    return output_dir.parent / f"{output_dir.name}.{suffix}"


def check_scrapy_values(settings: BaseSettings) -> None:
    for name, low, whole in _SCRAPY_VALUES:
        if settings.get(name) is None:
            continue
        if whole:
            whole_number(settings, name, int(low))
        else:
            number(settings, name, float(low))


def run_files(config: SitemapConfig) -> dict[str, Path]:
    """Every file a run writes outside the sitemap set, by what it is."""
    files = {
        "the report (--report)": config.report_path,
        "the removals report (--removals)": config.removals_path,
        "the output folder's lock": beside(config.output_dir, "lock"),
        "the IndexNow outcome": beside(config.output_dir, "indexnow.json"),
    }
    if config.state_path is not None:
        files["the state store (--state)"] = config.state_path
        files["the state store's lock"] = config.state_path.with_name(config.state_path.name + ".lock")
    return files


def check_paths(config: SitemapConfig) -> None:
    """Refuse two run files on one path, or a run file inside or on the output folder."""
    out = config.output_dir.absolute()
    files = {what: path.absolute() for what, path in run_files(config).items()}
    # An audit folder is read by people, not served: its report sits beside the sitemaps.
    served = config.audit.record_path is None
    for what, path in files.items():
        if served and (path == out or out in path.parents):
            raise ValueError(f"{what} {path} is inside the output folder {out}, which is served publicly")
    for (first, one), (second, other) in combinations(files.items(), 2):
        if one == other:
            raise ValueError(f"{first} and {second} would be the same file: {one}")
