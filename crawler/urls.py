"""URL normalisation: the one place where URLs become comparable strings.

Every URL the crawler stores, compares or writes passes through
:func:`normalize_url`, so a link, a redirect target, a canonical target and a
sitemap ``<loc>`` always agree on spelling (RFC 3986 section 6.2.2 syntax-based
normalisation, plus removal of tracking parameters).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import lru_cache
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

__all__ = [
    "DEFAULT_STRIP_PARAMS",
    "UNFOLLOWABLE_SCHEMES",
    "QueryParamFilter",
    "UrlSet",
    "normalize_or_raw",
    "normalize_url",
    "origin_of",
    "resolve_link",
    "site_root",
]

#: Query parameters that only track a visit and never change the page.
DEFAULT_STRIP_PARAMS: tuple[str, ...] = (
    "utm_*",
    "gclid",
    "dclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "msclkid",
    "yclid",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    # Session identifiers: a new one per visit makes endless copies of every page.
    "jsessionid",
    "phpsessid",
    "sid",
    "sessionid",
)

#: Link schemes that never lead to a crawlable page.
UNFOLLOWABLE_SCHEMES = frozenset({"mailto", "tel", "javascript", "data", "sms", "ftp", "file"})

_DEFAULT_PORTS = {"http": 80, "https": 443}
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# RFC 3986 section 2.3: unreserved characters never need percent-encoding.
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# A URL that is already normal apart from its query parameters and fragment:
# lower-case http(s) scheme and host, no user info, no escapes, only
# characters that percent-encoding keeps. Most links look like this, and the
# check costs a tenth of a full normalisation.
_PLAIN = re.compile(
    r"(https?)://([a-z0-9.-]+)(?::([1-9][0-9]{0,4}))?"
    r"(/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?(?:\?([A-Za-z0-9._~!$&()*+,;=:@/?-]*))?(?:#.*)?",
    re.DOTALL,
)


class QueryParamFilter:
    """Removes query parameters whose name matches one of the glob patterns."""

    def __init__(self, patterns: Iterable[str] = DEFAULT_STRIP_PARAMS):
        self.patterns = tuple(p.lower() for p in patterns)
        self._exact = frozenset(p for p in self.patterns if not any(c in p for c in "*?["))
        self._globs = tuple(p for p in self.patterns if p not in self._exact)

    def strips(self, name: str) -> bool:
        name = unquote(name).lower()
        return name in self._exact or any(fnmatchcase(name, g) for g in self._globs)

    def __call__(self, query: str) -> str:
        if not self.patterns or not query:
            return query
        kept = [pair for pair in query.split("&") if pair and not self.strips(pair.split("=", 1)[0])]
        return "&".join(kept)

    def path(self, path: str) -> str:
        """*path* without the matching path parameters (``/a;jsessionid=X/b`` -> ``/a/b``)."""
        if not self.patterns or ";" not in path:
            return path
        segments = []
        for segment in path.split("/"):
            name, *parameters = segment.split(";")
            kept = [p for p in parameters if not self.strips(p.split("=", 1)[0])]
            segments.append(";".join([name, *kept]))
        return "/".join(segments)


_NO_FILTER = QueryParamFilter(())


def _normalize_escape(match: re.Match[str]) -> str:
    byte = int(match.group(1), 16)
    if byte in _UNRESERVED:
        return chr(byte)
    return "%" + match.group(1).upper()


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, on an absolute path."""
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments[1:], start=1):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if output:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)


def normalize_url(
    url: str,
    encoding: str = "utf-8",
    params: QueryParamFilter = _NO_FILTER,
) -> str:
    """Return the normal form of absolute *url*.

    The fragment is dropped, scheme and host are lower-cased, the default port
    is dropped, dot-segments are resolved, percent-escapes are upper-cased and
    unreserved characters decoded, non-ASCII characters are percent-encoded
    (path as UTF-8, query in *encoding*, as browsers do) and query and path
    parameters (``;jsessionid=...``) matched by *params* are removed. The remaining query keeps its order.
    Raises ``ValueError`` for a URL that is not absolute http(s).
    """
    plain = _PLAIN.fullmatch(url)
    if plain is not None:
        normal = _normalize_plain(plain, params)
        if normal is not None:
            return normal
    return _normalize_full(url, encoding, params)


def _normalize_full(url: str, encoding: str, params: QueryParamFilter) -> str:
    safe = safe_url_string(url.strip(), encoding=encoding)
    parts = urlsplit(safe)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {url!r}")
    host = parts.hostname.rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port  # raises ValueError for a bad port
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    if parts.username or parts.password:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        netloc = f"{userinfo}@{netloc}"
    path = (_ESCAPE.sub(_normalize_escape, parts.path) if "%" in parts.path else parts.path) or "/"
    path = _remove_dot_segments(params.path(path))
    query = params(_ESCAPE.sub(_normalize_escape, parts.query) if "%" in parts.query else parts.query)
    return urlunsplit((scheme, netloc, path, query, ""))


def _normalize_plain(plain: re.Match[str], params: QueryParamFilter) -> str | None:
    """The normal form of a URL matched by ``_PLAIN``, or ``None`` when one
    of its parts still needs the full treatment."""
    scheme, host, port, path, query = plain.groups()
    if host.startswith(".") or host.endswith(".") or (path and ("/." in path or ";" in path)):
        return None  # a trailing dot, a dot-segment to resolve or path parameters to filter
    if port and (int(port) == _DEFAULT_PORTS[scheme] or int(port) > 65535):
        return None
    netloc = f"{host}:{port}" if port else host
    query = params(query) if query else ""
    return f"{scheme}://{netloc}{path or '/'}?{query}" if query else f"{scheme}://{netloc}{path or '/'}"


def normalize_or_raw(url: str, encoding: str = "utf-8", params: QueryParamFilter = _NO_FILTER) -> str:
    """The normal form of *url*, or *url* itself when it has none (not http(s), broken)."""
    try:
        return normalize_url(url, encoding, params)
    except ValueError:
        return url


def resolve_link(base: str, href: str) -> str | None:
    """Resolve *href* found on a page against *base* (WHATWG-style joining).

    Returns ``None`` for links that cannot lead to a page: empty, fragment
    only, or an unfollowable scheme such as ``mailto:``.
    """
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    colon = href.find(":")
    if colon > 0 and href[:colon].lower() in UNFOLLOWABLE_SCHEMES:
        return None
    # Joined without its fragment (kept as it is), and against the base's folder unless it is
    # a query-only link: the links of one folder's pages repeat ("../index.html", "a.html#x",
    # "a.html#y"), so each is joined once.
    href, _, fragment = href.partition("#")
    joined = _joined(base if href.startswith("?") else _folder(base), href)
    return f"{joined}#{fragment}" if fragment and joined is not None else joined


@lru_cache(maxsize=1024)  # one page's links share its base
def _folder(url: str) -> str:
    """*url* up to the last ``/`` of its path (``https://h/a/b.html?q`` -> ``https://h/a/``)."""
    cut = len(url)
    for mark in ("#", "?"):
        found = url.find(mark, 0, cut)
        if found >= 0:
            cut = found
    host_start = url.find("//") + 2 if "//" in url[:cut] else 0
    slash = url.rfind("/", host_start, cut)
    return url[: slash + 1] if slash >= 0 else url[:cut] + "/"


@lru_cache(maxsize=1 << 16)
def _joined(base: str, href: str) -> str | None:
    try:
        return urljoin(base, href)
    except ValueError:
        return None


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of any URL, lower case (no trailing slash; *url* need not be normalised)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def site_root(url: str) -> str:
    """``scheme://host[:port]/`` of a normalised URL."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/", "", ""))


class UrlSet:
    """A set of URLs kept as their 64-bit hashes (about 60 bytes a URL, not 135 for the string
    and its slot): the crawl's seen and in-flight sets grow with the site. Two URLs of one
    hash (odds about 1 in 10 million for a million URLs) would be taken for one."""

    __slots__ = ("_hashes",)

    def __init__(self) -> None:
        self._hashes: set[int] = set()

    def add(self, url: str) -> None:
        self._hashes.add(hash(url))

    def discard(self, url: str) -> None:
        self._hashes.discard(hash(url))

    def __contains__(self, url: object) -> bool:
        return hash(url) in self._hashes

    def __len__(self) -> int:
        return len(self._hashes)
