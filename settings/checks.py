"""Checks across settings, before anything is crawled (exit status 2 at the CLI).

Every file a run writes beside the output folder must be a file of its
own, and none of them may sit inside that folder, which is served
publicly; paths are compared after following symbolic links, so a link
cannot make two of them one. (The numbers are checked by
:func:`settings.values.check_numbers`, against :mod:`settings.ranges`.)
"""

from __future__ import annotations

import os
from itertools import combinations
from pathlib import Path
from typing import Protocol

from crawler.failures import ConfigError
from crawler.state.lock import journal_paths, store_lock_path

__all__ = ["RunPaths", "beside", "check_paths", "indexnow_path", "output_lock_path", "run_files"]


class _AuditPaths(Protocol):
    @property
    def record_path(self) -> Path | None: ...


class RunPaths(Protocol):
    """The paths of a run (what :class:`settings.config.SitemapConfig` holds), as the checks read them."""

    @property
    def output_dir(self) -> Path: ...
    @property
    def report_path(self) -> Path: ...
    @property
    def removals_path(self) -> Path: ...
    @property
    def changes_path(self) -> Path: ...
    @property
    def state_path(self) -> Path | None: ...
    @property
    def audit(self) -> _AuditPaths: ...


def beside(output_dir: Path, suffix: str) -> Path:
    """``<parent>/<folder>.<suffix>``: beside the output folder, never inside
    it, because that folder is often served publicly."""
    output_dir = output_dir.absolute()
    return output_dir.parent / f"{output_dir.name}.{suffix}"


def output_lock_path(output_dir: Path) -> Path:
    """``OUT.lock``: one run writes into an output folder at a time (the export, an audit)."""
    return beside(output_dir, "lock")


def indexnow_path(output_dir: Path) -> Path:
    """``OUT.indexnow.json``: what IndexNow was told, and answered."""
    return beside(output_dir, "indexnow.json")


def _audit_files(config: RunPaths) -> dict[str, Path]:
    """What an audit writes into its folder besides the sitemaps (crawler.audit.report)."""
    from crawler.audit.findings import Kind  # noqa: PLC0415 - an audit only

    record = config.audit.record_path
    if record is None:
        return {}
    names = ["report.json", "urls.csv", "report.html", *(f"findings-{kind.value}.csv" for kind in Kind)]
    files = {f"the audit's {name}": config.output_dir / name for name in names}
    files["the audit record"] = record
    return files


def run_files(config: RunPaths) -> dict[str, Path]:
    """Every file a run writes outside the sitemap set, by what it is."""
    files = {
        "the report (--report)": config.report_path,
        "the removals report (--removals)": config.removals_path,
        "the changes file (--changes)": config.changes_path,
        "the output folder's lock": output_lock_path(config.output_dir),
        "the IndexNow outcome": indexnow_path(config.output_dir),
    }
    if config.state_path is not None:
        files["the state store (--state)"] = config.state_path
        files["the state store's lock"] = store_lock_path(config.state_path)
        for journal, path in journal_paths(config.state_path).items():  # SQLite's write-ahead log beside it
            files[f"the state store's -{journal} file"] = path
    return {**files, **_audit_files(config)}


def _real(path: Path) -> Path:
    """Where *path* leads: absolute, every symbolic link followed (a loop left as it is)."""
    return Path(os.path.realpath(path))


def check_paths(config: RunPaths) -> None:
    """Refuse two run files on one path, or a run file inside or on the output folder. Paths are
    compared where they really lead (symbolic links followed, as the writes would follow them):
    a report that is a link to the state store, or one inside a link to the output folder, is
    the same file and the same folder."""
    out = _real(config.output_dir)
    files = {what: _real(path) for what, path in run_files(config).items()}
    # An audit folder is read by people, not served: its report sits beside the sitemaps.
    served = config.audit.record_path is None
    for what, path in files.items():
        if path == out:
            raise ConfigError(f"{what} {path} would be the output folder itself")
        if served and out in path.parents:
            raise ConfigError(f"{what} {path} is inside the output folder {out}, which is served publicly")
    for (first, one), (second, other) in combinations(files.items(), 2):
        if one == other:
            raise ConfigError(f"{first} and {second} would be the same file: {one}")
