"""The progress line and the summary counts, from real Scrapy stats."""

from __future__ import annotations

import time

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.extensions.progress import Progress, progress_counts
from crawler.pace import span_words
from crawler.spiders.site import SiteSpider


def crawler_with(progress: bool):  # type: ignore[no-untyped-def]
    settings = {"SITEMAP_START_URL": "http://127.0.0.1/", "SITEMAP_PROGRESS": progress, "SITEMAP_STATE": False}
    crawler = get_crawler(SiteSpider, settings_dict=settings)
    crawler.spider = SiteSpider.from_crawler(crawler)  # as Scrapy does first: it makes the crawl's context
    crawler.stats.open_spider()
    return crawler


def test_counts_from_stats() -> None:
    stats = {
        "response_received_count": 12,
        "scheduler/enqueued": 20,
        "scheduler/dequeued": 14,
        "sitemap/listed": 7,
        "sitemap/dropped/noindex": 2,
        "sitemap/dropped/redirect": 3,
        "sitemap/index_url": "http://x/sitemap.xml",
    }
    assert progress_counts(stats) == {"crawled": 12, "queued": 6, "listed": 7, "excluded": 5}


def test_progress_line(capsys: pytest.CaptureFixture[str]) -> None:
    crawler = crawler_with(progress=True)
    for key, value in {"response_received_count": 30, "sitemap/listed": 25, "sitemap/dropped/status": 4}.items():
        crawler.stats.set_value(key, value)
    Progress.from_crawler(crawler).show()
    line = capsys.readouterr().err
    assert "crawled 30 | queued 0 | listed 25 | excluded 4 |" in line
    assert line.rstrip().endswith("pages/s")


def test_the_queue_is_timed_at_the_pace_of_the_last_minute(capsys: pytest.CaptureFixture[str]) -> None:
    crawler = crawler_with(progress=True)
    for key, value in {"response_received_count": 90, "scheduler/enqueued": 7290, "scheduler/dequeued": 90}.items():
        crawler.stats.set_value(key, value)
    progress = Progress.from_crawler(crawler)
    progress.recent.append((time.monotonic() - 60, 30))  # 60 pages in the last minute: 1 a second
    progress.show()
    line = capsys.readouterr().err
    assert "queued 7200 |" in line and line.rstrip().endswith("| queue: about 2 h at this pace"), line


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(20, "under a minute"), (720, "about 12 min"), (3600 * 2 + 47 * 60, "about 2 h 47 min"),
     (86400 + 4 * 3600, "about 1 day 4 h"), (11 * 86400, "about 11 days")],
)  # fmt: skip
def test_a_long_wait_in_words(seconds: float, words: str) -> None:
    assert span_words(seconds) == words


def test_progress_off_by_default() -> None:
    with pytest.raises(NotConfigured):
        Progress.from_crawler(crawler_with(progress=False))
