"""The audit report: ``report.json``, ``urls.csv``, one ``findings-KIND.csv``
per finding kind, and ``report.html`` (pure; files replaced atomically).

The HTML is one self-contained file: no external script, style, font or
image, and a Content-Security-Policy that allows only its own script (by
hash), so it works offline and from ``file://`` and nothing planted in a
page title can run. Every string from the site is escaped for where it
lands: Jinja2 escapes text and attributes, the data block is JSON with
``<``, ``>`` and ``&`` escaped, and the tables are filled with
``textContent``.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from crawler.audit.findings import Finding, Kind
from crawler.audit.verdict import rule, verdict_block

__all__ = ["AuditReport", "Row", "write_report"]

#: A bar's colour is its kind's severity (the badges' colours in the template).
_COLORS = {"critical": "#c0262d", "warning": "#b36200", "notice": "#5a6473"}
URL_COLUMNS = (
    "url",
    "production_url",
    "status",
    "outcome",
    "reason",
    "detail",
    "canonical",
    "redirect_to",
    "depth",
    "response_ms",
    "bytes",
    "inlinks",
    "anchors",
    "in_sitemaps",
    "title",
    "findings",
)

Row = dict[str, Any]


@dataclass(slots=True)
class AuditReport:
    audit: dict[str, Any]  # what was audited and how (no secret in it)
    blockers: list[dict[str, str]]
    sitemaps: dict[str, Any]
    findings: list[Finding]
    rows: list[Row] = field(default_factory=list)
    compare: dict[str, Any] | None = None  # with --compare: counts and the fixed findings (crawler.audit.changes)

    def summary(self) -> dict[str, Any]:
        outcomes = Counter(str(row["outcome"]) for row in self.rows)
        reasons = Counter(str(row["reason"]) for row in self.rows if row["reason"])
        kinds = Counter(str(finding.kind) for finding in self.findings)
        return {
            "urls": len(self.rows),
            "outcomes": dict(sorted(outcomes.items())),
            "reasons": dict(reasons.most_common()),
            "findings": {kind.value: kinds[kind.value] for kind in Kind if kinds[kind.value]},
        }

    def verdict(self) -> dict[str, Any]:
        """The verdict, the blocker line, the compare line and every kind (crawler.audit.verdict)."""
        read_away = bool(self.audit.get("as_if_no_blocker"))
        return verdict_block(self.findings, self.blockers, read_away, self.compare)

    def finding_dicts(self, public: Any = None) -> list[dict[str, Any]]:
        public = public or (lambda url: url)
        return [
            {
                "kind": str(f.kind),
                "severity": str(rule(f.kind.value).severity),
                "url": f.url,
                "production_url": public(f.url),
                "detail": f.detail,
                "related": f.related,
                **({"grouped": f.grouped} if f.grouped else {}),
                **({"change": f.change} if f.change else {}),
            }
            for f in self.findings
        ]


def _replace(path: Path, write: Any) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as file:
            write(file)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


#: Characters that could end a ``<script>`` block or open another, as JSON escapes (one pass).
_SCRIPT_SAFE = str.maketrans({"&": "\\u0026", "<": "\\u003c", ">": "\\u003e", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _json_for_script(value: Any) -> Markup:
    """JSON that cannot end its ``<script>`` block or open another."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_SCRIPT_SAFE)
    return Markup(text)  # noqa: S704 - escaped above for a script element


def _chart(summary: dict[str, Any]) -> dict[str, Any]:
    counts: dict[str, int] = summary["findings"]
    top = max(counts.values(), default=1)
    bars = [
        {
            "label": kind,
            "count": count,
            "y": 22 * n,
            "width": max(2, round(600 * count / top)),
            "color": _COLORS[rule(kind).severity],
        }
        for n, (kind, count) in enumerate(counts.items())
    ]
    return {"bars": bars, "height": max(22, 22 * len(bars))}


def _html(
    report: AuditReport, summary: dict[str, Any], findings: list[dict[str, Any]], verdict: dict[str, Any], file: Any
) -> None:
    templates = files("crawler.audit") / "templates"
    script = (templates / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    environment = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = environment.from_string((templates / "report.html.j2").read_text(encoding="utf-8"))
    kinds = {entry["kind"]: entry for entry in verdict["kinds"]}
    data = {"urls": report.rows, "findings": findings, "kinds": kinds, "comparing": report.compare is not None}
    template.stream(
        verdict=verdict,
        heads=[finding for finding in findings if finding["kind"] == Kind.STAGING_BLOCKER.value],
        compare=report.compare,
        audit=report.audit,
        blockers=report.blockers,
        sitemaps=report.sitemaps,
        summary=summary,
        chart=_chart(summary),
        data=_json_for_script(data),
        script=Markup(script),  # noqa: S704 - our own file, not site data
        script_hash=f"sha256-{digest}",
    ).dump(file)


#: Anchor texts in a ``urls.csv`` cell (report.json's ``linked_from`` has the sources too).
_CSV_ANCHORS = 3


def _cell(row: Row, column: str) -> Any:
    """A CSV cell: ``anchors`` holds the first distinct anchor texts of ``linked_from``."""
    if column != "anchors":
        return row.get(column)
    texts = dict.fromkeys(link["anchor"] for link in row.get("linked_from") or () if link["anchor"])
    return " | ".join(list(texts)[:_CSV_ANCHORS])


#: What makes a spreadsheet read a cell as a formula (OWASP's CSV injection list).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """A cell a spreadsheet shows as text: a string starting like a formula gets a leading ``'``
    (a page title ``=HYPERLINK(...)`` is the site's words, never a formula run on the auditor's
    machine). Numbers stay numbers."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _csv_rows(file: Any, header: tuple[str, ...], rows: Any) -> None:
    writer = csv.writer(file)
    writer.writerow(header)
    writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)


def write_report(report: AuditReport, folder: Path, production: Any = None) -> list[Path]:
    """Every report file in *folder*; *production* maps a URL to its production form."""
    public = production or (lambda url: url)
    summary = report.summary()
    written = []

    def target(name: str) -> Path:
        written.append(folder / name)
        return folder / name

    verdict = report.verdict()
    findings = report.finding_dicts(public)
    payload = {
        "verdict": verdict["verdict"],
        "blocker_line": verdict["blocker"],
        "audit": report.audit,
        "summary": summary,
        "kinds": verdict["kinds"],
        "compare": None if report.compare is None else {"line": verdict["compare"], **report.compare},
        "blockers": report.blockers,
        "sitemaps": report.sitemaps,
        "findings": findings,
        "urls": report.rows,
    }
    _replace(target("report.json"), lambda f: json.dump(payload, f, ensure_ascii=False, indent=1))
    _replace(
        target("urls.csv"),
        lambda f: _csv_rows(f, URL_COLUMNS, ([_cell(row, c) for c in URL_COLUMNS] for row in report.rows)),
    )
    for kind in Kind:
        lines = []
        for finding in report.findings:
            if finding.kind is kind:
                for related in finding.related or [""]:
                    lines.append((finding.url, public(finding.url), finding.detail, related))
        _replace(
            target(f"findings-{kind.value}.csv"),
            lambda f, lines=lines: _csv_rows(f, ("url", "production_url", "detail", "related"), lines),
        )
    _replace(target("report.html"), lambda f: _html(report, summary, findings, verdict, f))
    return written
