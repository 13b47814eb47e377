"""The site's own sitemaps, read with validate's reader and compared with
what the crawl found (pure apart from reading the sitemaps)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from crawler.audit.facts import SiteFacts
from crawler.audit.findings import Finding, Kind
from crawler.audit.sources import off_origin
from crawler.hostmap import HostMap
from crawler.validate.document import Entry
from crawler.validate.findings import Finding as SitemapFinding
from crawler.validate.lastmods import future_value
from crawler.validate.sets import SetOptions, SitemapSet

__all__ = ["ExistingSitemaps", "compare", "read_existing"]

#: validate's warnings that are audit findings of their own.
_AS_KIND = {"duplicate": Kind.LISTED_TWICE, "future-lastmod": Kind.FUTURE_LASTMOD, "same-lastmod": Kind.SAME_LASTMOD}


@dataclass(slots=True)
class ExistingSitemaps:
    sources: list[str] = field(default_factory=list)  # what was read (URLs or paths)
    files: int = 0
    urls: int = 0  # distinct URLs listed (the record's ``listed`` table has them, with the times listed)
    findings: list[Finding] = field(default_factory=list)


_LISTED = "INSERT INTO listed VALUES (?, 1) ON CONFLICT (url) DO UPDATE SET times = times + 1"


def read_existing(
    sources: Iterable[str],
    options: SetOptions,
    hosts: HostMap | None,
    db: sqlite3.Connection,
    existing: ExistingSitemaps | None = None,
) -> ExistingSitemaps:
    """Every finding of the given sitemaps (indexes followed) and every entry, into the record's
    ``listed`` table, locs mapped to staging (those on the staging origin, *options*' alias, are
    staging URLs already); added to *existing* when given (one host's sitemaps after another's)."""
    existing = existing if existing is not None else ExistingSitemaps()
    for source in sources:
        sitemaps = SitemapSet(source, options)
        existing.sources.append(source)
        for item in sitemaps:
            if isinstance(item, Entry):
                url = hosts.to_staging(item.loc) if hosts else item.loc
                if hosts and off_origin(item.loc, hosts.staging, hosts)[0] is None:
                    continue  # on neither host: a sitemap error already, not a page of this site
                db.execute(_LISTED, (url,))
            else:
                existing.findings.append(_finding(item, hosts))
        existing.files += sitemaps.files
    (existing.urls,) = db.execute("SELECT COUNT(*) FROM listed").fetchone()
    db.commit()
    return existing


def _finding(item: SitemapFinding, hosts: HostMap | None) -> Finding:
    kind = _AS_KIND.get(item.rule, Kind.SITEMAP_ERRORS if item.is_error else Kind.SITEMAP_WARNINGS)
    if kind is Kind.FUTURE_LASTMOD and item.loc is not None:  # about a page: its URL, the value and where
        url = hosts.to_staging(item.loc) if hosts else item.loc
        return Finding(kind, url, f"lastmod {future_value(item)} at {item.file}:{item.line}")
    where = f"{item.file}:{item.line}:{item.col}"
    url = item.message.split(" ", 1)[0] if kind is Kind.LISTED_TWICE else item.file
    if hosts and url.startswith(("http://", "https://")):
        url = hosts.to_staging(url)
    return Finding(kind, url, f"{where}: {item.severity}: {item.rule}: {item.message}")


def compare(existing: ExistingSitemaps, facts: SiteFacts) -> Iterator[Finding]:
    """Listed but not indexable, orphans, and indexable but not listed.

    An orphan is listed and no click path leads to it from the start URL
    (no click depth): a link from another orphan is no way in, a redirect
    from a linked URL is."""
    unreached = "SELECT url FROM listed WHERE url NOT IN (SELECT url FROM pages) ORDER BY rowid"
    for (url,) in facts.db.execute(unreached):
        yield Finding(Kind.LISTED_NOT_INDEXABLE, url, "never reached by the crawl")
    for page in facts.pages(
        "in_sitemaps AND (reason IS NOT NULL OR (clicks IS NULL AND url != ?))", (facts.start_url,)
    ):
        if page.reason is not None:
            status = f" (HTTP {page.status})" if page.status else ""
            yield Finding(
                Kind.LISTED_NOT_INDEXABLE, page.url, f"{page.reason}{status}: {page.detail or ''}".rstrip(": ")
            )
        if page.url != facts.start_url and page.clicks is None:
            yield Finding(Kind.ORPHANS, page.url, "listed in the sitemaps, no link path from the start URL")
    for page in facts.pages("reason IS NULL AND NOT in_sitemaps"):
        if not facts.is_own_404(page):  # the site's 404 page answering 200: a soft 404, never one to list
            yield Finding(Kind.INDEXABLE_NOT_LISTED, page.url, "indexable, not in the site's sitemaps")
