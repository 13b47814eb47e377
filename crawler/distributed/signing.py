"""Seals on what workers write to a shared crawl's Redis (pure): HMAC-SHA256 under the
secret every process of the crawl is given, over a context (what the value is, for which
crawl) and the bytes. A value without a valid seal was not written by one of us."""

from __future__ import annotations

import hashlib
import hmac
import string

__all__ = ["seal", "sealed"]

_HEX = frozenset(string.hexdigits)


def seal(secret: bytes, context: str, data: bytes) -> str:
    return hmac.new(secret, context.encode() + b"\0" + data, hashlib.sha256).hexdigest()


def sealed(secret: bytes, context: str, data: bytes, signature: object) -> bool:
    """Whether *signature* is *data*'s seal (a malformed one is simply not)."""
    if isinstance(signature, bytes):
        signature = signature.decode("ascii", "replace")
    if not isinstance(signature, str) or len(signature) != 64 or not set(signature) <= _HEX:
        return False
    return hmac.compare_digest(signature.encode(), seal(secret, context, data).encode())
