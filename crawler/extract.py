"""Facts read from one HTML page and its headers, parsed once (pure, no Scrapy).

The spider calls :func:`parse_html` for every HTML response; everything the
pipelines decide on (links, robots directives, canonical) comes out of that
single lxml parse, which is what keeps per-page CPU low.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lxml import etree

from crawler.urls import resolve_link

__all__ = [
    "PageHtml",
    "link_header_targets",
    "parse_html",
    "robots_directives",
]

# rel values of <link> that point at other pages of the site (SPEC S2).
_FOLLOW_LINK_RELS = frozenset({"next", "prev", "previous", "alternate"})
# X-Robots-Tag rules that carry a value after a colon and are not a user agent.
_VALUED_RULES = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_PARSERS: dict[str, etree.HTMLParser] = {}


def _parser(encoding: str) -> etree.HTMLParser:
    parser = _PARSERS.get(encoding)
    if parser is None:
        # No network, no entities, comments dropped: only structure is needed.
        parser = etree.HTMLParser(encoding=encoding, remove_comments=True, no_network=True, recover=True)
        _PARSERS[encoding] = parser
    return parser


@dataclass(slots=True)
class PageHtml:
    """What one HTML page says about itself and where it links."""

    base_url: str
    links: list[str] = field(default_factory=list)
    meta_robots: dict[str, list[str]] = field(default_factory=dict)
    canonicals: list[str] = field(default_factory=list)
    lang: str | None = None


def parse_html(body: bytes, url: str, encoding: str = "utf-8") -> PageHtml:
    """Parse *body* (fetched from *url*) once and collect links and directives.

    Links are absolute but not yet normalised; ``<base href>`` is honoured.
    Malformed markup is tolerated; an empty or unparsable body gives no facts.
    """
    page = PageHtml(base_url=url)
    try:
        root = etree.fromstring(body, _parser(_codec_name(encoding)))
    except (etree.XMLSyntaxError, ValueError):
        return page
    if root is None:
        return page
    page.lang = root.get("lang") or None
    hrefs: list[str] = []
    canonical_hrefs: list[str] = []
    for element in root.iter("a", "area", "link", "base", "meta"):
        tag = element.tag
        if tag == "meta":
            name = element.get("name")
            content = element.get("content")
            if name and content is not None:
                page.meta_robots.setdefault(name.strip().lower(), []).append(content)
            continue
        href = element.get("href")
        if href is None:
            continue
        if tag == "link":
            rels = set((element.get("rel") or "").lower().split())
            if "canonical" in rels:
                canonical_hrefs.append(href)
            if rels & _FOLLOW_LINK_RELS:
                hrefs.append(href)
        elif tag == "base":
            if page.base_url is url:  # only the first <base> counts (HTML spec)
                page.base_url = resolve_link(url, href) or url
        else:
            hrefs.append(href)
    base = page.base_url
    origin = _origin(base)
    links = page.links
    for href in hrefs:
        # Fast paths for the two common spellings; RFC 3986 joining gives the
        # same result for them (dot-segments are resolved by normalisation).
        if href.startswith("/") and not href.startswith("//") and href.isprintable() and href == href.strip():
            links.append(origin + href)
        elif href.startswith(("http://", "https://")) and href.isprintable() and href == href.strip():
            links.append(href)
        elif link := resolve_link(base, href):
            links.append(link)
    page.canonicals = [link for href in canonical_hrefs if (link := resolve_link(base, href))]
    return page


def _origin(url: str) -> str:
    """``scheme://netloc`` of an absolute URL, without parsing it fully."""
    scheme_end = url.find("://")
    path_start = url.find("/", scheme_end + 3) if scheme_end > 0 else -1
    return url if path_start < 0 else url[:path_start]


def _codec_name(encoding: str) -> str:
    # libxml2 does not know some Python codec aliases Scrapy reports.
    return {"cp1252": "windows-1252", "utf8": "utf-8"}.get(encoding.lower(), encoding)


def _directive_list(text: str) -> Iterable[str]:
    return (part.strip().lower() for part in text.split(",") if part.strip())


def robots_directives(meta: dict[str, list[str]], header_values: Iterable[str], token: str) -> frozenset[str]:
    """Robots directives that apply to crawler *token* (e.g. ``googlebot``).

    Sources: ``<meta name="robots">``, ``<meta name="TOKEN">`` and every
    ``X-Robots-Tag`` header, either plain (``noindex``) or scoped to a user
    agent (``googlebot: noindex``). ``none`` expands to noindex + nofollow.
    """
    token = token.lower()
    found: set[str] = set()
    for name in ("robots", token):
        for content in meta.get(name, ()):
            found.update(_directive_list(content))
    for value in header_values:
        agent: str | None = None
        for part in value.split(","):
            head, sep, rest = part.partition(":")
            head = head.strip().lower()
            if sep and head and head not in _VALUED_RULES and " " not in head:
                agent, part = head, rest
            directive = part.strip().lower()
            if directive and (agent is None or agent == token):
                found.add(directive)
    if "none" in found:
        found.update(("noindex", "nofollow"))
    return frozenset(found)


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_LINK_VALUE = re.compile(rf"""<([^>]*)>((?:\s*;\s*{_TOKEN}\s*(?:=\s*(?:"[^"]*"|[^;,\s]*))?)*)""")
_LINK_PARAM = re.compile(rf"""\s*;\s*({_TOKEN})\s*=\s*("([^"]*)"|[^;,\s]*)""")


def link_header_targets(header_values: Iterable[str], base_url: str, rel: str) -> list[str]:
    """Absolute targets of RFC 8288 ``Link`` header values with relation *rel*."""
    targets: list[str] = []
    for value in header_values:
        for match in _LINK_VALUE.finditer(value):
            for param in _LINK_PARAM.finditer(match.group(2)):
                if param.group(1).lower() != "rel":
                    continue
                rels = (param.group(3) if param.group(3) is not None else param.group(2)).lower()
                if rel in rels.split():
                    target = resolve_link(base_url, match.group(1))
                    if target:
                        targets.append(target)
    return targets
