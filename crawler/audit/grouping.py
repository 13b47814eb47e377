"""Findings a staging blocker causes, grouped under it (pure).

While a site-wide noindex or ``Disallow: /`` is in force, every listed URL
is "not indexable" (and canonicals to them too) and, behind ``Disallow: /``,
where no page is fetched, every listed URL is an orphan: sixty rows that
all say "remove the blocker". They are folded into the blocker's finding (its ``grouped`` URLs
by kind, its ``related`` URLs for the CSV), with the option that shows the
site as it would be without it. A page's own problems stay listed.
"""

from __future__ import annotations

from collections.abc import Callable

from crawler.audit.blockers import Blocker
from crawler.audit.finding_store import FindingStore
from crawler.audit.findings import Finding, Kind
from crawler.audit.record import Page

__all__ = ["RERUN", "group_under_blockers"]

#: The option that reads the blocker away, named in the grouped finding.
RERUN = "--as-if-no-blocker"


#: The kinds a blocker can cause (:func:`_caused`), in the order they are grouped.
_CAUSED_KINDS = (Kind.LISTED_NOT_INDEXABLE, Kind.CANONICAL_NOT_INDEXABLE, Kind.ORPHANS)


def _reason(blocker: Blocker) -> str:
    return "robots" if blocker.kind == "robots" else "noindex"


def _stops_links(blocker: Blocker, robots_obeyed: bool) -> bool:
    """No page is fetched past an obeyed robots.txt ``Disallow: /``, so no link is seen (a noindex,
    nofollow page's links are still recorded, and so are those of a robots.txt ignored by
    ``--ignore-robots``: their orphans are the site's own)."""
    return blocker.kind == "robots" and robots_obeyed


def _caused(finding: Finding, blocker: Blocker, page_of: Callable[[str], Page | None], robots_obeyed: bool) -> bool:
    if not blocker.covers(finding.url):
        return False  # a blocker of another host of the audit
    stops = _stops_links(blocker, robots_obeyed)
    if finding.kind is Kind.LISTED_NOT_INDEXABLE:
        page = page_of(finding.url)
        return page.reason == _reason(blocker) if page is not None else stops
    if finding.kind is Kind.CANONICAL_NOT_INDEXABLE and finding.related:
        target = page_of(finding.related[0])
        return target is not None and target.reason == _reason(blocker)
    return finding.kind is Kind.ORPHANS and stops


def _describe(grouped: dict[str, list[str]]) -> str:
    counts = ", ".join(f"{len(urls)} {kind}" for kind, urls in grouped.items())
    return f"; it causes {counts}, grouped here: rerun with {RERUN} to see the site without it"


def group_under_blockers(
    findings: FindingStore,
    blockers: list[Blocker],
    page_of: Callable[[str], Page | None],
    *,
    robots_obeyed: bool = True,
) -> None:
    """Fold the findings the confirmed *blockers* cause into the blockers' findings
    (the ``staging-blocker`` ones, in the same order), in *findings*."""
    pairs = list(zip(findings.heads(), blockers, strict=False))
    if not pairs:
        return
    caused = []
    for kind in _CAUSED_KINDS:
        for finding in findings.of_kind(kind):
            head = next((head for head, blocker in pairs if _caused(finding, blocker, page_of, robots_obeyed)), None)
            if head is not None:
                head.grouped.setdefault(finding.kind.value, []).append(finding.url)
                caused.append(finding.seq)
    findings.remove(caused)
    for head, _ in pairs:
        if head.grouped:
            head.detail += _describe(head.grouped)
            head.related = sorted({url for urls in head.grouped.values() for url in urls})
            findings.update(head)
