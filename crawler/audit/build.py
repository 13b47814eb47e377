"""The audit, put together: every URL of the record explained, every finding
gathered, staging blockers confirmed (pure).

The findings go to a table of the record (:mod:`crawler.audit.finding_store`)
and the URL rows are read back from it one by one while the report is
written: memory stays flat however big the site.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from crawler.audit.analysis import site_findings
from crawler.audit.blockers import Blocker, confirm
from crawler.audit.existing import ExistingSitemaps, compare
from crawler.audit.facts import NotFoundPage, SiteFacts
from crawler.audit.finding_store import FindingStore
from crawler.audit.findings import Finding, Kind
from crawler.audit.grouping import group_under_blockers
from crawler.audit.inlinks import linked_from
from crawler.audit.record import page_of
from crawler.audit.report import AuditReport, Row
from crawler.hostmap import HostMap

__all__ = ["build_report"]


def _rows(facts: SiteFacts, public: Callable[[str], str], compared: bool, findings: FindingStore) -> Iterator[Row]:
    for record in facts.rows():
        page = page_of(record)
        yield {
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
            "inlinks": record["inlinks"],
            "linked_from": linked_from(facts.db, page.url),
            "in_sitemaps": bool(record["in_sitemaps"]) if compared else None,
            "title": page.title,
            "findings": " ".join(findings.kinds_of(page.url)),
        }


def _counts(db: sqlite3.Connection, hosts: HostMap | None) -> dict[str, Any]:
    """How many URLs the record holds, by outcome and by reason (most first); with several hosts,
    by outcome on each (its production root)."""
    reasons = dict(db.execute("SELECT reason, COUNT(*) FROM pages GROUP BY reason ORDER BY COUNT(*) DESC, reason"))
    listed = int(reasons.pop(None, 0))
    excluded = sum(reasons.values())
    outcomes = {name: count for name, count in (("excluded", excluded), ("listed", listed)) if count}
    counts: dict[str, Any] = {"urls": listed + excluded, "outcomes": outcomes, "reasons": reasons}
    if hosts is not None and hosts.several:
        counts["hosts"] = {production: _host_outcomes(db, staging) for staging, production in hosts.pairs}
        # URLs on hosts the map does not name: linked to, never crawled (out of scope)
        counts["other_hosts"] = counts["urls"] - sum(sum(each.values()) for each in counts["hosts"].values())
    return counts


def _host_outcomes(db: sqlite3.Connection, root: str) -> dict[str, int]:
    """The URLs under *root* (a staging root), by outcome."""
    query = "SELECT reason IS NULL, COUNT(*) FROM pages WHERE substr(url, 1, ?) = ? GROUP BY 1"
    by_listed = dict(db.execute(query, (len(root), root)))
    return {"excluded": int(by_listed.get(0, 0)), "listed": int(by_listed.get(1, 0))}


def _blocked(blocker: Blocker, start_url: str) -> str:
    """The URL a blocker's finding is on: the start URL, or another host's root."""
    return blocker.root if blocker.root and not start_url.startswith(blocker.root) else start_url


def build_report(
    db: sqlite3.Connection,
    *,
    audit: dict[str, Any],
    hosts: HostMap | None,
    deep_threshold: int,
    blockers: list[Blocker],
    not_found: Mapping[str, NotFoundPage],
    existing: ExistingSitemaps | None,
) -> AuditReport:
    """The report of the record in *db*; its URL rows are read from *db*, which stays open until written."""
    start_url = str(audit["start_url"])
    facts = SiteFacts(db, start_url, deep_threshold, not_found, hosts.stagings[1:] if hosts else ())
    confirmed = confirm(blockers, facts.pages("status = 200 AND digest IS NOT NULL")) if blockers else []
    production = hosts.to_production if hosts else (lambda url: url)
    findings = FindingStore(db, production)
    findings.add(
        Finding(Kind.STAGING_BLOCKER, _blocked(blocker, start_url), blocker.describe()) for blocker in confirmed
    )
    # The site's own https hosts: an http:// link to them is mixed content.
    roots = [root for pair in hosts.pairs for root in pair] if hosts else [start_url]
    names = tuple(name for url in roots if url.startswith("https://") and (name := urlsplit(url).hostname))
    findings.add(site_findings(db, facts, names))
    if existing is not None:
        findings.add(existing.findings)
    compared = existing is not None and bool(existing.sources)
    if existing is not None and compared:  # none read (all off the origin): nothing to compare
        findings.add(compare(existing, facts))
    if not audit.get("as_if_no_blocker"):  # read away, the blocker causes nothing: every finding is the site's
        group_under_blockers(findings, confirmed, facts.get, robots_obeyed=not audit.get("ignore_robots"))
    sitemaps = {
        "sources": existing.sources if existing else [],
        "files": existing.files if existing else 0,
        "urls": existing.urls if existing else 0,
    }
    described = [{"kind": blocker.kind, "value": blocker.value, "detail": blocker.describe()} for blocker in confirmed]
    return AuditReport(
        audit, described, sitemaps, findings, _counts(db, hosts), lambda: _rows(facts, production, compared, findings)
    )
