"""The audit, put together: every URL of the record explained, every finding
gathered, staging blockers confirmed (pure)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from crawler.audit.analysis import NotFoundPage, SiteFacts, site_findings
from crawler.audit.blockers import Blocker, confirm
from crawler.audit.depth import click_depths
from crawler.audit.existing import ExistingSitemaps, compare
from crawler.audit.findings import Finding, Kind
from crawler.audit.grouping import group_under_blockers
from crawler.audit.inlinks import linked_from
from crawler.audit.record import Page, pages
from crawler.audit.report import AuditReport, Row
from crawler.hostmap import HostMap

__all__ = ["build_report"]


def _row(
    page: Page,
    facts: SiteFacts,
    public: Callable[[str], str],
    listed: set[str] | None,
    kinds: list[str],
    *,
    db: sqlite3.Connection,
) -> Row:
    return {
        "url": page.url,
        "production_url": public(page.url),
        "status": page.status,
        "outcome": "listed" if page.reason is None else "excluded",
        "reason": page.reason,
        "detail": page.detail,
        "canonical": page.canonical,
        "redirect_to": page.redirect_to,
        "depth": page.clicks,  # fewest clicks from the start URL; None: not linked
        "response_ms": page.response_ms,
        "bytes": page.bytes,
        "inlinks": facts.inlinks.get(page.url, 0),
        "linked_from": linked_from(db, page.url),
        "in_sitemaps": None if listed is None else page.url in listed,
        "title": page.title,
        "findings": " ".join(kinds),
    }


def build_report(
    db: sqlite3.Connection,
    *,
    audit: dict[str, Any],
    hosts: HostMap | None,
    deep_threshold: int,
    blockers: list[Blocker],
    not_found: NotFoundPage | None,
    existing: ExistingSitemaps | None,
) -> AuditReport:
    start_url = str(audit["start_url"])
    db.execute("PRAGMA temp_store = FILE")  # big sorts go to disk, not memory
    everything = {page.url: page for page in pages(db)}
    for url, clicks in click_depths(db, start_url):
        if (reached := everything.get(url)) is not None:
            reached.clicks = clicks
    inlinks = {
        str(target): int(count)
        for target, count in db.execute("SELECT target, COUNT(*) FROM links GROUP BY target")
        if target in everything  # link targets never recorded (over a limit) are not explained
    }
    facts = SiteFacts(everything, inlinks, start_url, deep_threshold, not_found)
    confirmed = confirm(blockers, everything.values())
    findings = [Finding(Kind.STAGING_BLOCKER, start_url, blocker.describe()) for blocker in confirmed]
    # The site's own https hosts: an http:// link to them is mixed content.
    public = hosts.production if hosts else start_url
    names = tuple(
        name for url in (start_url, public) if url.startswith("https://") and (name := urlsplit(url).hostname)
    )
    findings += site_findings(db, facts, names)
    if existing is not None:
        findings += existing.findings
    if existing is not None and existing.sources:  # none read (all off the origin): nothing to compare
        findings += compare(existing, facts)
    if not audit.get("as_if_no_blocker"):  # read away, the blocker causes nothing: every finding is the site's
        findings = group_under_blockers(findings, confirmed, everything, robots_obeyed=not audit.get("ignore_robots"))
    by_url: dict[str, list[str]] = {}
    for finding in findings:
        kinds = by_url.setdefault(finding.url, [])
        if finding.kind.value not in kinds:
            kinds.append(finding.kind.value)
    production = hosts.to_production if hosts else (lambda url: url)
    listed = set(existing.listed) if existing is not None and existing.sources else None
    rows = [_row(page, facts, production, listed, by_url.get(page.url, []), db=db) for page in everything.values()]
    sitemaps = {
        "sources": existing.sources if existing else [],
        "files": existing.files if existing else 0,
        "urls": len(existing.listed) if existing else 0,
    }
    described = [{"kind": blocker.kind, "value": blocker.value, "detail": blocker.describe()} for blocker in confirmed]
    return AuditReport(audit, described, sitemaps, findings, rows)
