"""Facts read from one HTML page, parsed once (pure, no Scrapy).

The spider calls :func:`parse_html` for every HTML response; everything the
pipelines decide on (links, robots directives, canonical) comes out of that
single lxml parse, which is what keeps per-page CPU low.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from crawler.page.digest import Ignore, content_digest
from crawler.page.images import largest_srcset_candidate
from crawler.page.structured import parse_json_ld
from crawler.urls import resolve_link

__all__ = ["HtmlVideo", "PageHtml", "html_parser", "parse_html"]

# rel values of <link> that point at other pages of the site (SPEC S2).
_FOLLOW_LINK_RELS = frozenset({"next", "prev", "previous", "alternate"})
# A <link> that declares one of these types (or none) may lead to a page; any other type
# (RSS, Atom, JSON, oEmbed, RSD) can never be listed, so it is not fetched (SPEC S11).
_PAGE_TYPES = frozenset({"", "text/html", "application/xhtml+xml"})
_PARSERS: dict[str, etree.HTMLParser] = {}


def html_parser(encoding: str) -> etree.HTMLParser:
    """The shared lxml parser for bytes in *encoding* (a Python codec name)."""
    encoding = _codec_name(encoding)
    parser = _PARSERS.get(encoding)
    if parser is None:
        # No network, no entities, comments dropped: only structure is needed.
        parser = etree.HTMLParser(encoding=encoding, remove_comments=True, no_network=True, recover=True)
        _PARSERS[encoding] = parser
    return parser


@dataclass(slots=True)
class HtmlVideo:
    """A ``<video>`` element or a player ``<iframe>``: URLs absolute, raw."""

    content: str | None = None
    player: str | None = None
    poster: str | None = None
    title: str | None = None


@dataclass(slots=True)
class PageHtml:
    """What one HTML page says about itself and where it links.

    URLs are absolute (``<base href>`` honoured) but not yet normalised.
    """

    base_url: str
    links: list[str] = field(default_factory=list)
    meta: dict[str, list[str]] = field(default_factory=dict)  # <meta name=...>
    properties: dict[str, list[str]] = field(default_factory=dict)  # <meta property=...>
    canonicals: list[str] = field(default_factory=list)
    alternates: list[tuple[str, str]] = field(default_factory=list)  # (hreflang, URL)
    images: list[str] = field(default_factory=list)
    videos: list[HtmlVideo] = field(default_factory=list)
    json_ld: list[Any] = field(default_factory=list)
    title: str | None = None
    lang: str | None = None
    content_digest: str | None = None
    #: Non-space characters of the content's text outside links (with the digest).
    own_chars: int | None = None
    #: With ``anchors=True``: the first ``<a>``/``<area>`` per target and its text (the audit's
    #: clicks; ``<link>`` targets are not clicks), absolute like :attr:`links`.
    anchors: dict[str, str] = field(default_factory=dict)


#: Anchor text kept per target: enough to recognise a link, bounded on pages of huge links.
ANCHOR_CHARS = 100
_TAGS = ("a", "area", "link", "base", "meta", "img", "source", "video", "iframe", "script", "title")


def parse_html(
    body: bytes,
    url: str,
    encoding: str = "utf-8",
    digest_ignore: Ignore | None = None,
    *,
    anchors: bool = False,
    form_links: bool = True,
) -> PageHtml:
    """Parse *body* (fetched from *url*) once and collect every fact of the page.

    With *digest_ignore*, also the content fingerprint (see
    :func:`crawler.page.digest.content_digest`); with *anchors*, the anchor
    text of each link clicked to (the audit's; a crawl need not pay for it).
    Without *form_links*, links inside a ``<form>`` or a ``role=search`` element are left out: in a
    rendered DOM, a script wrote them from what a user would type (a search box's share link).
    Malformed markup is tolerated; an empty or unparsable body gives no facts.
    """
    page = PageHtml(base_url=url)
    try:
        root = etree.fromstring(body, html_parser(encoding))
    except (etree.XMLSyntaxError, ValueError):
        return page
    if root is None:
        return page
    page.lang = root.get("lang") or None
    hrefs: list[str] = []
    texts: dict[str, str] = {}  # href of a click -> its anchor text
    canonical_hrefs: list[str] = []
    alternates: list[tuple[str, str]] = []
    images: list[str] = []
    videos: list[tuple[str | None, str | None, str | None, str | None]] = []  # content, player, poster, title
    for element in root.iter(*_TAGS):
        tag = element.tag
        if tag in ("a", "area"):
            href = element.get("href")
            if href is not None and (form_links or not _in_form(element)):
                hrefs.append(href)
                if anchors and href not in texts:
                    texts[href] = anchor_text(element)
        elif tag == "img":
            src = element.get("src")
            if not src or src.startswith("data:"):
                src = element.get("data-src") or element.get("data-lazy-src") or src
            srcset = element.get("srcset") or element.get("data-srcset")
            images.extend(u for u in (largest_srcset_candidate(srcset) if srcset else None, src) if u)
        elif tag == "meta":
            content = element.get("content")
            if content is None:
                continue
            if name := element.get("name"):
                page.meta.setdefault(name.strip().lower(), []).append(content)
            if prop := element.get("property"):
                page.properties.setdefault(prop.strip().lower(), []).append(content)
        elif tag == "link":
            href = element.get("href")
            if href is None:
                continue
            rels = set((element.get("rel") or "").lower().split())
            if "canonical" in rels:
                canonical_hrefs.append(href)
            if rels & _FOLLOW_LINK_RELS:
                hreflang = element.get("hreflang")
                if hreflang is not None or _declares_page(element.get("type")):
                    hrefs.append(href)
                if "alternate" in rels and hreflang is not None:
                    alternates.append((hreflang, href))
        elif tag == "base":
            href = element.get("href")
            if href is not None and page.base_url is url:  # only the first <base> counts
                page.base_url = resolve_link(url, href) or url
        elif tag == "source":
            parent = element.getparent()
            if parent is not None and parent.tag == "picture":
                candidate = largest_srcset_candidate(element.get("srcset") or "")
                if candidate:
                    images.append(candidate)
        elif tag == "video":
            sources = [s.get("src") for s in element.iter("source") if s.get("src")]
            content = element.get("src") or (sources[0] if sources else None)
            title = element.get("title") or element.get("aria-label")
            videos.append((content, None, element.get("poster"), title))
        elif tag == "iframe":
            src = element.get("src") or element.get("data-src")
            if src:
                videos.append((None, src, None, element.get("title")))
        elif tag == "script":
            if (element.get("type") or "").strip().lower() == "application/ld+json" and element.text:
                document = parse_json_ld(element.text)
                if document is not None:
                    page.json_ld.append(document)
        elif tag == "title" and page.title is None and element.text:
            page.title = " ".join(element.text.split()) or None
    base = page.base_url
    page.links = _joined_links(base, hrefs)
    page.anchors = {link: text for href, text in texts.items() if (link := resolve_link(base, href))}
    page.canonicals = _resolved(base, canonical_hrefs)
    page.alternates = [(lang, link) for lang, href in alternates if (link := resolve_link(base, href))]
    page.images = _resolved(base, images)
    page.videos = [
        HtmlVideo(_resolved_one(base, content), _resolved_one(base, player), _resolved_one(base, poster), title)
        for content, player, poster, title in videos
    ]
    if digest_ignore is not None:
        page.content_digest, page.own_chars = content_digest(root, page.title, digest_ignore, body)
    return page


def _joined_links(base: str, hrefs: list[str]) -> list[str]:
    """Each distinct href made absolute, in page order: a link repeated in
    menus and footers is stored and followed once.

    The two common spellings take a fast path, for which RFC 3986 joining
    gives the same result (dot-segments are resolved by normalisation).
    Whether any href holds a control character or a space other than U+0020
    is asked once for the page, so a fast path looks at an href's ends only:
    a page of 10,000 links costs milliseconds.
    """
    unique = dict.fromkeys(hrefs)
    plain = "".join(unique).isprintable()
    origin = _origin(base)
    links = []
    for href in unique:
        if plain and href[:1] == "/" and href[1:2] != "/" and href[-1] != " ":
            links.append(origin + href)
        elif plain and href.startswith(("http://", "https://")) and href[-1] != " ":
            links.append(href)
        elif link := resolve_link(base, href):
            links.append(link)
    return links


def anchor_text(element: Any) -> str:
    """What a link says: its ``aria-label``, else its text, else an image's
    ``alt`` (``alt`` of an ``<area>``), else its ``title``; at most
    :data:`ANCHOR_CHARS` characters, whitespace collapsed."""
    label = element.get("aria-label")
    if not label:
        parts, size = [], 0
        for text in element.itertext():
            parts.append(text)
            size += len(text)
            if size > 2 * ANCHOR_CHARS:
                break
        label = "".join(parts)
    if not label.strip():
        image = next(element.iter("img"), None) if element.tag == "a" else element
        label = (image.get("alt") if image is not None else None) or element.get("title") or ""
    return " ".join(label.split())[:ANCHOR_CHARS]


def _declares_page(declared: str | None) -> bool:
    """Whether a ``<link type>`` allows an HTML page: no type, or an HTML one (parameters dropped)."""
    return declared is None or declared.partition(";")[0].strip().lower() in _PAGE_TYPES


def _resolved(base: str, hrefs: list[str]) -> list[str]:
    return [link for href in hrefs if (link := resolve_link(base, href))]


def _resolved_one(base: str, href: str | None) -> str | None:
    return resolve_link(base, href) if href else None


def _origin(url: str) -> str:
    """``scheme://netloc`` of an absolute URL, without parsing it fully."""
    scheme_end = url.find("://")
    path_start = url.find("/", scheme_end + 3) if scheme_end > 0 else -1
    return url if path_start < 0 else url[:path_start]


def _codec_name(encoding: str) -> str:
    # libxml2 does not know some Python codec aliases Scrapy reports.
    return {"cp1252": "windows-1252", "utf8": "utf-8"}.get(encoding.lower(), encoding)


def _in_form(element: etree._Element) -> bool:
    return any(each.tag == "form" or each.get("role") == "search" for each in element.iterancestors())
