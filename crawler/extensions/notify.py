"""Tell IndexNow what a published run added, changed or removed (SPEC S6).

Off unless an endpoint and a key are configured. Runs when the export has
published (the ``sitemaps_published`` signal): the URLs come from the run
state, the outcome goes into the export result and ``OUT.indexnow.json``. A
failed notification never fails the run: the sitemaps are published.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from crawler.extensions.runstate import RunState
from crawler.results import ExportResult, Notification
from crawler.services.indexnow import submit
from crawler.signals import sitemaps_published
from settings.config import SitemapConfig, beside

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

__all__ = ["IndexNowNotifier"]


class IndexNowNotifier:
    def __init__(self, crawler: Crawler, config: SitemapConfig):
        self.crawler = crawler
        self.config = config

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = SitemapConfig.from_crawler(crawler)
        if not (config.indexnow_endpoint and config.indexnow_key and config.indexnow_key_location):
            raise NotConfigured  # off unless asked for: no warning
        notifier = cls(crawler, config)
        crawler.signals.connect(notifier.sitemaps_published, signal=sitemaps_published)
        return notifier

    def sitemaps_published(self, result: ExportResult) -> None:
        config = self.config
        assert config.indexnow_endpoint and config.indexnow_key and config.indexnow_key_location
        state = RunState.of(self.crawler)
        if state is None:
            result.notification = Notification(skipped="it needs the state store to know what changed")
            return
        urls = state.announcements()
        report = submit(
            urls,
            endpoint=config.indexnow_endpoint,
            key=config.indexnow_key,
            key_location=config.indexnow_key_location,
            batch_size=config.indexnow_batch,
            timeout=config.indexnow_timeout,
        )
        path = beside(config.output_dir, "indexnow.json")
        outcome = {"urls": urls, "submitted": report.submitted, "batches": report.batches, "error": report.error}
        path.write_text(json.dumps(outcome, indent=1), encoding="utf-8")
        result.notification = Notification(len(urls), report.submitted, len(report.batches), report.error, path=path)
