"""The content fingerprint of a page: what changed for a reader, not for a server.

Two fetches of an unchanged page often differ in bytes: scripts, CSRF
tokens, ad slots, "generated at" times. The digest covers the title and
the visible text of the body with such parts blanked (their elements
cleared, the text after them kept), so lastmod moves only when content
does. Users add their own volatile parts as CSS selectors or XPath.

Only the page's own content counts, not its template (SPEC S11): a CMS
prints "Recent Posts" and "Recent Comments" in a sidebar on every page, and
one new comment would otherwise move the lastmod of the whole site. The
content is the page's one ``<main>`` (or ``role=main``), as HTML defines
it and every current theme and generator writes it, without the sidebars a
theme may put in it (``aside``, ``role=complementary``) and without a site's
navigation (a ``nav`` of more than :data:`OWN_NAV_LINKS` links: Material for
MkDocs puts the whole site's menu inside ``<main>``); its own short navigation
(a post's "Next post: <title>", breadcrumbs) stays, as it names other content. Without a
``<main>``, the body without its landmarks of navigation and chrome (``nav``,
``aside``, the page's ``header`` and ``footer``, their ARIA roles). Should a
``<main>`` hold no text, the whole body counts (an application's empty shell).
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from lxml import etree

from crawler.page.volatile import Ignore, compile_ignore

__all__ = ["DEFAULT_IGNORE", "SCHEME", "ContentDigest", "Ignore", "compile_ignore", "content_digest"]

#: Names how digests are made; a state store made under another scheme re-learns its
#: digests for one run instead of calling every page changed.
SCHEME = "main-content-1"

#: Parts of a page that change without its content changing.
DEFAULT_IGNORE: tuple[str, ...] = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "input",
    "form [type=hidden]",
    "[id^=ad-]",
    "[id^=google_ads]",
    ".ad",
    ".ads",
    ".advert",
    ".advertisement",
    "ins.adsbygoogle",
    "[data-ad-slot]",
    "[aria-hidden=true]",
    "time",
    "[data-nosnippet]",
)
# Clock times and ISO timestamps in text ("updated 10:42:07", "2026-11-30T10:42Z"),
# each starting at a digit with no word character before it. Written to start
# with a bare digit (the word boundary checked behind it) so the regex engine
# skips ahead to digits instead of trying every position: half the time.
_TIMESTAMPS = re.compile(
    r"\d(?<!\w\d)(?:\d{3}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"
    r"|\d?:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?\b)"
)


#: The page's own content, as HTML's landmarks name it.
_MAIN = etree.XPath(".//main | .//*[@role='main']")
#: Links of a navigation that is the page's own (previous/next, breadcrumbs); a longer one is the site's.
OWN_NAV_LINKS = 5
#: Sidebars and the site's navigation, also inside a <main>.
_SIDEBARS = etree.XPath(
    ".//aside | .//*[@role='complementary']"
    f" | .//nav[count(.//a) > {OWN_NAV_LINKS}] | .//*[@role='navigation'][count(.//a) > {OWN_NAV_LINKS}]"
)
#: Template around the content: landmarks of navigation and chrome.
_CHROME = etree.XPath(
    ".//nav | .//aside | .//*[@role='navigation' or @role='complementary' or @role='banner'"
    " or @role='contentinfo' or @role='search']"
    " | .//header[not(ancestor::article or ancestor::main)] | .//footer[not(ancestor::article or ancestor::main)]"
)


class ContentDigest(NamedTuple):
    """The fingerprint of a page's content, and how much of its text is not in links
    (non-space characters): a page made of links is only told from another by where they lead."""

    digest: str
    own_chars: int


def content_digest(
    root: etree._Element, title: str | None, ignore: Ignore, source: bytes | None = None
) -> ContentDigest:
    """SHA-256 over the title and the visible text of the page's content (see the module's
    docstring), volatile parts blanked (the text after them kept). With the page's *source*,
    selectors that cannot match it are not evaluated.

    Mutates *root*: call it after everything else was read from the tree.
    """
    body = root.find("body")
    if body is None:
        body = root
    if ignore.tags:
        etree.strip_elements(body, *ignore.tags, with_tail=False)
    xpath = ignore.xpath(source.lower() if source is not None else None)
    if xpath is not None:
        for element in xpath(body):
            if isinstance(element, etree._Element):
                element.clear(keep_tail=True)
    content, text = _content_text(body)
    etree.strip_elements(content, "a", with_tail=False)  # what is left is the text outside links
    own_chars = len("".join(_text(content).split()))
    if ":" in text:  # every timestamp has one
        text = _TIMESTAMPS.sub("", text)
    text = " ".join(text.split())
    digest = hashlib.sha256()
    digest.update((title or "").encode())
    digest.update(b"\0")
    digest.update(text.encode())
    return ContentDigest(digest.hexdigest(), own_chars)


def _text(element: etree._Element) -> str:
    return str(etree.tostring(element, method="text", encoding=str, with_tail=False))


def _content_text(body: etree._Element) -> tuple[etree._Element, str]:
    """The element holding the page's own content (chrome cleared from it), and its text;
    the whole body's when a ``<main>`` has none (an application's empty shell)."""
    mains = [element for element in _MAIN(body) if isinstance(element, etree._Element)]
    outermost = [m for m in mains if not any(other in m.iterancestors() for other in mains)]
    content = outermost[0] if len(outermost) == 1 else body
    for element in (_SIDEBARS if content is not body else _CHROME)(content):
        if isinstance(element, etree._Element):
            element.clear(keep_tail=True)
    text = _text(content)
    if text.strip() or content is body:
        return content, text
    return body, _text(body)
