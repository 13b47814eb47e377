"""The audit's verdict: a severity and a fix per finding kind, and the one
line a release manager reads first (pure).

*critical* is what keeps a launch from working (nothing indexed, pages a
visitor or a search engine cannot reach, a sitemap that submits what will
be refused) and is certain, never a guess; *warning* costs ranking or crawl
budget, or rests on a heuristic (a soft 404 is read from a title);
*notice* is tidiness. Only critical findings make a site "Not ready".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from crawler.audit.findings import Finding, Kind

__all__ = ["SEVERITY", "Severity", "blocker_line", "kinds_block", "rule", "verdict_block", "verdict_line"]


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    NOTICE = "notice"


@dataclass(frozen=True, slots=True)
class Rule:
    severity: Severity
    one: str  # the verdict's noun for one finding ("broken link")
    many: str  # and for several
    fix: str  # what to do about it, in a sentence


_C, _W, _N = Severity.CRITICAL, Severity.WARNING, Severity.NOTICE

#: Every finding kind, by its value (a kind another module adds is named here too), in verdict order.
SEVERITY: dict[str, Rule] = {
    "staging-blocker": Rule(_C, "blocker", "blockers", "Remove the site-wide noindex or Disallow: / before launch."),
    "broken-links": Rule(_C, "broken link", "broken links", "Fix or remove the links, or redirect the URL (301)."),
    "redirect-loops": Rule(_C, "redirect loop", "redirect loops", "Point one hop of the loop at a real page."),
    "listed-not-indexable": Rule(
        _C,
        "listed URL not indexable",
        "listed URLs not indexable",
        "List only indexable URLs: drop these from the sitemap, or make them indexable.",
    ),
    "canonical-not-indexable": Rule(
        _C,
        "canonical not indexable",
        "canonicals not indexable",
        "Point the canonical at the page itself or at an indexable page.",
    ),
    "sitemap-errors": Rule(
        _C, "sitemap error", "sitemap errors", "Fix the sitemap file: search engines skip what breaks the protocol."
    ),
    "soft-404": Rule(_W, "soft 404", "soft 404s", "Answer 404 or 410 for pages that are gone, or give them content."),
    "duplicate-content": Rule(
        _W, "duplicate page", "duplicate pages", "Give the copies a canonical to the kept URL, or redirect them."
    ),
    "hreflang-errors": Rule(
        _W, "hreflang error", "hreflang errors", "Link every alternate back, to indexable URLs, with valid codes."
    ),
    "redirect-chains": Rule(_W, "redirect chain", "redirect chains", "Link and redirect straight to the final URL."),
    "temporary-redirects": Rule(
        _W, "temporary redirect", "temporary redirects", "Use 301 or 308 for a move that stays."
    ),
    "canonical-chains": Rule(
        _W, "canonical chain", "canonical chains", "Point every canonical at the final URL directly."
    ),
    "canonical-redirects-back": Rule(
        _W,
        "canonical redirecting back",
        "canonicals redirecting back",
        "Make the canonical the URL that answers 200 (a generator's and its server's trailing-slash options agree).",
    ),
    "mixed-content": Rule(_W, "mixed-content page", "mixed-content pages", "Link the site's own pages with https://."),
    "orphans": Rule(_W, "orphan", "orphans", "Link these pages from the site, or drop them from the sitemap."),
    "indexable-not-listed": Rule(
        _W,
        "indexable URL not listed",
        "indexable URLs not listed",
        "Add them to the sitemap, or noindex them if they should stay out.",
    ),
    "future-lastmod": Rule(
        _W, "future lastmod", "future lastmods", "Write the page's real last change: a future date is ignored."
    ),
    "same-lastmod": Rule(
        _N, "file with one lastmod", "files with one lastmod", "Write each page's own last change, or no lastmod."
    ),
    "listed-twice": Rule(_N, "URL listed twice", "URLs listed twice", "List each URL once."),
    "sitemap-warnings": Rule(
        _N, "sitemap warning", "sitemap warnings", "Tidy the sitemap file: readable, but see validate's rule named."
    ),
    "deep-pages": Rule(_N, "deep page", "deep pages", "Link these pages from closer to the start page."),
}

_ORDER = {severity: n for n, severity in enumerate(Severity)}


def rule(kind: str) -> Rule:
    """The rule of *kind*; a kind not in the table is a warning (a test keeps the table complete)."""
    return SEVERITY.get(kind) or Rule(_W, kind, kind, "")


def _ordered() -> list[str]:
    """Every kind's value, most severe first, in table order within a severity."""
    table = list(SEVERITY)

    def key(name: str) -> tuple[int, int]:
        return _ORDER[rule(name).severity], table.index(name) if name in table else len(table)

    return sorted((kind.value for kind in Kind), key=key)


def _counted(counts: Mapping[str, int], severity: Severity) -> list[str]:
    return [
        f"{counts[name]} {rule(name).one if counts[name] == 1 else rule(name).many}"
        for name in _ordered()
        if rule(name).severity is severity and counts.get(name)
    ]


def verdict_line(counts: Mapping[str, int]) -> str:
    """``Ready for launch`` without a critical finding (warnings named after it), else
    ``Not ready: 1 blocker, 3 broken links`` (critical kinds only, in table order)."""
    critical = _counted(counts, Severity.CRITICAL)
    warnings = sum(counts.get(name, 0) for name in _ordered() if rule(name).severity is Severity.WARNING)
    if critical:
        also = f" (and {warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""
        return "Not ready: " + ", ".join(critical) + also
    named = _counted(counts, Severity.WARNING)
    return "Ready for launch" + ("; to look at: " + ", ".join(named) if named else "")


def blocker_line(blockers: list[dict[str, Any]], read_away: bool) -> str:
    """What the report says about staging blockers, found or not (never silent)."""
    if not blockers:
        return "No staging blocker found"
    found = "; ".join(str(blocker["detail"]) for blocker in blockers)
    if read_away:
        return f"Staging blocker (read away by --as-if-no-blocker): {found}"
    return f"Staging blocker: {found}"


def kinds_block(counts: Mapping[str, int], grouped: Mapping[str, int]) -> list[dict[str, Any]]:
    """Every kind with its severity, count (zeros included), fix, and the findings grouped under a blocker."""
    return [
        {
            "kind": name,
            "severity": str(rule(name).severity),
            "count": counts.get(name, 0),
            "grouped": grouped.get(name, 0),
            "fix": rule(name).fix,
        }
        for name in _ordered()
    ]


def verdict_block(
    counts: Mapping[str, int],
    heads: list[Finding],
    blockers: list[dict[str, Any]],
    *,
    read_away: bool,
    compare: dict[str, Any] | None,
) -> dict[str, Any]:
    """The report's head: the verdict, the blocker line, the compare line and every kind
    (*counts* by kind; *heads*, the staging blockers' findings, with what they group)."""
    grouped: Counter[str] = Counter()
    for head in heads:
        grouped.update({kind: len(urls) for kind, urls in head.grouped.items()})
    line = None
    if compare is not None:
        when = f" (finished {compare['finished']})" if compare.get("finished") else ""
        line = (
            f"Compared with {compare['with']}{when}: {compare['new']} new, "
            f"{compare['still_there']} still there, {compare['fixed']} fixed"
        )
        if compare.get("hosts_not_audited"):
            hosts = ", ".join(root.rstrip("/") for root in compare["hosts_not_audited"])
            line += f"; {compare['not_audited']} on {hosts}, not audited this time"
        if compare.get("hosts_added"):
            hosts = ", ".join(root.rstrip("/") for root in compare["hosts_added"])
            line += f"; new to this audit: {hosts} (every finding there is new)"
    critical = any(count for name, count in counts.items() if rule(name).severity is Severity.CRITICAL)
    return {
        "verdict": verdict_line(counts),
        "ready": not critical,
        "blocker": blocker_line(blockers, read_away),
        "compare": line,
        "kinds": kinds_block(counts, grouped),
    }
