"""The garbage-collector extension changes the collector only while the engine runs."""

from __future__ import annotations

import gc

from scrapy import signals
from scrapy.utils.test import get_crawler

from crawler.extensions.gctuning import CRAWL_THRESHOLDS, GarbageCollection


def test_thresholds_and_freeze_last_as_long_as_the_engine() -> None:
    before = gc.get_threshold()
    crawler = get_crawler()
    extension = GarbageCollection.from_crawler(crawler)  # signals hold weak references
    crawler.signals.send_catch_log(signals.engine_started)
    try:
        assert gc.get_threshold() == CRAWL_THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        crawler.signals.send_catch_log(signals.engine_stopped)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert extension.saved is None
