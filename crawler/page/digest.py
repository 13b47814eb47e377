"""The content fingerprint of a page: what changed for a reader, not for a server.

Two fetches of an unchanged page often differ in bytes: scripts, CSRF
tokens, ad slots, "generated at" times. The digest covers the title and
the visible text of the body with such parts blanked (their elements
cleared, the text after them kept), so lastmod moves only when content
does. Users add their own volatile parts as CSS selectors or XPath.
"""

from __future__ import annotations

import hashlib
import re

from lxml import etree

from crawler.page.volatile import Ignore, compile_ignore

__all__ = ["DEFAULT_IGNORE", "Ignore", "compile_ignore", "content_digest"]

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


def content_digest(root: etree._Element, title: str | None, ignore: Ignore, source: bytes | None = None) -> str:
    """SHA-256 over the title and the visible text, volatile parts blanked (the text after
    them kept). With the page's *source*, selectors that cannot match it are not evaluated.

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
    text = etree.tostring(body, method="text", encoding=str, with_tail=False)
    if ":" in text:  # every timestamp has one
        text = _TIMESTAMPS.sub("", text)
    text = " ".join(text.split())
    digest = hashlib.sha256()
    digest.update((title or "").encode())
    digest.update(b"\0")
    digest.update(text.encode())
    return digest.hexdigest()
