"""Hosts that only exist on a developer's machine or inside a network (pure).

A sitemap listing them was built against a development server: search
engines cannot reach its URLs.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["is_dev_origin"]

#: Special-use and customary private names (RFC 6761, RFC 6762, RFC 8375, ICANN .internal).
_DEV_SUFFIXES = (".localhost", ".local", ".test", ".invalid", ".example", ".internal", ".lan", ".home.arpa")


@lru_cache(maxsize=256)
def is_dev_origin(origin: str) -> bool:
    """True for ``scheme://host[:port]`` on localhost, a private or loopback
    address, or a reserved development name."""
    host = (urlsplit(origin).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(_DEV_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified
