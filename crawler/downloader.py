"""Scrapy's downloader, with the per-site concurrency limit enforced.

In Scrapy 2.19 on the asyncio reactor a download is scheduled as a task and
only counts as transferring once that task starts, so one pass over a
slot's queue with no delay sends every queued request at once:
``CONCURRENT_REQUESTS_PER_DOMAIN`` (``--concurrency``) did not hold, only the
global ``CONCURRENT_REQUESTS`` did. Here a request counts as transferring
from the moment it leaves the queue (the download adds it again and removes
it when done, as before).
"""

from __future__ import annotations

from time import monotonic
from typing import TYPE_CHECKING

from scrapy.core.downloader import Downloader
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import _schedule_coro

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot

__all__ = ["SiteDownloader"]


class SiteDownloader(Downloader):
    def _process_queue(self, slot: Slot) -> None:
        if slot.latercall:
            return  # a delayed pass is already due
        now = monotonic()
        delay = slot.download_delay()
        if delay:
            penalty = delay - now + slot.lastseen
            if penalty > 0:
                slot.latercall = call_later(penalty, self._latercall, slot)
                return
        while slot.queue and slot.free_transfer_slots() > 0:
            slot.lastseen = now
            request, queue_dfd = slot.queue.popleft()
            slot.transferring.add(request)  # counted now, not when its task starts
            _schedule_coro(self._wait_for_download(slot, request, queue_dfd))
            if delay:  # one request per delay
                self._process_queue(slot)
                break
