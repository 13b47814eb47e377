"""One ``<url>`` element and its extensions, rendered to bytes.

Every value passes :func:`~crawler.sitemaps.xml.xml_escape`; the markup
around it is fixed. Element order follows the schemas: sitemaps.org
(``loc``, ``lastmod``), then xhtml alternates, images, videos (Google's
video schema order) and news.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.page.videos import Video
from crawler.protocol import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from crawler.sitemaps.xml import XML_DECLARATION, xml_escape

__all__ = ["URLSET_CLOSE", "URLSET_OPEN", "NewsEntry", "UrlEntry", "render_video"]

URLSET_OPEN = (
    XML_DECLARATION
    + (
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{XHTML_NS}" xmlns:image="{IMAGE_NS}" '
        f'xmlns:video="{VIDEO_NS}" xmlns:news="{NEWS_NS}">\n'
    ).encode()
)
URLSET_CLOSE = b"</urlset>\n"


@dataclass(slots=True, frozen=True)
class NewsEntry:
    name: str
    language: str
    publication_date: str
    title: str

    def render(self) -> str:
        return (
            f"<news:news><news:publication><news:name>{xml_escape(self.name)}</news:name>"
            f"<news:language>{xml_escape(self.language)}</news:language></news:publication>"
            f"<news:publication_date>{xml_escape(self.publication_date)}</news:publication_date>"
            f"<news:title>{xml_escape(self.title)}</news:title></news:news>"
        )


# Not frozen: a frozen dataclass pays one object.__setattr__ per field, and
# the writer creates millions of these.
@dataclass(slots=True)
class UrlEntry:
    """A ``<url>``: absolute normalised loc, optional W3C lastmod, extensions."""

    loc: str
    lastmod: str | None = None
    alternates: tuple[tuple[str, str], ...] = ()  # (hreflang, href)
    images: tuple[str, ...] = ()
    videos: tuple[Video, ...] = field(default=())
    news: NewsEntry | None = None

    def render(self) -> bytes:
        head = f"<url><loc>{xml_escape(self.loc)}</loc>"
        if self.lastmod:
            head += f"<lastmod>{xml_escape(self.lastmod)}</lastmod>"
        if not (self.alternates or self.images or self.videos or self.news):
            return (head + "</url>\n").encode()
        parts = [head]
        parts.extend(
            f'<xhtml:link rel="alternate" hreflang="{xml_escape(tag)}" href="{xml_escape(href)}"/>'
            for tag, href in self.alternates
        )
        parts.extend(f"<image:image><image:loc>{xml_escape(image)}</image:loc></image:image>" for image in self.images)
        parts.extend(render_video(video) for video in self.videos)
        if self.news:
            parts.append(self.news.render())
        parts.append("</url>\n")
        return "".join(parts).encode()


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def render_video(video: Video) -> str:
    """``video:video`` with its children in the order of Google's video schema."""
    fields: list[tuple[str, object]] = [
        ("thumbnail_loc", video.thumbnail_loc),
        ("title", video.title),
        ("description", video.description),
        ("content_loc", video.content_loc),
        ("player_loc", video.player_loc),
        ("duration", video.duration),
        ("expiration_date", video.expiration_date),
        ("rating", video.rating),
        ("view_count", video.view_count),
        ("publication_date", video.publication_date),
    ]
    fields.extend(("tag", tag) for tag in video.tags)
    fields.extend(
        [
            ("category", video.category),
            ("family_friendly", None if video.family_friendly is None else _yes_no(video.family_friendly)),
            (
                "requires_subscription",
                None if video.requires_subscription is None else _yes_no(video.requires_subscription),
            ),
            ("live", None if video.live is None else _yes_no(video.live)),
        ]
    )
    return "<video:video>" + "".join(_element(name, value) for name, value in fields) + "</video:video>"


def _element(name: str, value: object) -> str:
    if value is None:
        return ""
    return f"<video:{name}>{xml_escape(str(value))}</video:{name}>"
