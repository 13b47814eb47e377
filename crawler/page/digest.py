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
from collections.abc import Iterable
from dataclasses import dataclass

import cssselect
from cssselect import HTMLTranslator
from lxml import etree
from lxml.cssselect import CSSSelector

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

_TAG = re.compile(r"[a-z][a-z0-9]*\Z")
_TRANSLATOR = HTMLTranslator()


@dataclass(frozen=True, slots=True)
class Ignore:
    """The volatile parts of a page: whole elements by tag (stripped in C, one pass), and
    the rest as one XPath (the simple CSS selectors merged into a single walk of the tree)."""

    tags: tuple[str, ...] = ()
    xpath: etree.XPath | None = None


def _condition(selector: str) -> str | None:
    """The XPath test of a CSS selector that is one compound (``ins.ad``, ``[id^=ad-]``), or
    ``None`` for one with a combinator or pseudo-element, which keeps its own path."""
    parsed = cssselect.parse(selector)
    if len(parsed) != 1 or parsed[0].pseudo_element is not None:
        return None
    tree = parsed[0].parsed_tree
    if isinstance(tree, cssselect.parser.CombinedSelector):
        return None
    expression = _TRANSLATOR.xpath(tree)
    if expression.path:
        return None
    tests = [] if expression.element == "*" else [f"name() = '{expression.element}'"]
    if expression.condition:
        tests.append(f"({expression.condition})")
    return " and ".join(tests) or "true()"


def compile_ignore(selectors: Iterable[str]) -> Ignore:
    """Compile CSS selectors, or XPath expressions (starting with ``/`` or ``(``): bare tag
    names are stripped by tag; simple selectors become one test over every element, the
    others stay paths of one XPath union, so a page is walked about once whatever their number.

    Raises ``ValueError`` naming the selector that does not compile.
    """
    tags: list[str] = []
    tests: list[str] = []
    paths: list[str] = []
    for selector in selectors:
        try:
            if selector.startswith(("/", "(")):
                etree.XPath(selector)
                paths.append(f"({selector})" if selector.startswith("(") else selector)
            elif _TAG.match(selector):
                tags.append(selector)
            elif (test := _condition(selector)) is not None:
                tests.append(test)
            else:
                paths.append(CSSSelector(selector, translator="html").path)
        except Exception as error:  # noqa: BLE001 - cssselect and lxml raise several types
            raise ValueError(f"cannot use {selector!r} to ignore page parts: {error}") from None
    if tests:
        paths.insert(0, "descendant-or-self::*[" + " or ".join(f"({test})" for test in tests) + "]")
    return Ignore(tuple(tags), etree.XPath(" | ".join(paths)) if paths else None)


def content_digest(root: etree._Element, title: str | None, ignore: Ignore) -> str:
    """SHA-256 over the title and the visible text, volatile parts blanked (the text after
    them kept).

    Mutates *root*: call it after everything else was read from the tree.
    """
    body = root.find("body")
    if body is None:
        body = root
    if ignore.tags:
        etree.strip_elements(body, *ignore.tags, with_tail=False)
    if ignore.xpath is not None:
        for element in ignore.xpath(body):
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
