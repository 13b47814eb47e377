"""The crawl report: one JSON line per URL seen, with outcome and reason.

It answers "why is my sitemap empty?" and is the base of the staging audit.
Written to a temporary file while the crawl runs and renamed into place at
the end, beside (never inside) the public output folder by default.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from contextlib import suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING

from scrapy import signals

from crawler.coverage.parameters import report_parameters
from crawler.items import PageFacts
from crawler.reasons import Outcome, Reason, outcome_of
from crawler.results import OriginCounts, StartOutcome
from crawler.run.context import config_of, context_of
from crawler.signals import url_warning
from crawler.stats import Stat, dropped, warning
from crawler.urls import site_root
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["REPORT_FIELDS", "CrawlReport", "ReportLine"]

WARNING = "warning"

ReportLine = dict[str, object]
#: Every field a report line can have, and what it holds: the report format (never rename one).
REPORT_FIELDS = {
    "url": "the URL, normalised as the crawl spells it",
    "status": "the HTTP status of its answer; null when it was never requested",
    "outcome": "`listed`, `excluded` or `warning` (a whole-site finding about the URL)",
    "reason": "null when listed; else a reason code, or for a warning its code (the tables below)",
    "detail": "what exactly: the limit, the duplicate kept, the robots.txt rule, ... (null when nothing to add)",
    "depth": "clicks from the start URL (a sitemap entry is 1; a redirect target keeps its URL's depth)",
    "referrer": "the first page found linking to it (null for the start URL and sitemap entries)",
    "redirect_to": "a redirect's target",
    "redirect_chain": "the URLs of the redirect chain that led here",
    "canonical": "the URL its canonical names",
    "images": "listed lines: the number of images its page rules kept (the sitemap also leaves out the site-wide"
    " images, counted in the summary)",
    "videos": "listed lines: the number of videos written for it",
    "alternates": "listed lines: the number of hreflang alternates found for it (the sitemap writes those of a"
    " cluster with another version that is listed and links back)",
    "news": "listed lines: its news publication date, when it is a news article",
    "render": "with --render: whether the page was rendered, why (because) or why not (skipped), what script "
    "changed (noindex, canonical, links), and a failed render's cause",
    "notes": "what was left out of its entry and why (a video, images over the limit, an invalid hreflang)",
}


def _remove_stale(path: Path) -> None:
    """Temp files of killed runs (``.NAME.PID.tmp``), when their pid is gone."""
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        pid = stale.name.removeprefix(f".{path.name}.").removesuffix(".tmp")
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            stale.unlink(missing_ok=True)
        except PermissionError:
            continue  # alive, another user's


class CrawlReport:
    def __init__(self, crawler: Crawler, config: SitemapConfig):
        self.crawler = crawler
        self.stats = crawler.stats
        self.result = context_of(crawler).result
        self.config = config
        self.path = config.report_path
        self.tmp_path = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.file: IO[str] | None = None
        self.scope = config.hosts.scope(config.start_url)
        self.several = config.hosts.several
        # Out-of-scope URLs on other origins of the same site (www vs bare
        # host, http vs https, another port): the likeliest wrong start URL.
        self.sister_origins: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        report = cls(crawler, config_of(crawler))
        crawler.signals.connect(report.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(report.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(report.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(report.url_warning, signal=url_warning)
        # Closed after every spider_closed handler: the export still reports warnings then.
        crawler.signals.connect(report.engine_stopped, signal=signals.engine_stopped)
        return report

    def spider_opened(self, spider: Spider) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(self.path)
        self.file = open(self.tmp_path, "w", encoding="utf-8")  # noqa: SIM115 - closed at spider_closed

    def item_scraped(self, item: PageFacts, response: Response | None, spider: Spider) -> None:
        self._record(item, outcome_of(None))

    def item_dropped(self, item: PageFacts, response: Response | None, exception: Exception, spider: Spider) -> None:
        self._record(item, outcome_of(exception))

    def _record(self, item: PageFacts, outcome: Outcome) -> None:
        reason, detail = outcome.reason, outcome.detail
        if reason is None:
            self.stats.inc_value(Stat.LISTED)
        else:
            self.stats.inc_value(dropped(reason))
            if reason == Reason.OUT_OF_SCOPE and self.scope.same_site(item.url) and not self.scope.contains(item.url):
                self.sister_origins[site_root(item.url)] += 1
        if self.several and self.scope.contains(item.url):  # the summary's line per host
            counts = self.result.origins.setdefault(site_root(item.url), OriginCounts())
            counts.add(listed=reason is None, answered=item.status is not None and item.status < 500)
        if item.url == self.config.start_url:
            self.result.start = StartOutcome(reason, detail)
        line: ReportLine = {
            "url": item.url,
            "status": item.status,
            "outcome": outcome.word,
            "reason": reason,
            "detail": detail or None,
            "depth": item.depth,
            "referrer": item.referrer,
        }
        if item.redirect_to:
            line["redirect_to"] = item.redirect_to
        if item.redirect_chain:
            line["redirect_chain"] = item.redirect_chain
        if item.canonical:
            line["canonical"] = item.canonical
        if reason is None:
            line["images"] = len(item.images)
            line["videos"] = len(item.videos)
            line["alternates"] = len(item.alternates)
            if item.news:
                line["news"] = item.news.publication_date
        if item.render is not None:
            line["render"] = item.render
        if item.notes:
            line["notes"] = item.notes
        self._write(line)

    def url_warning(self, url: str, code: str, detail: str) -> None:
        """A whole-site finding about a listed URL, on a line of its own."""
        self.stats.inc_value(warning(code))
        self._write({"url": url, "outcome": WARNING, "reason": code, "detail": detail})

    def _write(self, line: ReportLine) -> None:
        if self.file is not None:
            self.file.write(json.dumps(line, ensure_ascii=False) + "\n")

    def engine_stopped(self) -> None:
        if self.file is None:
            return
        self.file.close()
        self.file = None
        try:
            os.replace(self.tmp_path, self.path)
        except OSError as error:
            with suppress(OSError):
                self.tmp_path.unlink()
            self.result.side_errors.append(f"report {self.path} not written: {error.strerror or error}")
            return
        if self.sister_origins:
            self.result.sister_origin = self.sister_origins.most_common(1)[0]
        self.result.report_path = self.path
        try:
            self.result.parameters = report_parameters(self.path)
        except (OSError, sqlite3.Error) as error:  # a full disk: the sitemaps are not at stake
            self.result.side_errors.append(f"parameter report not made: {error}")
