"""How a file or a page is served: the judgement of its status and headers (pure).

A sitemap's body is read as the server sent it (the client's decompression is
ours, so a ``Content-Encoding`` is seen, not hidden): the Content-Encoding
decoded gives the file as published, its own gzip (``.xml.gz``) decoded gives
the XML. Neither step reads more than the protocol's 50 MiB plus one byte, so
an oversized file is seen as such by validate's ``size`` rule.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from crawler.page.headers import is_html, is_noindex, link_header_targets, media_type, robots_directives
from crawler.page.html import parse_html
from crawler.protocol import MAX_BYTES
from crawler.urls import normalize_or_raw

__all__ = ["GZIP_TYPES", "XML_TYPES", "Headers", "Served", "Undecodable", "decode_content", "judge_page", "read_served"]

#: Media types of a plain sitemap and of a gzip one (the sitemaps.org protocol, Google's help).
XML_TYPES = frozenset({"application/xml", "text/xml"})
GZIP_TYPES = frozenset({"application/gzip", "application/x-gzip"})
_GZIP_MAGIC = b"\x1f\x8b"
#: Header name (lower case) -> its values, as received.
Headers = Mapping[str, list[str]]


class Undecodable(Exception):
    """A body whose Content-Encoding cannot be undone."""


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    decoder = zlib.decompressobj(wbits)
    try:
        out = decoder.decompress(data, limit + 1)
    except zlib.error as error:
        raise Undecodable(str(error)) from None
    if len(out) <= limit and not decoder.eof:
        raise Undecodable("truncated compressed data")
    return out


def _decode(data: bytes, coding: str, limit: int) -> bytes:
    if coding in ("gzip", "x-gzip"):
        return _inflate(data, 16 + zlib.MAX_WBITS, limit)
    if coding == "deflate":  # zlib-wrapped as the RFC says, or raw as some servers send it
        try:
            return _inflate(data, zlib.MAX_WBITS, limit)
        except Undecodable:
            return _inflate(data, -zlib.MAX_WBITS, limit)
    raise Undecodable(f"Content-Encoding {coding!r} was not asked for (Accept-Encoding: gzip, deflate)")


def decode_content(raw: bytes, content_encoding: str, limit: int = MAX_BYTES) -> bytes:
    """*raw* with its Content-Encoding (``gzip``, ``deflate``, in the order applied) undone."""
    body = raw
    for coding in reversed([part.strip().lower() for part in content_encoding.split(",") if part.strip()]):
        if coding != "identity":
            body = _decode(body, coding, limit)
    return body


@dataclass(slots=True)
class Served:
    """A sitemap file as served: the bytes published, the XML inside, what is wrong."""

    file: bytes = b""  # the body with its Content-Encoding undone: the file as published
    document: bytes | None = None  # the XML (None: nothing to read)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (rule, message)


def read_served(url: str, headers: Headers, raw: bytes) -> Served:
    """Judge a sitemap file answered 200 at *url*: its Content-Type and encodings, and its XML."""
    served = Served()
    encoding = ", ".join(headers.get("content-encoding", []))
    try:
        served.file = decode_content(raw, encoding)
    except Undecodable as error:
        served.problems.append(("content-encoding", f"cannot decode the body: {error}"))
        return served
    encoded = any(coding in encoding.lower() for coding in ("gzip", "deflate"))
    zipped = served.file[:2] == _GZIP_MAGIC
    content_type = (headers.get("content-type") or [""])[0]
    kind = media_type(content_type) if content_type else None
    if zipped and encoded:
        message = f"served with Content-Encoding: {encoding} over gzip data: decoded, it is still gzip"
        served.problems.append(("double-gzip", message + " (the file is compressed twice)"))
    if kind is None:
        wanted = "application/gzip" if zipped else "application/xml"
        served.problems.append(("content-type", f"no Content-Type header (expected {wanted})"))
    else:
        wrong = _wrong_type(kind, zipped, encoded)
        if wrong:
            served.problems.append(("content-type", wrong))
    if not zipped:
        if url.split("?", 1)[0].endswith(".gz") and not encoded:
            served.problems.append(("gzip", "named .gz but not gzip-compressed"))
        served.document = served.file
        return served
    try:
        served.document = decode_content(served.file, "gzip")
    except Undecodable as error:
        served.problems.append(("gzip", f"broken gzip data: {error}"))
    return served


def _wrong_type(kind: str, zipped: bool, encoded: bool) -> str | None:
    if not zipped:
        return None if kind in XML_TYPES else f"{kind} for XML: serve it as application/xml or text/xml"
    if not encoded:
        return None if kind in GZIP_TYPES else f"{kind} for gzip data: serve it as application/gzip"
    return None if kind in XML_TYPES | GZIP_TYPES else f"{kind} for a sitemap: serve it as application/xml"


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip("\"'")).name
            except LookupError:
                return "utf-8"
    return "utf-8"


def judge_page(url: str, status: int, headers: Headers, body: bytes, token: str) -> list[tuple[str, str]]:
    """What keeps listed URL *url* out of a search engine's index, as (rule, message);
    *body* with its Content-Encoding undone, *token* the robots meta name (``googlebot``)."""
    if 300 <= status < 400:
        target = (headers.get("location") or ["(no Location)"])[0]
        return [("sample-redirect", f"{url} redirects (HTTP {status}) to {target}: list the target instead")]
    if status != 200:
        return [("sample-status", f"{url} answers HTTP {status}")]
    content_type = (headers.get("content-type") or [""])[0]
    meta: dict[str, list[str]] = {}
    canonicals = link_header_targets(headers.get("link", []), url, "canonical")
    if is_html(content_type or None):
        page = parse_html(body, url, _charset(content_type))
        meta = page.meta
        canonicals += page.canonicals
    problems: list[tuple[str, str]] = []
    if is_noindex(robots_directives(meta, headers.get("x-robots-tag", []), token)):
        problems.append(("sample-noindex", f"{url} says noindex (robots meta or X-Robots-Tag)"))
    own = normalize_or_raw(url)
    other = next((target for target in canonicals if normalize_or_raw(target) != own), None)
    if other is not None:
        problems.append(("sample-canonical", f"{url} names {other} as canonical: list that URL instead"))
    return problems
