"""The image, video, news and xhtml extensions of a ``<url>`` (pure).

Order and cardinality come from the schema models in
:mod:`crawler.validate.schema`; values and limits from Google's rules.
What Google no longer reads is a warning, said once per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from crawler.page.languages import deprecated_language, hreflang_problem
from crawler.protocol import (
    CATEGORY_MAX,
    DESCRIPTION_MAX,
    DURATION_MAX,
    IMAGE_NS,
    MAX_IMAGES_PER_URL,
    MAX_NEWS_PER_FILE,
    NEWS_NS,
    TITLE_MAX,
    VIDEO_NS,
    XHTML_NS,
    is_schema_datetime,
)
from crawler.validate.schema import IMAGE, NEWS, PUBLICATION, VIDEO, Node, Sink, check_sequence

__all__ = ["KNOWN_NAMESPACES", "EntryMedia", "FileState", "check_extension"]

KNOWN_NAMESPACES = frozenset({IMAGE_NS, VIDEO_NS, NEWS_NS, XHTML_NS})
#: Namespaces seen in real sitemaps that nothing reads any more, and what to do instead.
_LEGACY = {
    "http://www.google.com/schemas/sitemap-video/1.0": f"a legacy video namespace; Google reads {VIDEO_NS}",
    "http://www.google.com/schemas/sitemap-image/1.0": f"a legacy image namespace; Google reads {IMAGE_NS}",
    "http://www.google.com/schemas/sitemap-news/0.84": f"a legacy news namespace; Google reads {NEWS_NS}",
    "http://www.google.com/schemas/sitemap-mobile/1.0": "Google no longer reads mobile sitemap annotations",
}
_DEPRECATED_IMAGE = frozenset({"caption", "geo_location", "title", "license"})
_DEPRECATED_NEWS = frozenset({"access", "genres", "keywords", "stock_tickers"})
_NEWS_LANGUAGE = re.compile(r"[a-z]{2,3}|zh-cn|zh-tw")
_LOCS = frozenset({"thumbnail_loc", "content_loc", "player_loc", "gallery_loc", "content_segment_loc"})
_YES_NO = frozenset({"family_friendly", "requires_subscription", "live"})
_DATES = frozenset({"expiration_date", "publication_date"})


@dataclass(slots=True)
class EntryMedia:
    """What an entry's extensions say, for readers of the set (the audit)."""

    images: list[str] = field(default_factory=list)
    videos: list[str] = field(default_factory=list)  # content_loc, else player_loc
    alternates: list[tuple[str, str]] = field(default_factory=list)  # (hreflang, href)
    news: bool = False


class FileState:
    """Per-file counters and the warnings already said once."""

    __slots__ = ("news", "said")

    def __init__(self) -> None:
        self.news = 0
        self.said: set[str] = set()

    def once(self, key: str) -> bool:
        if key in self.said:
            return False
        self.said.add(key)
        return True


def _is_absolute(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def check_extension(node: Node, media: EntryMedia, state: FileState, problem: Sink) -> None:
    """Check one child of ``<url>`` outside the sitemaps.org namespace."""
    if node.ns == IMAGE_NS and node.name == "image":
        if len(media.images) == MAX_IMAGES_PER_URL:
            problem(node, "image-count", f"more than {MAX_IMAGES_PER_URL} images in one <url>")
        _check_image(node, media, state, problem)
    elif node.ns == VIDEO_NS and node.name == "video":
        _check_video(node, media, problem)
    elif node.ns == NEWS_NS and node.name == "news":
        state.news += 1
        media.news = True
        if state.news == MAX_NEWS_PER_FILE + 1:
            problem(node, "news-count", f"more than {MAX_NEWS_PER_FILE} news:news in one sitemap")
        _check_news(node, state, problem)
    elif node.ns == XHTML_NS and node.name == "link":
        _check_alternate(node, media, problem)
    elif node.ns in KNOWN_NAMESPACES:
        problem(node, "element", f"<{node.name}> of {node.ns} is not allowed in <url>")
    elif state.once("namespace " + node.ns):
        reason = _LEGACY.get(node.ns, "not a sitemap extension: its data is not checked and search engines ignore it")
        problem(node, "unknown-namespace", f"{node.ns or 'no namespace'}: {reason} (said once per file)")


def _check_image(node: Node, media: EntryMedia, state: FileState, problem: Sink) -> None:
    found = check_sequence(node, IMAGE, "image", problem)
    for loc in found.get("loc", ()):
        if _is_absolute(loc.value):
            media.images.append(loc.value)
        else:
            problem(loc, "image", f"image:loc is not an absolute URL: {loc.value!r}")
    for name in _DEPRECATED_IMAGE.intersection(found):
        if state.once("image " + name):
            child = found[name][0]
            problem(child, "deprecated", f"Google no longer reads <image:{name}> (said once per file)")


def _check_video(node: Node, media: EntryMedia, problem: Sink) -> None:
    found = check_sequence(node, VIDEO, "video", problem)
    if "content_loc" not in found and "player_loc" not in found:
        problem(node, "video", "<video:video> needs <video:content_loc> or <video:player_loc>")
    for name, children in found.items():
        for child in children:
            _check_video_value(name, child, problem)
    for name in ("content_loc", "player_loc"):
        if name in found:
            media.videos.append(found[name][0].value)
            break


def _check_video_value(name: str, child: Node, problem: Sink) -> None:
    text = child.value
    if name in _LOCS and not _is_absolute(text):
        problem(child, "video", f"video:{name} is not an absolute URL: {text!r}")
    elif name in ("title", "description") and not text:
        problem(child, "video", f"video:{name} is empty")
    elif name == "title" and len(text) > TITLE_MAX:
        problem(child, "video", f"video:title is {len(text)} characters, more than {TITLE_MAX}")
    elif name == "description" and len(text) > DESCRIPTION_MAX:
        problem(child, "video", f"video:description is {len(text)} characters, more than {DESCRIPTION_MAX}")
    elif name == "duration" and not (text.isdigit() and 1 <= int(text) <= DURATION_MAX):
        problem(child, "video", f"video:duration must be whole seconds from 1 to {DURATION_MAX}, not {text!r}")
    elif name == "rating" and not _in_range(text, 0.0, 5.0):
        problem(child, "video", f"video:rating must be 0.0 to 5.0, not {text!r}")
    elif name == "view_count" and not text.isdigit():
        problem(child, "video", f"video:view_count must be a whole number, not {text!r}")
    elif name in _DATES and not is_schema_datetime(text):
        problem(child, "video", f"video:{name} is not a W3C datetime with seconds: {text!r}")
    elif name in _YES_NO and text not in ("yes", "no"):
        problem(child, "video", f"video:{name} must be yes or no, not {text!r}")
    elif name == "category" and len(text) > CATEGORY_MAX:
        problem(child, "video", f"video:category is longer than {CATEGORY_MAX} characters")
    elif name in ("restriction", "platform") and child.attrs.get("relationship") not in ("allow", "deny"):
        problem(child, "video", f'video:{name} needs relationship="allow" or "deny"')
    elif name == "price" and not re.fullmatch(r"[A-Z]{3}", child.attrs.get("currency", "")):
        problem(child, "video", "video:price needs a three-letter ISO 4217 currency attribute")


def _in_range(text: str, low: float, high: float) -> bool:
    try:
        return low <= float(text) <= high
    except ValueError:
        return False


def _check_news(node: Node, state: FileState, problem: Sink) -> None:
    found = check_sequence(node, NEWS, "news", problem)
    for publication in found.get("publication", ())[:1]:
        parts = check_sequence(publication, PUBLICATION, "news", problem)
        if "name" in parts and not parts["name"][0].value:
            problem(parts["name"][0], "news", "news:name is empty")
        for language in parts.get("language", ())[:1]:
            if not _NEWS_LANGUAGE.fullmatch(language.value):
                problem(language, "news", f"news:language must be an ISO 639 code, not {language.value!r}")
    for date in found.get("publication_date", ())[:1]:
        if not is_schema_datetime(date.value):
            problem(date, "news", f"news:publication_date is not a W3C datetime with seconds: {date.value!r}")
    for title in found.get("title", ())[:1]:
        if not title.value:
            problem(title, "news", "news:title is empty")
    for name in _DEPRECATED_NEWS.intersection(found):
        if state.once("news " + name):
            problem(found[name][0], "deprecated", f"Google News no longer reads <news:{name}> (said once per file)")


def _check_alternate(node: Node, media: EntryMedia, problem: Sink) -> None:
    if node.attrs.get("rel") != "alternate":
        problem(node, "hreflang", 'xhtml:link needs rel="alternate"')
    tag = node.attrs.get("hreflang", "")
    href = node.attrs.get("href", "")
    replacement = deprecated_language(tag)
    if replacement:
        problem(node, "deprecated", f"hreflang {tag!r} is a deprecated code: use {replacement!r}")
    else:
        reason = hreflang_problem(tag) if tag else "missing hreflang"
        if reason:
            problem(node, "hreflang", reason)
    if not _is_absolute(href):
        problem(node, "hreflang", f"xhtml:link href is not an absolute URL: {href!r}")
    else:
        media.alternates.append((tag, href))
