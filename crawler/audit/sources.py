"""Which of the site's own sitemaps a staging audit reads (pure).

What the site names (robots.txt ``Sitemap:`` lines) is only ever fetched over
HTTP(S) from the staging origin: another port or another name of the same
host, another host, a local path or a ``file:`` URL may be production, or
the auditor's own machine (``Sitemap: /etc/passwd``). A production URL names
a staging page (``PROD/x`` is ``STAGING/x``) and is read there. Local files
are read only when the user names them on the command line (``--sitemap``).
"""

from __future__ import annotations

from collections.abc import Iterable

from crawler.audit.findings import Finding, Kind
from crawler.hostmap import HostMap
from crawler.scope import Scope
from crawler.urls import normalize_url

__all__ = ["MAX_NAMED", "off_origin", "site_sitemaps"]

#: robots.txt ``Sitemap:`` lines considered (the crawl reads as many files at most).
MAX_NAMED = 1000
_SHOWN = 200  # characters of a line shown in a finding


def off_origin(url: str, staging_root: str, hosts: HostMap | None) -> tuple[str | None, str]:
    """*url* on the staging origin (mapped from production), or ``None`` and why it is not read."""
    try:
        normalized = normalize_url(url)
    except ValueError:  # a path, file:, ftp:: what the site names is never opened on this machine
        return None, "not an absolute http(s) URL; a local file is read only when given with --sitemap"
    if hosts is not None:
        staging = hosts.to_staging(normalized)
        if not hosts.on_staging(staging):
            where = " or ".join(root.rstrip("/") for root in hosts.stagings)
            return None, f"not on the staging origin {where}: an audit requests nothing else"
        return staging, ""
    scope = Scope(staging_root)
    if not scope.contains(normalized):
        return None, f"not on the staging origin {scope.origin}: an audit requests nothing else"
    return normalized, ""


def site_sitemaps(
    named: Iterable[tuple[str, str | None]], staging_root: str, hosts: HostMap | None
) -> tuple[list[tuple[str, str]], list[Finding], dict[str, list[str]]]:
    """The sitemaps each robots.txt names that are read: (staging URL, the root of the host whose
    robots.txt names it first, whose sitemap it is), each once; a ``sitemap-errors`` finding on
    that robots.txt for each that is not; and each one's naming roots (every host may name one
    index of all hosts: cross-submission). *named* is (line, the naming robots.txt's root), the
    start's if unknown."""
    sources: dict[str, str] = {}
    refused: list[Finding] = []
    naming: dict[str, list[str]] = {}
    lines = list(named)
    for line, owner in lines[:MAX_NAMED]:
        root = owner or staging_root
        url, why = off_origin(line, staging_root, hosts)
        if url is None:
            shown = line if len(line) <= _SHOWN else line[: _SHOWN - 3] + "..."
            refused.append(Finding(Kind.SITEMAP_ERRORS, root + "robots.txt", f"Sitemap: {shown} not fetched: {why}"))
        else:
            sources.setdefault(url, root)
            if root not in (roots := naming.setdefault(url, [])):
                roots.append(root)
    if len(lines) > MAX_NAMED:
        more = f"{len(lines) - MAX_NAMED} more Sitemap: lines not read (at most {MAX_NAMED})"
        refused.append(Finding(Kind.SITEMAP_ERRORS, staging_root + "robots.txt", more))
    return list(sources.items()), refused, naming
