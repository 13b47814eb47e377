"""Settings of a staging audit (SPEC S7): access, host rewrite, blockers.

Credentials belong to one protection space, the staging origin (scheme,
host and port, RFC 7617), or to each staging origin the user maps to a
production one; they are held in :class:`StagingAccess`, whose ``repr``
masks them, so no log line or config dump can show them.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from crawler.addresses import HOST_NAME, ascii_host
from crawler.failures import ConfigError
from crawler.hostmap import HostMap
from crawler.logs import MASK
from crawler.page.headers import directive_value
from crawler.urls import QueryParamFilter, normalize_url, site_root
from crawler.validate.lastmods import SAME_LASTMOD_SHARE
from settings.secret_sources import cookies_from_file, headers_from_environment
from settings.values import credentials_refused, no_credentials, strings, whole_number

__all__ = ["ACCESS_VARIABLE", "MASK", "Audit", "StagingAccess", "host_map", "production_origin", "read_audit"]

#: How a shared crawl's coordinator hands its staging credentials to its local workers
#: (``--workers N``): their environment, never a command line or the Redis. A worker on
#: another machine takes its own (``$SITEMAP_STAGING_USER``, ``$SITEMAP_STAGING_PASSWORD``,
#: ``$SITEMAP_STAGING_COOKIE``).
ACCESS_VARIABLE = "SITEMAP_CRAWLER_STAGING_ACCESS"

#: A cookie value shorter than this is not masked on its own (it would mask ordinary words).
MIN_MASKED = 4
#: Directive sources a staging blocker can come from.
BLOCKER_SOURCES = ("header", "meta")


@dataclass(frozen=True, slots=True)
class StagingAccess:
    """What is sent to the staging origins only: auth, headers, cookies. Each origin has its
    own list: a cookie file's host-only cookie goes to its own host alone."""

    #: (origin ``scheme://host[:port]/``, its headers): the start URL's first, then each mapped one.
    by_origin: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = field(repr=False)

    def __repr__(self) -> str:
        names = ", ".join(sorted({name for _, headers in self.by_origin for name, _ in headers}))
        return f"StagingAccess(origins={self.origins!r}, headers=[{names}]: {MASK})"

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(origin for origin, _ in self.by_origin)

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        """The start URL's origin's headers."""
        return self.by_origin[0][1]

    def headers_for(self, origin: str) -> tuple[tuple[str, str], ...]:
        """The headers of *origin* (``scheme://host[:port]/``); none for any other origin."""
        return next((headers for each, headers in self.by_origin if each == origin), ())

    def to_json(self) -> str:
        return json.dumps([[origin, [list(header) for header in headers]] for origin, headers in self.by_origin])

    @classmethod
    def from_json(cls, text: str) -> StagingAccess:
        """The access :meth:`to_json` wrote (a coordinator's, for its local worker)."""
        try:
            data = json.loads(text)
            access = cls(tuple((str(origin), tuple((str(n), str(v)) for n, v in headers)) for origin, headers in data))
            if not access.by_origin:
                raise ValueError("no origin")
            return access
        except (ValueError, TypeError) as error:
            raise ConfigError(f"${ACCESS_VARIABLE}: not the staging credentials a coordinator hands on") from error

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret value, for masking in whatever is written: each header's, and each
        cookie's own value too (a line may quote one cookie without the others)."""
        values: list[str] = []
        for _, headers in self.by_origin:
            values += [value for _, value in headers]
            for name, value in headers:
                if name.lower() == "cookie":
                    pairs = (part.partition("=")[2].strip() for part in value.split(";"))
                    values += [cookie for cookie in pairs if len(cookie) >= MIN_MASKED]
        return tuple(dict.fromkeys(values))


@dataclass(frozen=True, slots=True)
class Audit:
    """The audit's settings the crawl itself needs."""

    hosts: HostMap | None
    access: StagingAccess | None
    #: (source, directive) pairs read as if absent: the staging blocker, with --as-if-no-blocker.
    ignored_directives: frozenset[tuple[str, str]]
    record_path: Path | None  # where the audit recorder keeps its facts; None: not an audit
    seed_sitemaps: tuple[str, ...] = ()  # sitemaps read for seeds besides robots.txt's (the audit's --sitemap)
    #: robots.txt read as if its "Disallow: /" lines were absent (the audit's --as-if-no-blocker).
    ignore_disallow_all: bool = False
    #: robots.txt fetched and its Sitemap: lines and Crawl-delay read, its rules not applied (--ignore-robots).
    ignore_robots_rules: bool = False
    # The audit command's own options, settings like every other (SITEMAP_AUDIT_*).
    fail_on: frozenset[str] = frozenset()  # finding kinds that make the audit exit 4
    deep_threshold: int = 5
    as_if_no_blocker: bool = False
    sitemaps: tuple[str, ...] = ()  # the site's sitemaps to compare with: URLs or local files
    compare: Path | None = None  # an earlier audit's folder (--compare)
    same_lastmod_share: int = SAME_LASTMOD_SHARE  # percent of a sitemap file on one lastmod: a build time


def host_map(settings: BaseSettings, start_url: str) -> HostMap | None:
    """The staging-to-production map of SITEMAP_PRODUCTION_URL: a production origin for the start
    URL's host, and ``STAGING=PRODUCTION`` pairs for other hosts (``blog.staging.example.com`` takes
    the start URL's scheme and port); the start URL's pair first. ``None`` when it is not set.

    Every production host shares the start's production scheme and port (one set per host
    name, each written on that origin) and has a name of its own."""
    if settings.get("SITEMAP_PRODUCTION_URL") is None:
        return None
    key = "SITEMAP_PRODUCTION_URL"
    start = site_root(start_url)
    values = strings(settings, key) or [""]
    pairs: dict[str, str] = {}
    for value in values:
        if "@" in value:  # the whole value first: a password may hold '=' and ':' too
            credentials_refused(key)
        left, sep, right = value.partition("=")
        host_part = left.partition("://")[2] if "://" in left else left
        paired = bool(sep) and not any(c in host_part.rstrip("/") for c in "/?#")  # else '=' is the URL's own
        staging = _staging_origin(left, start) if paired else start
        if staging in pairs:
            again = "map another host as STAGING=URL" if staging == start else "give one production origin per host"
            raise ConfigError(f"{key} maps {staging} twice: {again}")
        pairs[staging] = production_origin(right if paired else value, staging)
    if start not in pairs:
        raise ConfigError(f"{key}: the start URL's host {start} has no production origin: give it one")
    first = urlsplit(pairs[start])
    names: set[str] = set()
    for production in pairs.values():
        parts = urlsplit(production)
        if (parts.scheme, parts.port) != (first.scheme, first.port):
            raise ConfigError(
                f"{key}: {production} is not on the scheme and port of {pairs[start]}: every production host "
                "shares them (each host's set is written on its own origin)"
            )
        if parts.hostname in names or production in pairs:
            raise ConfigError(f"{key}: {production} is given twice, or is a staging host too")
        names.add(parts.hostname or "")
    return HostMap(((start, pairs.pop(start)), *pairs.items()))


def _staging_origin(text: str, start: str) -> str:
    """The staging side of a ``STAGING=PRODUCTION`` pair: an origin, or a host name (on the start
    URL's scheme and port; a port may follow the name), never a pattern."""
    text = text.strip()
    shown = repr(text if len(text) <= 80 else text[:77] + "...")
    begins = urlsplit(start)
    bare = "://" not in text
    if bare:
        text = f"{begins.scheme}://{text}"
    try:
        parts = urlsplit(text)
        port = parts.port if parts.port is not None or not bare else begins.port
        host = ascii_host(parts.hostname or "")
    except ValueError:
        host, port = "", None
    if (
        not HOST_NAME.fullmatch(host)
        or parts.scheme not in ("http", "https")
        or parts.path not in ("", "/")
        or any(c.isspace() for c in text)
    ):
        raise ConfigError(f"SITEMAP_PRODUCTION_URL: {shown} before '=' is not a staging host name or origin")
    return site_root(
        normalize_url(f"{parts.scheme}://{host}{f':{port}' if port else ''}/", params=QueryParamFilter(()))
    )


def production_origin(value: object, staging: str) -> str:
    """``scheme://host[:port]/`` of the production URL *value*, or ``ValueError`` in one line.

    Only an origin: every loc is moved from *staging* to it as a whole, so a path (a site in a
    sub-folder) would be dropped without a word; a guess (``https://`` before ``https//x``)
    would write a sitemap for a host nobody meant."""
    key = "SITEMAP_PRODUCTION_URL"
    text = str(value).strip()
    shown = repr(text if len(text) <= 80 else text[:77] + "...")
    if not text:
        raise ConfigError(f"{key} is empty: give the production origin, e.g. https://www.example.com")
    no_credentials(key, text)
    scheme, sep, rest = text.partition("://")
    not_url = f"{key} {shown} is not an absolute http(s) URL with a host (https://www.example.com)"
    if not sep or scheme.lower() not in ("http", "https") or not rest or any(c.isspace() for c in text):
        raise ConfigError(not_url)
    try:
        parts = urlsplit(text)
        origin = site_root(normalize_url(f"{parts.scheme}://{parts.netloc}/", params=QueryParamFilter(())))
    except ValueError:
        raise ConfigError(not_url) from None
    if "?" in text or "#" in text:
        raise ConfigError(f"{key} {shown}: a query or fragment is not supported: give the origin ({origin})")
    if parts.path not in ("", "/"):
        raise ConfigError(f"{key} {shown}: a path is not supported: give the origin ({origin})")
    if origin == staging:
        raise ConfigError(f"{key} {origin} is the crawled (staging) origin itself: give the production origin")
    return origin


def _fail_on(settings: BaseSettings) -> frozenset[str]:
    names = frozenset(strings(settings, "SITEMAP_AUDIT_FAIL_ON"))
    if not names:
        return names
    from crawler.audit.findings import Kind  # noqa: PLC0415 - an audit only

    known = [kind.value for kind in Kind]
    for name in sorted(name for name in names if name.removeprefix("new:") not in known):
        raise ConfigError(f"SITEMAP_AUDIT_FAIL_ON: unknown finding kind {name!r} (known: {', '.join(known)})")
    return names


def _password(settings: BaseSettings) -> str | None:
    variable = settings.get("SITEMAP_STAGING_PASSWORD_ENV")
    if variable:
        value = os.environ.get(str(variable))
        if value is None:
            raise ConfigError(f"--password-env {variable}: no such environment variable")
        return value
    password = settings.get("SITEMAP_STAGING_PASSWORD") or os.environ.get("SITEMAP_STAGING_PASSWORD")
    return str(password) if password else None


def _access(settings: BaseSettings, start_url: str, hosts: HostMap | None) -> StagingAccess | None:
    if settings.get("SITEMAP_ROLE") == "worker" and (inherited := os.environ.get(ACCESS_VARIABLE)):
        return StagingAccess.from_json(inherited)  # a local worker: its coordinator's, however given
    headers: list[tuple[str, str]] = []
    user = settings.get("SITEMAP_STAGING_USER") or os.environ.get("SITEMAP_STAGING_USER")
    password = _password(settings)
    if password is not None and not user:
        raise ConfigError("a staging password needs a user (--user)")
    if user:
        if ":" in str(user):
            raise ConfigError("--user may not contain ':' (RFC 7617)")
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
        headers.append(("Authorization", f"Basic {token}"))
    lines = [*strings(settings, "SITEMAP_STAGING_HEADERS")]
    lines += headers_from_environment(strings(settings, "SITEMAP_STAGING_HEADERS_ENV"))
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip() or any(c in name for c in " \t\r\n") or "\n" in value or "\r" in value:
            raise ConfigError("--header expects 'Name: value' on one line")
        headers.append((name.strip(), value.strip()))
    cookies = [*strings(settings, "SITEMAP_STAGING_COOKIES")]
    if os.environ.get("SITEMAP_STAGING_COOKIE"):
        cookies.append(os.environ["SITEMAP_STAGING_COOKIE"])
    for cookie in cookies:
        name, sep, _ = cookie.partition("=")
        if not sep or not name.strip() or any(c in cookie for c in "\r\n"):
            raise ConfigError("--cookie expects name=value")
    cookie_file = settings.get("SITEMAP_STAGING_COOKIE_FILE")
    by_origin: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for origin in hosts.stagings if hosts else (site_root(start_url),):
        own = [*cookies]
        if cookie_file:  # the file's cookies for this host: the start's must be there
            own += cookies_from_file(str(cookie_file), start_url if not by_origin else origin, required=not by_origin)
        jar = [("Cookie", "; ".join(each.strip() for each in own))] if own else []
        by_origin.append((origin, (*headers, *jar)))
    if not any(each for _, each in by_origin):
        return None
    return StagingAccess(tuple(by_origin))


def _directives(settings: BaseSettings) -> frozenset[tuple[str, str]]:
    pairs = set()
    for item in strings(settings, "SITEMAP_IGNORE_DIRECTIVES"):
        source, sep, directive = item.partition(":")
        if not sep or source not in BLOCKER_SOURCES or not directive.strip():
            raise ConfigError(f"SITEMAP_IGNORE_DIRECTIVES entries are header:VALUE or meta:VALUE, not {item!r}")
        pairs.add((source, directive_value(directive)))
    return frozenset(pairs)


def read_audit(settings: BaseSettings, start_url: str) -> Audit:
    hosts = host_map(settings, start_url)
    record = settings.get("SITEMAP_AUDIT_RECORD")
    seeds = tuple(strings(settings, "SITEMAP_SEED_SITEMAPS"))
    for seed in seeds:
        no_credentials("SITEMAP_SEED_SITEMAPS (--sitemap)", seed)
        if not seed.startswith(("http://", "https://")):
            raise ConfigError(f"SITEMAP_SEED_SITEMAPS entries are http(s) URLs, not {seed!r}")
    return Audit(
        hosts, _access(settings, start_url, hosts), _directives(settings), Path(record) if record else None, seeds,
        settings.getbool("SITEMAP_ROBOTS_IGNORE_DISALLOW_ALL"), settings.getbool("SITEMAP_ROBOTS_IGNORE_RULES"),
        fail_on=_fail_on(settings), deep_threshold=whole_number(settings, "SITEMAP_AUDIT_DEEP_THRESHOLD"),
        as_if_no_blocker=settings.getbool("SITEMAP_AUDIT_AS_IF_NO_BLOCKER"),
        sitemaps=_sitemaps(settings),
        compare=Path(str(compare)) if (compare := settings.get("SITEMAP_AUDIT_COMPARE")) else None,
        same_lastmod_share=whole_number(settings, "SITEMAP_SAME_LASTMOD_SHARE"),
    )  # fmt: skip


def _sitemaps(settings: BaseSettings) -> tuple[str, ...]:
    sitemaps = tuple(strings(settings, "SITEMAP_AUDIT_SITEMAPS"))
    for sitemap in sitemaps:
        no_credentials("SITEMAP_AUDIT_SITEMAPS (--sitemap)", sitemap)
    return sitemaps
