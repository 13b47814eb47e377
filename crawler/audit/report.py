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

__all__ = ["AuditReport", "Row", "write_report"]

_COLORS = ("#c0262d", "#d9822b", "#b59b00", "#2b7bd9", "#5b8c3a", "#7a4fb5")
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
    "inlinks",
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

    def finding_dicts(self) -> list[dict[str, Any]]:
        return [{"kind": str(f.kind), "url": f.url, "detail": f.detail, "related": f.related} for f in self.findings]


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
        {"label": kind, "count": count, "y": 22 * n, "width": max(2, round(600 * count / top)), "color": _COLORS[n % 6]}
        for n, (kind, count) in enumerate(counts.items())
    ]
    return {"bars": bars, "height": max(22, 22 * len(bars))}


def _html(report: AuditReport, summary: dict[str, Any], file: Any) -> None:
    templates = files("crawler.audit") / "templates"
    script = (templates / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    environment = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = environment.from_string((templates / "report.html.j2").read_text(encoding="utf-8"))
    data = {"urls": report.rows, "findings": report.finding_dicts()}
    template.stream(
        audit=report.audit,
        blockers=report.blockers,
        sitemaps=report.sitemaps,
        summary=summary,
        chart=_chart(summary),
        data=_json_for_script(data),
        script=Markup(script),  # noqa: S704 - our own file, not site data
        script_hash=f"sha256-{digest}",
    ).dump(file)


def _csv_rows(file: Any, header: tuple[str, ...], rows: Any) -> None:
    writer = csv.writer(file)
    writer.writerow(header)
    writer.writerows(rows)


def write_report(report: AuditReport, folder: Path, production: Any = None) -> list[Path]:
    """Every report file in *folder*; *production* maps a URL to its production form."""
    public = production or (lambda url: url)
    summary = report.summary()
    written = []

    def target(name: str) -> Path:
        written.append(folder / name)
        return folder / name

    payload = {
        "audit": report.audit,
        "summary": summary,
        "blockers": report.blockers,
        "sitemaps": report.sitemaps,
        "findings": report.finding_dicts(),
        "urls": report.rows,
    }
    _replace(target("report.json"), lambda f: json.dump(payload, f, ensure_ascii=False, indent=1))
    _replace(
        target("urls.csv"),
        lambda f: _csv_rows(f, URL_COLUMNS, ([row.get(c) for c in URL_COLUMNS] for row in report.rows)),
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
    _replace(target("report.html"), lambda f: _html(report, summary, f))
    return written
