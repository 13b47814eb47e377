"""The crawl's frontier on disk: Scrapy's own scheduler with its disk queues, in the run's
scratch folder beside the output folder (crawler/scratch.py), removed when the run ends.

A site's category pages can queue the whole site within minutes; held in memory, every
waiting request costs about 1 KB, so memory grew with the site (1.3 GB at a million
queued). On disk it costs about 320 bytes of disk instead, and memory depends on the work
in flight. The order is unchanged: one queue per priority (minus the depth: breadth first).

The folder is never Scrapy's ``JOBDIR``: nothing else of the run is kept there, and a run
never continues a queue it finds (``--resume`` rebuilds the frontier from the state
store).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Self

from scrapy.core.scheduler import Scheduler
from scrapy.pqueues import DownloaderAwarePriorityQueue

from crawler.run.context import config_of
from crawler.scratch import done_with, scratch_entry

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

__all__ = ["DiskFrontierScheduler"]


class DiskFrontierScheduler(Scheduler):
    """Scrapy's scheduler, its requests waiting on disk (``SITEMAP_DISK_FRONTIER``, on by default)."""

    queues: Path | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        scheduler = super().from_crawler(crawler)
        try:
            config = config_of(crawler)
        except TypeError:  # a spider of ours that makes no crawl context queues nothing worth it
            return scheduler
        if config.hosts.several:
            # A queue per host, the next request from the host with the fewest in the downloader: a
            # host held by its Crawl-delay never fills the crawl's concurrency while the others wait.
            scheduler.pqclass = DownloaderAwarePriorityQueue  # type: ignore[assignment]  # Scrapy types only its own
        if not crawler.settings.getbool("SITEMAP_DISK_FRONTIER"):
            return scheduler
        output_dir = config.output_dir
        queues = scratch_entry(output_dir, "requests.queue")
        queues.mkdir()
        scheduler.queues, scheduler.dqdir = queues, str(queues)
        return scheduler

    def close(self, reason: str) -> Deferred[None] | None:
        try:
            return super().close(reason)
        finally:
            if self.queues is not None:
                done_with(self.queues)
