"""The single place where text becomes XML.

Every value written into a sitemap passes :func:`xml_escape`; the writers
only concatenate its results with fixed markup, which keeps escaping in one
function that the round-trip tests cover.
"""

from __future__ import annotations

import re

__all__ = ["XML_DECLARATION", "xml_escape"]

XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'

# Characters XML 1.0 forbids outright (section 2.2); they cannot be escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_SPECIAL = re.compile("[&<>\"'\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_escape(text: str) -> str:
    """Escape *text* for an XML element or a double-quoted attribute."""
    if _SPECIAL.search(text) is None:  # the common case: nothing to do
        return text
    text = _INVALID_XML.sub("", text)
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )
