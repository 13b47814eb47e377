"""Everything a page offers to the sitemap extensions, as plain facts (pure).

Images, videos, hreflang alternates and news metadata are gathered from one
parsed page; URLs come out normalised and de-duplicated. Nothing is judged
here: limits and required fields are the media rules pipeline's business.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from crawler.page.html import PageHtml
from crawler.page.languages import valid_alternates
from crawler.page.news import NewsArticle, detect_article
from crawler.page.videos import Video, merge_videos, player_video, videos_from_json_ld
from crawler.urls import resolve_link

__all__ = ["PageMedia", "collect_media"]

Normalizer = Callable[[str | None], str | None]


@dataclass(slots=True)
class PageMedia:
    images: list[str] = field(default_factory=list)
    videos: list[Video] = field(default_factory=list)
    alternates: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    news: NewsArticle | None = None


def _unique(urls: list[str | None]) -> list[str]:
    return list(dict.fromkeys(u for u in urls if u))


def collect_media(page: PageHtml, normalize: Normalizer, *, news: bool) -> PageMedia:
    """Images, videos, alternates (and a news article when *news*) of *page*.

    *normalize* turns a raw absolute URL into its normal form, or ``None``
    when it is not an http(s) URL (``data:`` images, say).
    """
    og_images = page.properties.get("og:image", []) + page.properties.get("og:image:url", [])
    images = _unique([normalize(u) for u in page.images + og_images])

    def resolve(url: str | None) -> str | None:
        return normalize(resolve_link(page.base_url, url)) if url else None

    page_title = next(iter(page.properties.get("og:title", [])), None) or page.title
    description = next(iter(page.meta.get("description", []) + page.properties.get("og:description", [])), None)
    candidates = videos_from_json_ld(page.json_ld, resolve)
    for html_video in page.videos:
        if html_video.player:
            video = player_video(normalize(html_video.player) or html_video.player, html_video.title or page_title)
            if video is None:
                continue  # an iframe that is not a known video player
        else:
            video = Video(
                thumbnail_loc=normalize(html_video.poster),
                title=html_video.title or page_title,
                content_loc=normalize(html_video.content),
            )
        video.description = video.description or description
        candidates.append(video)
    alternates, problems = valid_alternates((tag, url) for tag, raw in page.alternates if (url := normalize(raw)))
    article = detect_article(page.json_ld, page.properties, page_title, page.lang) if news else None
    return PageMedia(images, merge_videos(candidates), alternates, problems, article)
