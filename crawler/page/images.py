"""Images of a page for the image sitemap extension (pure)."""

from __future__ import annotations

import re

__all__ = ["largest_srcset_candidate"]

_DESCRIPTOR = re.compile(r"^(\d+(?:\.\d+)?)([wx])$", re.IGNORECASE)


def largest_srcset_candidate(srcset: str) -> str | None:
    """The URL of the biggest candidate of a ``srcset`` attribute.

    Width descriptors (``800w``) win over density descriptors (``2x``); a
    candidate without a descriptor counts as ``1x``. Follows the HTML
    parsing rules closely enough for real pages: URLs may contain commas,
    candidates are separated by a comma after the URL or the descriptor.
    """
    best: tuple[int, float, str] | None = None
    position, length = 0, len(srcset)
    while position < length:
        while position < length and (srcset[position].isspace() or srcset[position] == ","):
            position += 1
        start = position
        while position < length and not srcset[position].isspace():
            position += 1
        url = srcset[start:position]
        descriptor = ""
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            start = position
            while position < length and srcset[position] != ",":
                position += 1
            descriptor = srcset[start:position].strip()
        if not url:
            continue
        match = _DESCRIPTOR.match(descriptor.split()[0]) if descriptor else None
        if match:
            rank = (2 if match.group(2).lower() == "w" else 1, float(match.group(1)), url)
        else:
            rank = (1, 1.0, url)
        if best is None or rank[:2] > best[:2]:
            best = rank
    return best[2] if best else None
