"""Validation rules for the image, video, news and xhtml extensions (pure).

Expressed in code from the published schemas (no schema download): required
children, order, value types and Google's limits. Each checker gets one
extension element of a ``<url>`` and reports through the same sink as the
core rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from lxml import etree

from crawler.page.languages import hreflang_problem
from crawler.protocol import (
    CATEGORY_MAX,
    DESCRIPTION_MAX,
    DURATION_MAX,
    IMAGE_NS,
    MAX_NEWS_PER_FILE,
    NEWS_NS,
    TAGS_MAX,
    VIDEO_NS,
    XHTML_NS,
)

__all__ = ["VIDEO_ORDER", "ExtensionCounts", "check_extension"]

Sink = Callable[[int | None, str, str], None]
DateCheck = Callable[[str], bool]

#: Children of video:video in the order of Google's video sitemap schema.
VIDEO_ORDER = (
    "thumbnail_loc",
    "title",
    "description",
    "content_loc",
    "player_loc",
    "duration",
    "expiration_date",
    "rating",
    "content_segment_loc",
    "view_count",
    "publication_date",
    "tag",
    "category",
    "family_friendly",
    "restriction",
    "gallery_loc",
    "price",
    "requires_subscription",
    "uploader",
    "platform",
    "live",
)
_REPEATABLE_VIDEO = frozenset({"tag", "price", "content_segment_loc"})
_IMAGE_CHILDREN = ("loc", "caption", "geo_location", "title", "license")
_NEWS_LANGUAGE = re.compile(r"[a-z]{2,3}|zh-cn|zh-tw")


class ExtensionCounts:
    """Per-file counters for limits that span entries."""

    __slots__ = ("news",)

    def __init__(self) -> None:
        self.news = 0


def _text(element: etree._Element) -> str:
    return (element.text or "").strip()


def _is_absolute(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def check_extension(
    element: etree._Element, url_line: int | None, is_date: DateCheck, counts: ExtensionCounts, problem: Sink
) -> None:
    """Check one child of ``<url>`` that belongs to an extension namespace."""
    qname = etree.QName(element)
    namespace, name = qname.namespace, qname.localname
    if namespace == IMAGE_NS:
        if name != "image":
            problem(element.sourceline, "image", f"<image:{name}> must be inside <image:image>")
            return
        _check_image(element, problem)
    elif namespace == VIDEO_NS:
        if name != "video":
            problem(element.sourceline, "video", f"<video:{name}> must be inside <video:video>")
            return
        _check_video(element, is_date, problem)
    elif namespace == NEWS_NS:
        if name != "news":
            problem(element.sourceline, "news", f"<news:{name}> must be inside <news:news>")
            return
        counts.news += 1
        if counts.news == MAX_NEWS_PER_FILE + 1:
            problem(element.sourceline, "news-count", f"more than {MAX_NEWS_PER_FILE} news:news in one sitemap")
        _check_news(element, is_date, problem)
    elif namespace == XHTML_NS and name == "link":
        _check_alternate(element, problem)


def _children(element: etree._Element, namespace: str) -> list[tuple[str, etree._Element]]:
    found = []
    for child in element:
        if isinstance(child.tag, str) and etree.QName(child).namespace == namespace:
            found.append((etree.QName(child).localname, child))
    return found


def _check_image(element: etree._Element, problem: Sink) -> None:
    children = _children(element, IMAGE_NS)
    locs = [child for name, child in children if name == "loc"]
    if len(locs) != 1:
        problem(element.sourceline, "image", "<image:image> needs exactly one <image:loc>")
    for name, child in children:
        if name not in _IMAGE_CHILDREN:
            problem(child.sourceline, "image", f"<image:{name}> is not an image element")
    for loc in locs:
        if not _is_absolute(_text(loc)):
            problem(loc.sourceline, "image", f"image:loc is not an absolute URL: {_text(loc)!r}")


def _check_video(element: etree._Element, is_date: DateCheck, problem: Sink) -> None:
    children = _children(element, VIDEO_NS)
    position = -1
    seen: dict[str, int] = {}
    for name, child in children:
        if name not in VIDEO_ORDER:
            problem(child.sourceline, "video", f"<video:{name}> is not a video element")
            continue
        index = VIDEO_ORDER.index(name)
        repeated = seen.get(name, 0) > 0
        if index < position or (repeated and name not in _REPEATABLE_VIDEO):
            problem(child.sourceline, "video-order", f"<video:{name}> out of order or repeated")
        position = max(position, index)
        seen[name] = seen.get(name, 0) + 1
        _check_video_value(name, child, is_date, problem)
    for required in ("thumbnail_loc", "title", "description"):
        if required not in seen:
            problem(element.sourceline, "video", f"<video:video> without <video:{required}>")
    if "content_loc" not in seen and "player_loc" not in seen:
        problem(element.sourceline, "video", "<video:video> needs <video:content_loc> or <video:player_loc>")
    if seen.get("tag", 0) > TAGS_MAX:
        problem(element.sourceline, "video", f"more than {TAGS_MAX} <video:tag>")


def _check_video_value(name: str, child: etree._Element, is_date: DateCheck, problem: Sink) -> None:
    text = _text(child)
    line = child.sourceline
    if name in ("thumbnail_loc", "content_loc", "player_loc", "gallery_loc") and not _is_absolute(text):
        problem(line, "video", f"video:{name} is not an absolute URL: {text!r}")
    elif name in ("title", "description") and not text:
        problem(line, "video", f"video:{name} is empty")
    elif name == "description" and len(text) > DESCRIPTION_MAX:
        problem(line, "video", f"video:description is {len(text)} characters, more than {DESCRIPTION_MAX}")
    elif name == "duration" and not (text.isdigit() and 1 <= int(text) <= DURATION_MAX):
        problem(line, "video", f"video:duration must be whole seconds from 1 to {DURATION_MAX}, not {text!r}")
    elif name == "rating" and not _in_range(text, 0.0, 5.0):
        problem(line, "video", f"video:rating must be 0.0 to 5.0, not {text!r}")
    elif name == "view_count" and not text.isdigit():
        problem(line, "video", f"video:view_count must be a whole number, not {text!r}")
    elif name in ("expiration_date", "publication_date") and not is_date(text):
        problem(line, "video", f"video:{name} is not a W3C datetime: {text!r}")
    elif name in ("family_friendly", "requires_subscription", "live") and text not in ("yes", "no"):
        problem(line, "video", f"video:{name} must be yes or no, not {text!r}")
    elif name == "category" and len(text) > CATEGORY_MAX:
        problem(line, "video", f"video:category is longer than {CATEGORY_MAX} characters")


def _in_range(text: str, low: float, high: float) -> bool:
    try:
        return low <= float(text) <= high
    except ValueError:
        return False


def _check_news(element: etree._Element, is_date: DateCheck, problem: Sink) -> None:
    children = dict(_children(element, NEWS_NS))
    publication = children.get("publication")
    if publication is None:
        problem(element.sourceline, "news", "<news:news> without <news:publication>")
    else:
        parts = dict(_children(publication, NEWS_NS))
        if not (_text(parts["name"]) if "name" in parts else ""):
            problem(publication.sourceline, "news", "<news:publication> without <news:name>")
        language = _text(parts["language"]) if "language" in parts else ""
        if not _NEWS_LANGUAGE.fullmatch(language):
            problem(publication.sourceline, "news", f"news:language must be an ISO 639 code, not {language!r}")
    date = children.get("publication_date")
    if date is None or not is_date(_text(date)):
        problem(element.sourceline, "news", "<news:news> needs a W3C <news:publication_date>")
    title = children.get("title")
    if title is None or not _text(title):
        problem(element.sourceline, "news", "<news:news> without <news:title>")


def _check_alternate(element: etree._Element, problem: Sink) -> None:
    line = element.sourceline
    if element.get("rel") != "alternate":
        problem(line, "hreflang", 'xhtml:link needs rel="alternate"')
    tag = element.get("hreflang")
    reason = hreflang_problem(tag) if tag else "missing hreflang"
    if reason:
        problem(line, "hreflang", reason)
    href = element.get("href") or ""
    if not _is_absolute(href):
        problem(line, "hreflang", f"xhtml:link href is not an absolute URL: {href!r}")
