"""A Scrapy extension for tests: the reactor's heartbeat, written to a file.

A test enables it in a config file's ``[settings] EXTENSIONS`` and names the
file in ``$TEST_REACTOR_TICKS`` (the CLI refuses a setting it does not know).
From the engine's start, every
50 ms the reactor appends ``time.monotonic()`` (one clock for every process
on Linux) to the file: a test tells from it whether the reactor ran while a
server held a request.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, TextIO

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet.task import LoopingCall

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

TICK = 0.05


class ReactorTicks:
    def __init__(self, file: TextIO):
        self.file = file
        self.loop = LoopingCall(self.tick)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = os.environ.get("TEST_REACTOR_TICKS")
        if not path:
            raise NotConfigured
        ticks = cls(open(path, "a", buffering=1, encoding="ascii"))  # noqa: SIM115 - open for the whole run
        crawler.signals.connect(ticks.engine_started, signal=signals.engine_started)
        return ticks

    def engine_started(self) -> None:
        self.loop.start(TICK)

    def tick(self) -> None:
        self.file.write(f"{time.monotonic()}\n")


def read_ticks(path: str) -> list[float]:
    with open(path, encoding="ascii") as file:
        return [float(line) for line in file if line.strip()]
