"""The audit recorder: what the staging audit needs of every URL, kept on disk.

The crawl report has one line per URL; the audit also needs every link
between pages (broken links name each page linking to them, orphans have
none), titles and raw robots directives (soft 404s, staging blockers).
They go to a SQLite file while the crawl runs, so a big site costs disk,
not memory; :mod:`crawler.audit` reads it once the crawl is over.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured

from crawler.audit.record import SCHEMA, record_page
from crawler.items import PageFacts
from crawler.reasons import Outcome, outcome_of
from crawler.run.context import config_of
from crawler.run.robots import SiteRules
from crawler.signals import url_warning
from crawler.urls import normalize_or_raw, site_root
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

__all__ = ["AuditRecorder"]

_BATCH = 500


class AuditRecorder:
    def __init__(self, config: SitemapConfig):
        assert config.audit.record_path is not None
        self.config = config
        self.hosts = config.audit.hosts
        self.path = config.audit.record_path
        self.db: sqlite3.Connection | None = None
        self.pending = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        config = config_of(crawler)
        if config.audit.record_path is None:
            raise NotConfigured  # no message: Scrapy would log it as a warning
        recorder = cls(config)
        crawler.signals.connect(recorder.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(recorder.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(recorder.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(recorder.url_warning, signal=url_warning)
        crawler.signals.connect(recorder.robots_parsed, signal=signals.robots_parsed)
        crawler.signals.connect(recorder.engine_stopped, signal=signals.engine_stopped)
        return recorder

    def spider_opened(self, spider: Spider) -> None:
        self.path.unlink(missing_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.executescript(SCHEMA)

    def item_scraped(self, item: PageFacts, response: Response | None, spider: Spider) -> None:
        self._record(item, outcome_of(None))

    def item_dropped(self, item: PageFacts, response: Response | None, exception: Exception, spider: Spider) -> None:
        self._record(item, outcome_of(exception))

    def _staging(self, url: str) -> str:
        return self.hosts.to_staging(url) if self.hosts is not None else url

    def _record(self, item: PageFacts, outcome: Outcome) -> None:
        reason, detail = outcome.reason, outcome.detail
        if self.db is None:
            return
        record_page(
            self.db,
            {
                "url": item.url,
                "status": item.status,
                "reason": reason,
                "detail": detail or None,
                "depth": item.depth,
                "referrer": item.referrer,
                "canonical": item.canonical,
                "redirect_to": item.redirect_to,
                "redirect_chain": json.dumps(item.redirect_chain) if item.redirect_chain else None,
                "title": item.title,
                "content_type": item.content_type,
                "digest": item.content_digest,
                "header_robots": json.dumps(item.header_robots) if item.header_robots else None,
                "meta_robots": json.dumps(item.meta_robots) if item.meta_robots else None,
                "alternates": json.dumps(item.alternates) if item.alternates else None,
                "images": len(item.images),
                "notes": json.dumps(item.notes) if item.notes else None,
                "response_ms": item.response_ms,
                "bytes": item.body_bytes,
            },
        )
        if item.links:
            self._links(self.db, item)
        self._tick()

    def _links(self, db: sqlite3.Connection, item: PageFacts) -> None:
        """Each target once; a click (``<a>``, ``<area>``) with the text of its first anchor."""
        params = self.config.strip_params
        clicks: dict[str, str] = {}
        for link, text in item.anchors.items():
            clicks.setdefault(normalize_or_raw(self._staging(link), item.encoding, params), text)
        targets = {normalize_or_raw(self._staging(link), item.encoding, params) for link in item.links}
        targets.discard(item.url)
        rows = ((item.url, target, target in clicks, clicks.get(target)) for target in targets)
        db.executemany("INSERT INTO links VALUES (?, ?, ?, ?)", rows)

    def url_warning(self, url: str, code: str, detail: str) -> None:
        if self.db is not None:
            self.db.execute("INSERT INTO warnings VALUES (?, ?, ?)", (self._staging(url), code, detail))
            self._tick()

    def robots_parsed(self, robotparser: RobotParser, request: object = None) -> None:
        sitemaps = robotparser.sitemaps if isinstance(robotparser, SiteRules) else []
        if self.db is not None:
            root = site_root(url) if isinstance(url := getattr(request, "url", None), str) else ""
            self.db.executemany("INSERT OR IGNORE INTO robots_sitemaps VALUES (?, ?)", ((s, root) for s in sitemaps))

    def _tick(self) -> None:
        self.pending += 1
        if self.pending >= _BATCH and self.db is not None:
            self.db.commit()
            self.pending = 0

    def engine_stopped(self) -> None:
        if self.db is not None:
            self.db.execute("CREATE INDEX IF NOT EXISTS links_to ON links (target, source, click, anchor)")
            self.db.commit()
            self.db.close()
            self.db = None
