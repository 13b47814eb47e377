"""JSON-LD structured data: parse safely, find objects by ``@type`` (pure)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_JSON_LD_BYTES", "find_typed", "first_text", "modified_time", "parse_json_ld"]

#: A script block larger than this is not read (hostile or broken pages).
MAX_JSON_LD_BYTES = 1_000_000
_MAX_DEPTH = 20


def parse_json_ld(text: str) -> Any:
    """The JSON value of one ``<script type="application/ld+json">``, or None."""
    if len(text) > MAX_JSON_LD_BYTES:
        return None
    try:
        return json.loads(text.strip().rstrip(";"))
    except (ValueError, RecursionError):
        return None


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("@type")
    values = kind if isinstance(kind, list) else [kind]
    return {v.rsplit("/", 1)[-1] for v in values if isinstance(v, str)}


def find_typed(value: Any, wanted: frozenset[str], depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every object in *value* (lists, ``@graph``, nested properties) whose
    ``@type`` is one of *wanted*, outermost first."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, list):
        for element in value:
            yield from find_typed(element, wanted, depth + 1)
    elif isinstance(value, dict):
        if _types(value) & wanted:
            yield value
        for key, element in value.items():
            if key != "@context" and isinstance(element, (list, dict)):
                yield from find_typed(element, wanted, depth + 1)


def modified_time(documents: list[Any], properties: dict[str, list[str]]) -> str | None:
    """When the page says its content last changed: JSON-LD ``dateModified``
    or ``article:modified_time``/``og:updated_time``, as given."""
    for node in find_typed(documents, _DATED_TYPES):
        value = first_text(node, "dateModified")
        if value:
            return value
    for name in ("article:modified_time", "og:updated_time"):
        if properties.get(name):
            return properties[name][0]
    return None


_DATED_TYPES = frozenset(
    {"WebPage", "Article", "NewsArticle", "BlogPosting", "Product", "CreativeWork", "ItemPage", "AboutPage"}
)


def first_text(value: Any, *keys: str) -> str | None:
    """The first non-empty text among ``value[key]``: strings, the first item
    of a list, or the ``url``/``contentUrl``/``name`` of a nested object."""
    if not isinstance(value, dict):
        return None
    for key in keys:
        found = _text(value.get(key))
        if found:
            return found
    return None


def _text(item: Any) -> str | None:
    if isinstance(item, str):
        return item.strip() or None
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        return str(item)
    if isinstance(item, list):
        for element in item:
            found = _text(element)
            if found:
                return found
    if isinstance(item, dict):
        for key in ("url", "contentUrl", "@id", "name"):
            found = _text(item.get(key))
            if found:
                return found
    return None
