"""Tell IndexNow what a published run added, changed or removed (SPEC S6).

Off unless an endpoint and a key are configured. Runs when the export has
published (the ``sitemaps_published`` signal): the URLs come from the run
state, the outcome goes into the export result and ``OUT.indexnow.json``. A
failed notification never fails the run: the sitemaps are published.

Its requests cannot go through Scrapy's downloader: the export publishes in
``spider_closed``, once the engine has closed its downloader, and the endpoint
is another host, which the crawl's middlewares refuse (a request carries no
rule switch). So the crawler's standalone client sends them from a worker
thread (``deferToThread``) and the reactor runs on; Scrapy waits for the
``engine_stopped`` handler, which waits for that thread, so the crawl ends
with the outcome in its summary.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

from crawler.results import ExportResult, Notification
from crawler.run.context import config_of, context_of
from crawler.services.indexnow import submit
from crawler.signals import sitemaps_published
from settings.checks import indexnow_path
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

__all__ = ["IndexNowNotifier"]


class IndexNowNotifier:
    def __init__(self, crawler: Crawler, config: SitemapConfig, user_agent: str):
        self.crawler = crawler
        self.config = config
        self.user_agent = user_agent
        self._sending: Deferred[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        if not (config.indexnow_endpoint and config.indexnow_key and config.indexnow_key_location):
            raise NotConfigured  # off unless asked for: no warning
        notifier = cls(crawler, config, str(crawler.settings.get("USER_AGENT")))
        crawler.signals.connect(notifier.sitemaps_published, signal=sitemaps_published)
        crawler.signals.connect(notifier.engine_stopped, signal=signals.engine_stopped)
        return notifier

    def sitemaps_published(self, result: ExportResult) -> None:
        state = context_of(self.crawler).run_state
        if state is None:
            result.notification = Notification(skipped="it needs the state store to know what changed")
            return
        urls = state.announcements()  # here, on the reactor's thread: the state store is not for threads
        self._sending = deferToThread(self._notify, urls).addCallback(_record, result)

    async def engine_stopped(self) -> None:
        """Scrapy waits for this handler: the crawl ends once the notification has."""
        if self._sending is not None:
            await maybe_deferred_to_future(self._sending)

    def _notify(self, urls: list[str]) -> Notification:
        """In a worker thread: every request, each retry's backoff and the outcome file. A crawl of
        several hosts tells IndexNow host by host, each with the key file on its own host."""
        config = self.config
        assert config.indexnow_endpoint and config.indexnow_key and config.indexnow_key_location
        by_host: dict[str, list[str]] = {}
        for url in urls:
            by_host.setdefault(urlsplit(url).netloc, []).append(url)
        submitted, batches, errors = 0, [], []
        for netloc, mine in by_host.items():
            report = submit(
                mine,
                endpoint=config.indexnow_endpoint,
                key=config.indexnow_key,
                key_location=urlsplit(config.indexnow_key_location)._replace(netloc=netloc).geturl(),
                user_agent=self.user_agent,
                batch_size=config.indexnow_batch,
                timeout=config.indexnow_timeout,
                pinned=config.hosts.pinned,
            )
            submitted += report.submitted
            batches += [{"host": netloc, **batch} for batch in report.batches]
            errors += [report.error] if report.error else []
        error = "; ".join(errors) or None
        path = indexnow_path(config.output_dir)
        outcome = {"urls": urls, "submitted": submitted, "batches": batches, "error": error}
        path.write_text(json.dumps(outcome, indent=1), encoding="utf-8")
        return Notification(len(urls), submitted, len(batches), error, path=path)


def _record(notification: Notification, result: ExportResult) -> None:
    result.notification = notification
