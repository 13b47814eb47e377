"""Queued requests as data, never as code (pure).

What workers share through Redis is JSON of a fixed shape: URL, depth,
referrer, priority, the name of a callback from a fixed list, and a few
scalar meta values. Anything else in the frontier (a pickle, another
program's entry, a tampered field) is refused, never executed: whoever can
write to the Redis cannot run code in a worker.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["CALLBACKS", "ERRBACKS", "META_KEYS", "PAGE_CALLBACK", "PoisonedEntry", "QueuedRequest", "decode", "encode"]

VERSION = 1
#: The spider methods a queued request may name.
CALLBACKS = frozenset({"parse", "parse_sitemap"})
#: The callback of a page request, the kind the page budget counts (sitemaps are not pages).
PAGE_CALLBACK = "parse"
ERRBACKS = frozenset({"failed", "sitemap_failed"})
#: Request meta that travels with a queued request (scalars only). Facts about the request,
#: never a rule switch: whether robots.txt applies is decided by the worker that fetches it.
META_KEYS = frozenset(
    {"depth", "referrer", "page", "redirect_chain", "sitemap_file", "sitemap_level", "sitemap_hops", "unconditional"}
)
#: The one list in meta: the redirect hops that led to a request.
MAX_CHAIN = 64
MAX_URL = 8192
MAX_ENTRY = 16384
_FIELDS = frozenset({"v", "url", "depth", "referrer", "priority", "callback", "errback", "meta"})


class PoisonedEntry(ValueError):
    """A frontier entry that is not a queued request of ours."""


@dataclass(frozen=True, slots=True)
class QueuedRequest:
    url: str
    depth: int = 0
    referrer: str | None = None
    priority: int = 0
    callback: str = "parse"
    errback: str = "failed"
    meta: dict[str, str | int | bool | list[str] | None] = field(default_factory=dict)


def encode(request: QueuedRequest) -> bytes:
    if request.callback not in CALLBACKS or request.errback not in ERRBACKS:
        raise ValueError(f"callback {request.callback!r} or errback {request.errback!r} cannot be queued")
    unknown = set(request.meta) - META_KEYS
    if unknown:
        raise ValueError(f"meta {sorted(unknown)} cannot be queued")
    data = {
        "v": VERSION,
        "url": request.url,
        "depth": request.depth,
        "referrer": request.referrer,
        "priority": request.priority,
        "callback": request.callback,
        "errback": request.errback,
        "meta": request.meta,
    }
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def _int(data: dict[str, object], name: str, low: int, high: int) -> int:
    value = data[name]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise PoisonedEntry(f"{name} is not a whole number from {low} to {high}")
    return value


def decode(raw: bytes) -> QueuedRequest:
    """The queued request in *raw*, or :class:`PoisonedEntry` for anything else."""
    if len(raw) > MAX_ENTRY:
        raise PoisonedEntry(f"entry of {len(raw)} bytes")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise PoisonedEntry("not JSON") from None
    if not isinstance(data, dict) or set(data) != _FIELDS or data["v"] != VERSION:
        raise PoisonedEntry("not a queued request of this version")
    url, referrer, callback, meta = data["url"], data["referrer"], data["callback"], data["meta"]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")) or len(url) > MAX_URL:
        raise PoisonedEntry("url is not an http(s) URL")
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port out of range raises here
        url.encode("utf-8")  # a lone surrogate from a JSON escape raises here
    except ValueError:
        raise PoisonedEntry("url is not a valid URL") from None
    if not parts.hostname:
        raise PoisonedEntry("url has no host")
    if referrer is not None and (not isinstance(referrer, str) or len(referrer) > MAX_URL):
        raise PoisonedEntry("referrer is not a URL")
    if callback not in CALLBACKS or data["errback"] not in ERRBACKS:
        raise PoisonedEntry(f"callback {callback!r} or errback {data['errback']!r} is not one of ours")
    if not isinstance(meta, dict) or not set(meta) <= META_KEYS:
        raise PoisonedEntry("meta has keys that are not ours")
    for key, value in meta.items():
        if key == "redirect_chain":
            if not isinstance(value, list) or len(value) > MAX_CHAIN or not all(isinstance(v, str) for v in value):
                raise PoisonedEntry("redirect_chain must be a short list of URLs")
        elif value is not None and not isinstance(value, str | int | bool):
            raise PoisonedEntry("meta values must be scalars")
    depth, priority = _int(data, "depth", 0, 1_000_000), _int(data, "priority", -(10**9), 10**9)
    return QueuedRequest(url, depth, referrer, priority, callback, str(data["errback"]), meta)
