"""Where an audit writes: a staging folder beside OUT, swapped in whole when the audit is done.

The crawl (its sitemap preview, its report, the audit record) and the audit's report are
pointed into the staging folder; files kept beside OUT across runs (the state store, the
removals report) stay where they would be without it. Until the swap OUT is not touched,
so any failure leaves the previous audit's output byte for byte, and says so in one line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Self

from scrapy.settings import Settings

from crawler.audit.staged import StagedFolder, finished_at
from crawler.cli.usage import UsageError
from crawler.state.lock import FileLock, Locked
from settings.checks import beside, output_lock_path

__all__ = ["RECORD_NAME", "AuditOutput"]

#: The audit recorder's facts, inside the staging folder, removed before the swap.
RECORD_NAME = ".audit-record.sqlite3"


def _inside(path: Path, folder: Path) -> bool:
    real, real_folder = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    return real == real_folder or real_folder in real.parents


class AuditOutput:
    """``with AuditOutput(settings, out) as output:`` write into ``output.folder``, :meth:`swap_in`
    at the end. Leaving the block without it removes the folder and keeps OUT as it was."""

    def __init__(self, settings: Settings, out: Path):
        self.settings = settings
        self.out = out
        self.swapped = False
        self._staged: StagedFolder | None = None
        self._lock: FileLock | None = None

    @property
    def folder(self) -> Path:
        """The staging folder the whole output is written into."""
        assert self._staged is not None, "inside the with block"
        return self._staged.staging

    def __enter__(self) -> Self:
        try:
            # On the real path: two symbolic links to one folder are one folder, with one lock.
            self._lock = FileLock(output_lock_path(Path(os.path.realpath(self.out))), f"output folder {self.out}")
        except Locked as error:
            raise UsageError(str(error)) from None
        try:
            self._check_ours()
            self._staged = StagedFolder.begin(self.out)
        except OSError as error:
            self._lock.release()
            raise UsageError(f"audit folder {self.out} is not writable: {error.strerror or error}") from None
        except UsageError:
            self._lock.release()
            raise
        self._point_into(self._staged.staging)
        return self

    def _check_ours(self) -> None:
        """OUT is replaced as a whole: refuse one that holds anything but an earlier audit's output."""
        if self.out.is_dir() and any(self.out.iterdir()) and not (self.out / "report.json").exists():
            raise UsageError(
                f"audit folder {self.out} holds files that are not an audit's output (no report.json): "
                "the audit replaces the whole folder, so give a new or empty one"
            )

    def _point_into(self, staging: Path) -> None:
        settings, out = self.settings, self.out
        report = Path(str(settings.get("SITEMAP_REPORT_PATH")))
        if _inside(report, out):
            relative = Path(os.path.realpath(report)).relative_to(os.path.realpath(out))
            settings.set("SITEMAP_REPORT_PATH", str(staging / relative), priority="cmdline")
        for key, suffix in (
            ("SITEMAP_STATE_PATH", "state.sqlite"),
            ("SITEMAP_REMOVALS_PATH", "removals.jsonl"),
            ("SITEMAP_CHANGES_PATH", "changes.jsonl"),
        ):
            if not settings.get(key):  # where they are without a staging folder: beside OUT
                settings.set(key, str(beside(out, suffix)), priority="cmdline")
        settings.set("SITEMAP_OUTPUT_DIR", str(staging), priority="cmdline")
        settings.set("SITEMAP_AUDIT_RECORD", str(staging / RECORD_NAME), priority="cmdline")

    def swap_in(self) -> None:
        assert self._staged is not None, "inside the with block"
        (self._staged.staging / RECORD_NAME).unlink(missing_ok=True)
        self._staged.swap_in()
        self.swapped = True

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self._staged is not None and not self.swapped:
                self._staged.discard()
                finished = finished_at(self.out)
                if finished is not None:
                    print(
                        f"sitemap-crawler: the previous audit output in {self.out} was left as it was "
                        f"(written {finished})",
                        file=sys.stderr,
                    )
        finally:
            if self._lock is not None:
                self._lock.release()
