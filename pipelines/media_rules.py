"""Decide what a listed page's media may contribute to the sitemap (SPEC S5).

Named apart from Scrapy's ``MediaPipeline``, which downloads media: this one
only judges what the spider found.

The spider reports every image, video and news candidate it found; this
pipeline applies the per-URL rules: at most 1,000 images, videos only with
all required fields (text cut at a word boundary), news articles only with a
language. What is left out is recorded in the item's notes for the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.items import PageFacts
from crawler.page.languages import news_language
from crawler.page.videos import check_video
from crawler.protocol import MAX_LOC_LENGTH
from crawler.run.context import config_of
from crawler.stats import Stat
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = ["MediaRulesPipeline"]


class MediaRulesPipeline:
    def __init__(self, config: SitemapConfig, stats: StatsCollector):
        self.config = config
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(config_of(crawler), crawler.stats)

    def process_item(self, item: PageFacts) -> PageFacts:
        if any(len(image) > MAX_LOC_LENGTH for image in item.images):
            kept_images = [image for image in item.images if len(image) <= MAX_LOC_LENGTH]
            item.notes.append(
                f"{len(item.images) - len(kept_images)} image URL(s) over {MAX_LOC_LENGTH} characters left out"
            )
            item.images = kept_images
        limit = self.config.max_images_per_url
        if len(item.images) > limit:
            extra = len(item.images) - limit
            item.images = item.images[:limit]
            item.notes.append(f"{extra} image(s) over the limit of {limit} per URL left out")
            self.stats.inc_value(Stat.IMAGES_OVER_LIMIT, extra)
        kept = []
        for video in item.videos:
            problem = check_video(video, item.url)
            if problem:
                item.notes.append(problem)
                self.stats.inc_value(Stat.VIDEOS_LEFT_OUT)
            else:
                kept.append(video)
        item.videos = kept
        if item.news:
            language = self.config.news_language or news_language(item.news.language)
            if language is None:
                item.notes.append("news article left out: no language (set <html lang> or --news-language)")
                item.news = None
            else:
                item.news.language = language
        self.stats.inc_value(Stat.IMAGES_LISTED, len(item.images))
        self.stats.inc_value(Stat.VIDEOS_LISTED, len(item.videos))
        return item
