"""The volatile parts of a page (ads, hidden widgets, user selectors), compiled for speed.

Evaluating a dozen selectors over every element costs more than parsing the
page. Three things keep it cheap: bare tag names are stripped by lxml in C;
the simple selectors (one compound: ``.ad``, ``ins.adsbygoogle``,
``[aria-hidden=true]``) are merged into one test over the tree; and a selector
is only evaluated on a page whose source holds the words it needs (the
class ``ad`` as a whole token, the attribute ``data-ad-slot``), which a plain
substring search of the bytes tells in microseconds. The check is
conservative: a selector is skipped only when it cannot match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import cssselect
from cssselect import HTMLTranslator
from lxml import etree
from lxml.cssselect import CSSSelector

from crawler.failures import ConfigError

__all__ = ["Ignore", "compile_ignore"]

_TAG = re.compile(r"[a-z][a-z0-9]*\Z")
_TRANSLATOR = HTMLTranslator()
#: What may stand next to a token in markup: spaces, quotes, '=', tag and comment marks.
_BOUNDARY = frozenset(b" \t\n\r\f\"'=<>/")


#: The values of class and id attributes in a page's (lowercase) source.
_ATTRIBUTE_VALUES = {
    "class": re.compile(rb"class\s*=\s*[\"']?([^\"'>]*)"),
    "id": re.compile(rb"\bid\s*=\s*[\"']?([^\"'>]*)"),
}


class Source:
    """A page's lowercase source, with the class and id tokens it holds found on first need."""

    def __init__(self, text: bytes):
        self.text = text
        self._tokens: dict[str, frozenset[bytes]] = {}

    def tokens(self, attribute: str) -> frozenset[bytes]:
        found = self._tokens.get(attribute)
        if found is None:
            values = _ATTRIBUTE_VALUES[attribute].findall(self.text)
            found = self._tokens[attribute] = frozenset(b" ".join(values).split())
        return found


@dataclass(frozen=True, slots=True)
class Needle:
    """A lowercase word a page's source must hold: a token of its class or id attributes
    (*attribute*), or anywhere, with a boundary before and/or after it."""

    text: bytes
    before: bool = True
    after: bool = True
    attribute: str = ""  # "class" or "id": a whole token of that attribute

    def found(self, source: Source) -> bool:
        if self.attribute:
            return self.text in source.tokens(self.attribute)
        text = source.text
        if not (self.before or self.after):
            return self.text in text
        start = text.find(self.text)
        while start >= 0:  # bounded: each turn moves past one occurrence
            end = start + len(self.text)
            if (not self.before or start == 0 or text[start - 1] in _BOUNDARY) and (
                not self.after or end == len(text) or text[end] in _BOUNDARY
            ):
                return True
            start = text.find(self.text, start + 1)
        return False


@dataclass(frozen=True, slots=True)
class Part:
    """One selector: an XPath test of one element (``test``) or a whole path (``path``), and
    the needles that must all be in the source for it to match (none: always evaluated)."""

    test: str = ""
    path: str = ""
    needles: tuple[Needle, ...] = ()


@dataclass(frozen=True, slots=True)
class Ignore:
    tags: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()

    def xpath(self, source: bytes | None) -> etree.XPath | None:
        """One XPath of the parts that may match a page of *source* (lowercase; None: all)."""
        scan = Source(source) if source is not None else None
        active = tuple(
            index
            for index, part in enumerate(self.parts)
            if scan is None or all(needle.found(scan) for needle in part.needles)
        )
        return _merged(self.parts, active) if active else None


@lru_cache(maxsize=256)
def _merged(parts: tuple[Part, ...], active: tuple[int, ...]) -> etree.XPath:
    tests = [parts[index].test for index in active if parts[index].test]
    paths = [parts[index].path for index in active if parts[index].path]
    if tests:
        paths.insert(0, "descendant-or-self::*[" + " or ".join(f"({test})" for test in tests) + "]")
    return etree.XPath(" | ".join(paths))


def _needles(tree: object) -> tuple[Needle, ...]:
    """What the source of a page must hold for the selector *tree* to match; () when unknown."""
    if isinstance(tree, cssselect.parser.CombinedSelector):
        return _needles(tree.selector) + _needles(tree.subselector)
    if isinstance(tree, cssselect.parser.Element):
        return () if tree.element in (None, "*") else (Needle(b"<" + tree.element.lower().encode(), False, True),)
    if isinstance(tree, cssselect.parser.Class):
        return (*_needles(tree.selector), Needle(tree.class_name.lower().encode(), attribute="class"))
    if isinstance(tree, cssselect.parser.Hash):
        return (*_needles(tree.selector), Needle(tree.id.lower().encode(), attribute="id"))
    if isinstance(tree, cssselect.parser.Attrib):
        found = (*_needles(tree.selector), Needle(tree.attrib.lower().encode()))
        value = getattr(tree.value, "value", tree.value)
        if not value or tree.operator == "exists":
            return found
        bounds = {"=": (True, True), "~=": (True, True), "^=": (True, False), "|=": (True, False)}
        before, after = bounds.get(tree.operator, (False, False))
        return (*found, Needle(str(value).lower().encode(), before, after))
    return ()  # pseudo-classes, :not(), functions: no word is sure to be there


def _part(selector: str) -> Part:
    """A CSS selector as one compound's test, or as a path of its own."""
    parsed = cssselect.parse(selector)
    tree = parsed[0].parsed_tree if len(parsed) == 1 and parsed[0].pseudo_element is None else None
    needles = _needles(tree) if tree is not None else ()
    if tree is not None and not isinstance(tree, cssselect.parser.CombinedSelector):
        expression = _TRANSLATOR.xpath(tree)
        if not expression.path:
            tests = [] if expression.element == "*" else [f"name() = '{expression.element}'"]
            if expression.condition:
                tests.append(f"({expression.condition})")
            return Part(test=" and ".join(tests) or "true()", needles=needles)
    return Part(path=CSSSelector(selector, translator="html").path, needles=needles)


def compile_ignore(selectors: Iterable[str]) -> Ignore:
    """Compile CSS selectors, or XPath expressions (starting with ``/`` or ``(``, always
    evaluated). Raises ``ValueError`` naming the selector that does not compile."""
    tags: list[str] = []
    parts: list[Part] = []
    for selector in selectors:
        try:
            if selector.startswith(("/", "(")):
                etree.XPath(selector)
                parts.append(Part(path=f"({selector})" if selector.startswith("(") else selector))
            elif _TAG.match(selector):
                tags.append(selector)
            else:
                parts.append(_part(selector))
        except Exception as error:  # noqa: BLE001 - cssselect and lxml raise several types
            raise ConfigError(f"cannot use {selector!r} to ignore page parts: {error}") from None
    return Ignore(tuple(tags), tuple(parts))
