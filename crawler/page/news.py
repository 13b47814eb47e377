"""News articles for the Google News sitemap extension (pure)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from crawler.page.structured import find_typed, first_text
from crawler.protocol import NEWS_WINDOW, to_w3c

__all__ = ["NewsArticle", "detect_article", "is_recent"]

_ARTICLE_TYPES = frozenset(
    {
        "NewsArticle",
        "Article",
        "AnalysisNewsArticle",
        "BackgroundNewsArticle",
        "OpinionNewsArticle",
        "ReportageNewsArticle",
        "ReviewNewsArticle",
    }
)


@dataclass(slots=True)
class NewsArticle:
    publication_date: str  # W3C datetime
    title: str
    language: str | None  # from the page; configuration may override it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def detect_article(
    json_ld: list[Any], properties: dict[str, list[str]], page_title: str | None, language: str | None
) -> NewsArticle | None:
    """An article with a publication date, from JSON-LD or Open Graph tags."""
    for node in find_typed(json_ld, _ARTICLE_TYPES):
        published = to_w3c(first_text(node, "datePublished"))
        title = first_text(node, "headline", "name") or page_title
        if published and title:
            return NewsArticle(published, " ".join(title.split()), language)
    published = to_w3c(next(iter(properties.get("article:published_time", [])), None))
    title = next(iter(properties.get("og:title", [])), None) or page_title
    if published and title:
        return NewsArticle(published, " ".join(title.split()), language)
    return None


def is_recent(publication_date: str, now: datetime) -> bool:
    """Published within :data:`NEWS_WINDOW` before *now* (and not in the future)."""
    try:
        moment = datetime.fromisoformat(publication_date)
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return now - NEWS_WINDOW <= moment <= now + timedelta(minutes=5)
