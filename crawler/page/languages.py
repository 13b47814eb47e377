"""Language tags for hreflang and Google News, checked against ISO lists (pure).

pycountry ships the ISO 639, 3166 and 15924 tables, so validation needs no
network and no hand-kept list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import pycountry

__all__ = ["deprecated_language", "hreflang_problem", "news_language", "valid_alternates"]

_TAG = re.compile(r"([A-Za-z]{2,3})(?:-([A-Za-z]{4}))?(?:-([A-Za-z]{2}|\d{3}))?")
# Google News accepts these two Chinese tags and plain ISO 639 codes otherwise.
_TRADITIONAL = frozenset({"tw", "hk", "mo", "hant"})
#: ISO 639 codes withdrawn in favour of others (IANA language subtag registry).
_DEPRECATED = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}


@lru_cache(maxsize=512)
def _is_language(code: str) -> bool:
    code = code.lower()
    if len(code) == 2:
        return pycountry.languages.get(alpha_2=code) is not None
    return pycountry.languages.get(alpha_3=code) is not None


@lru_cache(maxsize=512)
def hreflang_problem(tag: str) -> str | None:
    """Why *tag* is not a valid hreflang value, or ``None`` if it is.

    Valid: ``x-default``, or an ISO 639 language, optionally an ISO 15924
    script, optionally an ISO 3166-1 alpha-2 region (or a UN M.49 number),
    e.g. ``en``, ``en-GB``, ``zh-Hant``, ``es-419``.
    """
    if tag.lower() == "x-default":
        return None
    match = _TAG.fullmatch(tag.strip())
    if match is None:
        return f"{tag!r} is not a language tag"
    language, script, region = match.groups()
    if not _is_language(language):
        return f"{language!r} is not an ISO 639 language code"
    if script and pycountry.scripts.get(alpha_4=script.title()) is None:
        return f"{script!r} is not an ISO 15924 script code"
    if region and not region.isdigit() and pycountry.countries.get(alpha_2=region.upper()) is None:
        return f"{region!r} is not an ISO 3166-1 country code" + (" (use GB)" if region.upper() == "UK" else "")
    return None


def deprecated_language(tag: str) -> str | None:
    """The current form of *tag* when its language code is a withdrawn one
    (``iw-IL`` -> ``he-IL``), else ``None``."""
    language, _, rest = tag.strip().partition("-")
    replacement = _DEPRECATED.get(language.lower())
    if replacement is None:
        return None
    return replacement + ("-" + rest if rest else "")


def news_language(tag: str | None) -> str | None:
    """The code Google News accepts for an HTML ``lang`` value.

    ``en-US`` -> ``en``; Chinese becomes ``zh-cn`` or ``zh-tw`` (traditional
    script or a Taiwan/Hong Kong/Macao region); ``None`` when not a language.
    """
    if not tag:
        return None
    match = _TAG.fullmatch(tag.strip().replace("_", "-"))
    if match is None or not _is_language(match.group(1)):
        return None
    language = match.group(1).lower()
    if language == "zh":
        variant = {(match.group(2) or "").lower(), (match.group(3) or "").lower()}
        return "zh-tw" if variant & _TRADITIONAL else "zh-cn"
    return language


def valid_alternates(pairs: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
    """(tag, URL) pairs with valid tags, de-duplicated; and one problem per bad tag."""
    valid: list[tuple[str, str]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for tag, url in pairs:
        tag = tag.strip()
        problem = hreflang_problem(tag)
        if problem:
            problems.append(f"invalid hreflang: {problem}")
        elif tag.lower() not in seen:
            seen.add(tag.lower())
            valid.append((tag, url))
    return valid, problems
