"""The end of ``sitemap-crawler audit``: ``--fail-on`` (plain kinds and
``new:KIND``), ``--compare`` with an earlier audit, and the summary on
stderr, the verdict first: what a release manager reads, in the order
they act on it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.audit.changes import NEW, PreviousAudit, mark, production_roots, read_previous
from crawler.audit.findings import Kind
from crawler.audit.report import AuditReport
from crawler.cli.exits import EXIT_FINDINGS
from crawler.cli.usage import UsageError
from crawler.coverage.parameters import parameter_lines
from crawler.logs import json_event

__all__ = ["FailOn", "compare_with", "parse_fail_on", "previous_audit", "print_summary"]

_NEW = "new:"


@dataclass(frozen=True, slots=True)
class FailOn:
    kinds: set[Kind] = field(default_factory=set)  # any finding of these
    new: set[Kind] = field(default_factory=set)  # only findings the earlier audit did not have


def parse_fail_on(value: str | list[str] | None) -> FailOn:
    """``KIND[,KIND...]``, each optionally ``new:KIND``; an unknown kind is a usage error."""
    parts = value if isinstance(value, list) else [value or ""]
    fail_on = FailOn()
    for name in (name.strip() for part in parts for name in str(part).split(",")):
        if not name:
            continue
        wanted = fail_on.new if name.startswith(_NEW) else fail_on.kinds
        bare = name.removeprefix(_NEW).strip()
        try:
            wanted.add(Kind(bare))
        except ValueError:
            known = ", ".join(kind.value for kind in Kind)
            raise UsageError(f"--fail-on: unknown finding kind {bare!r} (known: {known})") from None
    return fail_on


def previous_audit(folder: Any, fail_on: FailOn) -> PreviousAudit | None:
    """The earlier audit ``--compare`` names, read before the crawl (so a mistake costs no crawl)."""
    if not folder:
        if fail_on.new:
            names = ", ".join(sorted(_NEW + kind.value for kind in fail_on.new))
            raise UsageError(f"--fail-on {names}: new findings need --compare DIR (an earlier audit)")
        return None
    path = Path(str(folder))
    try:
        return read_previous(path.parent if path.name == "report.json" and path.is_file() else path)
    except ValueError as error:
        raise UsageError(str(error)) from None


def compare_with(report: AuditReport, previous: PreviousAudit | None) -> None:
    if previous is not None:
        report.compare = mark(report.findings, previous, production_roots(report.audit))


def _failing(report: AuditReport, fail_on: FailOn) -> list[str]:
    """The ``--fail-on`` names found; a kind grouped under a staging blocker still counts."""
    counts = report.findings.counts()
    present = {kind for kind in fail_on.kinds if counts[kind.value]}
    present |= {Kind(kind) for head in report.findings.heads() for kind in head.grouped if Kind(kind) in fail_on.kinds}
    marked_new = report.findings.kinds_marked(NEW)
    new = {kind for kind in fail_on.new if kind.value in marked_new}
    return sorted(kind.value for kind in present) + sorted(_NEW + kind.value for kind in new)


def print_summary(
    report: AuditReport, fail_on: FailOn, *, out: Path, seconds: float, preview: list[Path], json_logs: bool
) -> int:
    """The summary on stderr (the verdict first); the exit status (4 when a ``--fail-on`` kind is found)."""
    summary = report.summary()
    verdict = report.verdict()
    failing = _failing(report, fail_on)
    code = EXIT_FINDINGS if failing else 0
    if json_logs:
        message = f"{verdict['verdict']}; audited {summary['urls']} URLs; report {out / 'report.html'}"
        counts = {**summary, "kinds": {entry["kind"]: entry["count"] for entry in verdict["kinds"]}}
        fields = {"event": "summary", "verdict": verdict["verdict"], "blocker": verdict["blocker"],
                  "compare": report.compare and {k: v for k, v in report.compare.items() if k != "fixed_findings"},
                  "counts": counts, "exit": code, "detail": "; ".join(failing) or None}  # fmt: skip
        print(json_event("ERROR" if code else "INFO", "sitemap-crawler", message, **fields), file=sys.stderr)
        return code
    lines = [verdict["verdict"]]
    read_away = " (read away by --as-if-no-blocker)" if report.audit.get("as_if_no_blocker") else ""
    blockers = [f"STAGING BLOCKER: {f.detail}{read_away}" for f in report.findings.heads()]
    lines += blockers or [verdict["blocker"]]
    if verdict["compare"]:
        lines.append(verdict["compare"])
    outcomes = ", ".join(f"{count} {name}" for name, count in summary["outcomes"].items())
    lines.append(f"Audited {summary['urls']} URLs in {seconds:.1f} s: {outcomes}")
    for root, counts in summary.get("hosts", {}).items():
        lines.append(f"  on {root.rstrip('/')}: {counts['listed']} listed, {counts['excluded']} excluded")
    if summary.get("other_hosts"):
        lines.append(f"  on other hosts (not mapped, not crawled): {summary['other_hosts']} excluded")
    for entry in verdict["kinds"]:
        grouped = f" (+{entry['grouped']} under the staging blocker)" if entry["grouped"] else ""
        lines.append(f"  {entry['severity']:<8} {entry['kind']:<26} {entry['count']}{grouped}")
    lines += parameter_lines(summary.get("parameters", []), shown=3)
    lines.append(f"Report: {out / 'report.html'} (and report.json, urls.csv, findings-*.csv)")
    for path in preview:
        lines.append(f"Production sitemap preview: {path}")
    if not preview:
        lines.append("No production sitemap: no URL would be listed (see the report)")
    if failing:
        lines.append(f"sitemap-crawler: --fail-on: {', '.join(failing)} found")
    print("\n".join(lines), file=sys.stderr)
    return code
