"""The item the spider yields: facts about one URL, no decisions."""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.news import NewsArticle
from crawler.videos import Video

__all__ = ["PageFacts"]


@dataclass(slots=True)
class PageFacts:
    """One URL the crawl met, with what the pipelines need to judge it.

    ``url`` is the normalised URL that was requested (redirects are not
    followed transparently, so it is also the URL that answered). A URL that
    was never fetched carries ``error`` (a :class:`crawler.reasons.Reason`
    value) and ``detail`` instead of a status.
    """

    url: str
    status: int | None = None
    content_type: str | None = None
    redirect_to: str | None = None
    redirect_chain: list[str] = field(default_factory=list)
    robots: frozenset[str] = frozenset()
    canonical: str | None = None
    depth: int = 0
    referrer: str | None = None
    error: str | None = None
    detail: str = ""
    last_modified: str | None = None
    lang: str | None = None
    # Sitemap extensions: candidates found on the page, judged by the media pipeline.
    images: list[str] = field(default_factory=list)
    videos: list[Video] = field(default_factory=list)
    alternates: list[tuple[str, str]] = field(default_factory=list)  # (hreflang, URL)
    news: NewsArticle | None = None
    #: Things worth knowing about a listed URL (a video left out, ...).
    notes: list[str] = field(default_factory=list)
