"""Videos of a page for the video sitemap extension (pure).

Candidates come from JSON-LD ``VideoObject`` and from the HTML (``<video>``
with its ``poster``, YouTube/Vimeo player iframes); the same video seen in
both is merged, structured data winning. :func:`check_video` then applies
Google's rules: required fields, text limits cut at a word boundary.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from crawler.page.structured import find_typed, first_text
from crawler.protocol import CATEGORY_MAX, DESCRIPTION_MAX, DURATION_MAX, TAGS_MAX, TITLE_MAX, to_w3c

__all__ = [
    "Video",
    "check_video",
    "iso8601_seconds",
    "merge_videos",
    "player_video",
    "truncate_words",
    "videos_from_json_ld",
]

_DURATION = re.compile(
    r"P(?:(?P<weeks>\d+(?:\.\d+)?)W)?(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?",
    re.IGNORECASE,
)
_YOUTUBE = re.compile(r"^https?://(?:www\.)?youtube(?:-nocookie)?\.com/embed/([A-Za-z0-9_-]{6,})")
_VIMEO = re.compile(r"^https?://player\.vimeo\.com/video/(\d+)")


@dataclass(slots=True)
class Video:
    """One ``video:video`` entry; fields in the schema's order."""

    thumbnail_loc: str | None = None
    title: str | None = None
    description: str | None = None
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    expiration_date: str | None = None
    rating: float | None = None
    view_count: int | None = None
    publication_date: str | None = None
    tags: list[str] = field(default_factory=list)
    category: str | None = None
    family_friendly: bool | None = None
    requires_subscription: bool | None = None
    live: bool | None = None

    @property
    def key(self) -> str:
        return self.content_loc or self.player_loc or self.thumbnail_loc or self.title or "?"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, [])}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Video:
        return cls(**data)


def iso8601_seconds(text: str | None) -> int | None:
    """Whole seconds of an ISO 8601 duration such as ``PT1H2M3S``."""
    if not text:
        return None
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groupdict().values()):
        return None
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    seconds = (
        parts.get("weeks", 0) * 604800
        + parts.get("days", 0) * 86400
        + parts.get("hours", 0) * 3600
        + parts.get("minutes", 0) * 60
        + parts.get("seconds", 0)
    )
    # "PT999...9S" overflows to infinity: a value no schema allows, dropped like any other.
    return round(seconds) if math.isfinite(seconds) and seconds < 2**31 else None


def truncate_words(text: str, limit: int) -> str:
    """*text* with white space folded, cut at the last word boundary within *limit*."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rfind(" ")
    return (text[:cut] if cut > limit // 2 else text[:limit]).rstrip(" ,;:-")


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    return None


def _number(value: Any) -> float | None:
    """A finite number, or ``None`` ("inf", "NaN" and 1e999 are not counts or ratings)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


#: Views a video may claim: an integer the records and sitemap readers hold in 64 bits.
MAX_VIEW_COUNT = 2**63


def _view_count(node: dict[str, Any]) -> int | None:
    stats = node.get("interactionStatistic") or node.get("interactionCount")
    for stat in stats if isinstance(stats, list) else [stats]:
        if isinstance(stat, dict):
            count = _number(stat.get("userInteractionCount"))
        else:
            count = _number(stat)
        if count is not None and 0 <= count < MAX_VIEW_COUNT:  # a count past 64 bits is no count
            return int(count)
    return None


def _rating(node: dict[str, Any]) -> float | None:
    rating = node.get("aggregateRating")
    if not isinstance(rating, dict):
        return None
    value = _number(rating.get("ratingValue"))
    best = _number(rating.get("bestRating")) or 5.0
    if value is None or best <= 0:
        return None
    return round(max(0.0, min(5.0, value * 5.0 / best)), 1)


def _tags(node: dict[str, Any]) -> list[str]:
    keywords = node.get("keywords")
    if isinstance(keywords, str):
        keywords = keywords.split(",")
    if not isinstance(keywords, list):
        return []
    return [tag for tag in (str(k).strip() for k in keywords) if tag][:TAGS_MAX]


def videos_from_json_ld(documents: list[Any], resolve: Any) -> list[Video]:
    """``VideoObject``s anywhere in the page's JSON-LD; *resolve* makes URLs absolute."""
    videos: list[Video] = []
    for node in find_typed(documents, frozenset({"VideoObject"})):
        publication = node.get("publication")
        videos.append(
            Video(
                thumbnail_loc=resolve(first_text(node, "thumbnailUrl", "thumbnail")),
                title=first_text(node, "name", "headline"),
                description=first_text(node, "description", "caption"),
                content_loc=resolve(first_text(node, "contentUrl")),
                player_loc=resolve(first_text(node, "embedUrl")),
                duration=iso8601_seconds(first_text(node, "duration")),
                expiration_date=to_w3c(first_text(node, "expires")),
                rating=_rating(node),
                view_count=_view_count(node),
                publication_date=to_w3c(first_text(node, "uploadDate", "datePublished")),
                tags=_tags(node),
                category=first_text(node, "genre"),
                family_friendly=_flag(node.get("isFamilyFriendly")),
                requires_subscription=_flag(node.get("requiresSubscription")),
                live=_flag(publication.get("isLiveBroadcast")) if isinstance(publication, dict) else None,
            )
        )
    return videos


def player_video(src: str, title: str | None) -> Video | None:
    """A video for an embedded YouTube or Vimeo player iframe."""
    youtube = _YOUTUBE.match(src)
    if youtube:
        # YouTube serves a thumbnail for every video id at this address.
        thumbnail = f"https://i.ytimg.com/vi/{youtube.group(1)}/hqdefault.jpg"
        return Video(thumbnail_loc=thumbnail, title=title, player_loc=src)
    if _VIMEO.match(src):
        return Video(title=title, player_loc=src)
    return None


def merge_videos(videos: list[Video]) -> list[Video]:
    """One entry per video: entries sharing a content or player URL are merged,
    the earlier (structured data comes first) winning field by field."""
    merged: list[Video] = []
    by_url: dict[str, Video] = {}
    for video in videos:
        urls = [u for u in (video.content_loc, video.player_loc) if u]
        target = next((by_url[u] for u in urls if u in by_url), None)
        if target is None:
            merged.append(video)
            target = video
        else:
            for name in Video.__dataclass_fields__:
                if getattr(target, name) in (None, []):
                    setattr(target, name, getattr(video, name))
        for url in (target.content_loc, target.player_loc):
            if url:
                by_url[url] = target
    return merged


def check_video(video: Video, page_url: str) -> str | None:
    """Make *video* fit Google's rules; return why it must be left out, if so."""
    if video.content_loc == page_url:
        video.content_loc = None  # the page itself is not the media file
    missing = [
        name
        for name, value in (
            ("thumbnail_loc", video.thumbnail_loc),
            ("title", video.title),
            ("description", video.description),
            ("content_loc or player_loc", video.content_loc or video.player_loc),
        )
        if not value
    ]
    if missing:
        return f"video {video.key} left out: no {', '.join(missing)}"
    video.title = truncate_words(video.title or "", TITLE_MAX)
    video.description = truncate_words(video.description or "", DESCRIPTION_MAX)
    if video.duration is not None and not 1 <= video.duration <= DURATION_MAX:
        video.duration = None
    if video.category:
        video.category = truncate_words(video.category, CATEGORY_MAX)
    video.tags = video.tags[:TAGS_MAX]
    return None
