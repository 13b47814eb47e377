"""The Scrapy internals this project reaches into (pyproject.toml lists them, with why): each
test fails loudly when a Scrapy release changes what the code relies on."""

from __future__ import annotations

import hashlib
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.core.downloader import Downloader, Slot
from scrapy.statscollectors import MemoryStatsCollector

from tests.test_adaptive_speed import PAGES, LoadedServer, serve

REPRO = Path(__file__).parent / "upstream" / "concurrency_repro.py"
#: Scrapy 2.19.0's Downloader._process_queue, which crawler/downloader.py copies with one line added.
PROCESS_QUEUE_2_19 = "872b81a4bbb4cb1ad45b25c6f8803344a3a18fd5743dec234733891ab94559c8"


@pytest.fixture
def counting() -> Iterator[LoadedServer]:
    yield from serve(k=0.002)  # answers slow a little with load, so requests overlap


def most_in_flight(server: LoadedServer, downloader: str | None) -> int:
    server.arrivals.clear()
    command = [sys.executable, str(REPRO), server.url(), *([downloader] if downloader else [])]
    subprocess.run(command, check=True, timeout=120, capture_output=True)
    pages = server.pages()
    assert len(pages) == PAGES + 1  # every page of the site once, and the start page
    return max(load for _, _, load in pages)


def test_scrapys_downloader_still_overshoots_the_per_site_limit(counting: LoadedServer) -> None:
    """The bug crawler/downloader.py works around, reproduced on stock Scrapy; when this fails,
    Scrapy has fixed it: drop crawler/downloader.py and the DOWNLOADER setting."""
    assert most_in_flight(counting, None) > 2
    assert most_in_flight(counting, "crawler.downloader.SiteDownloader") <= 2


def test_the_copied_downloader_queue_pass_is_scrapys_own() -> None:
    source = inspect.getsource(Downloader._process_queue)
    assert hashlib.sha256(source.encode()).hexdigest() == PROCESS_QUEUE_2_19, (
        "Scrapy's Downloader._process_queue changed: compare it with crawler/downloader.py's copy"
    )
    from scrapy.utils.defer import _schedule_coro  # noqa: F401 - the copy schedules downloads with it

    for name in ("_wait_for_download", "_latercall", "get_slot_key"):
        assert callable(getattr(Downloader, name, None)), name
    slot = Slot(2, 0.0)
    for name in ("queue", "transferring", "active", "lastseen", "latercall", "delay", "concurrency", "jitter"):
        assert hasattr(slot, name), name


def test_the_stats_collector_still_wraps_every_attribute_access() -> None:
    """crawler/stats.py replaces this wrapper (a deprecation shim that cost 3% of a crawl)."""
    assert MemoryStatsCollector.__getattribute__ is not object.__getattribute__


def test_the_twisted_channel_internals_serve_relies_on_are_there() -> None:
    """crawler/cli/serve.py reads the request line of a refused request and answers Twisted's bare 400 itself."""
    from twisted.web.http import HTTPChannel

    source = inspect.getsource(HTTPChannel.lineReceived)  # where the request line is kept
    for name in ("_command", "_path"):
        assert f"self.{name} = " in source, f"HTTPChannel.{name} is gone: see crawler/cli/serve.py"
    assert callable(getattr(HTTPChannel, "_respondToBadRequestAndDisconnect", None))


def test_the_scheduler_still_reads_its_disk_queue_folder_from_dqdir() -> None:
    """crawler/schedulers/disk.py sets Scheduler.dqdir after the scheduler is made (its folder is
    the run's scratch folder, not JOBDIR): Scrapy must still read that attribute when it opens."""
    from scrapy.core.scheduler import Scheduler

    opening = inspect.getsource(Scheduler.open)
    assert "if self.dqdir" in opening, "Scheduler.dqdir is gone: see crawler/schedulers/disk.py"
    assert "key=self.dqdir" in inspect.getsource(Scheduler._dq)  # the queues' folder
