"""The crawl's frontier on disk: Scrapy's own scheduler with its disk queues, in a folder
of this run's own beside the output folder, removed when the run ends.

A site's category pages can queue the whole site within minutes; held in memory, every
waiting request costs about 1 KB, so memory grew with the site (1.3 GB at a million
queued). On disk it costs about 320 bytes of disk instead, and memory depends on the work
in flight. The order is unchanged: one queue per priority (minus the depth: breadth first).

The folder is never Scrapy's ``JOBDIR``: nothing else of the run is kept there, and a run
never continues a queue it finds (``--resume`` rebuilds the frontier from the state
store). Its name carries the run's process id; one left by a run that was killed (its
process is gone) is removed by the next run beside the same output folder.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Self

from scrapy.core.scheduler import Scheduler

from crawler.context import config_of
from settings.checks import beside

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

__all__ = ["DiskFrontierScheduler", "frontier_folder"]

logger = logging.getLogger(__name__)

_PREFIX = "frontier-"


def frontier_folder(output_dir: Path, pid: int) -> Path:
    """Where the run of process *pid* keeps its queue: ``OUT.frontier-PID`` beside *output_dir*."""
    return beside(output_dir, f"{_PREFIX}{pid}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def remove_leftovers(output_dir: Path) -> None:
    """The queues of earlier runs beside *output_dir* whose process is gone (killed)."""
    prefix = frontier_folder(output_dir, 0).name.removesuffix("0")
    for folder in frontier_folder(output_dir, 0).parent.iterdir():
        pid = folder.name.removeprefix(prefix)
        if folder.name.startswith(prefix) and pid.isdigit() and not folder.is_symlink() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


class DiskFrontierScheduler(Scheduler):
    """Scrapy's scheduler, its requests waiting on disk (``SITEMAP_DISK_FRONTIER``, on by default)."""

    folder: Path | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        scheduler = super().from_crawler(crawler)
        if not crawler.settings.getbool("SITEMAP_DISK_FRONTIER"):
            return scheduler
        try:
            output_dir = config_of(crawler).output_dir
        except TypeError:  # a spider of ours that makes no crawl context queues nothing worth it
            return scheduler
        remove_leftovers(output_dir)
        folder = frontier_folder(output_dir, os.getpid())
        shutil.rmtree(folder, ignore_errors=True)  # never continued: this run's alone
        queues = folder / "requests.queue"
        queues.mkdir(parents=True)
        scheduler.folder, scheduler.dqdir = folder, str(queues)
        return scheduler

    def close(self, reason: str) -> Deferred[None] | None:
        try:
            return super().close(reason)
        finally:
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
