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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import IO, Any

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from crawler.audit.finding_store import FindingStore
from crawler.audit.findings import Finding, Kind
from crawler.audit.verdict import rule, verdict_block

__all__ = ["HTML_FINDINGS_PER_KIND", "HTML_URL_ROWS", "AuditReport", "Row", "finding_dict", "write_report"]

#: URL rows in report.html (those with a finding, or left out, first): a browser
#: stays quick; every row is in urls.csv and report.json.
HTML_URL_ROWS = 10_000
#: Findings of one kind in report.html; every finding is in its findings-KIND.csv.
HTML_FINDINGS_PER_KIND = 2_000

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
    findings: FindingStore
    counts: dict[str, Any] = field(default_factory=lambda: {"urls": 0, "outcomes": {}, "reasons": {}})
    #: Every URL's row, read afresh on each call (from the audit record, which stays open until written).
    rows: Callable[[], Iterator[Row]] = lambda: iter(())
    compare: dict[str, Any] | None = None  # with --compare: counts and the fixed findings (crawler.audit.changes)

    def summary(self) -> dict[str, Any]:
        kinds = self.findings.counts()
        findings = {kind.value: kinds[kind.value] for kind in Kind if kinds[kind.value]}
        return {**self.counts, "findings": findings}

    def verdict(self) -> dict[str, Any]:
        """The verdict, the blocker line, the compare line and every kind (crawler.audit.verdict)."""
        read_away = bool(self.audit.get("as_if_no_blocker"))
        counts = self.findings.counts()
        return verdict_block(counts, self.findings.heads(), self.blockers, read_away=read_away, compare=self.compare)


def finding_dict(finding: Finding, public: Callable[[str], str]) -> dict[str, Any]:
    """A finding as report.json and report.html give it."""
    return {
        "kind": str(finding.kind),
        "severity": str(rule(finding.kind.value).severity),
        "url": finding.url,
        "production_url": public(finding.url),
        "detail": finding.detail,
        "related": finding.related,
        **({"grouped": finding.grouped} if finding.grouped else {}),
        **({"change": finding.change} if finding.change else {}),
    }


@contextmanager
def _replacing(path: Path) -> Iterator[IO[str]]:
    """A file written beside *path* that replaces it once the block ends without an error."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as file:
            yield file
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _replace(path: Path, write: Any) -> None:
    with _replacing(path) as file:
        write(file)


class _Shown:
    """The URL rows report.html shows: up to *limit*, those with a finding or left out first."""

    def __init__(self, limit: int):
        self.limit = limit
        self.notable: list[Row] = []
        self.plain: list[Row] = []

    def offer(self, row: Row) -> None:
        if row["findings"] or row["outcome"] != "listed":
            if len(self.notable) < self.limit:
                self.notable.append(row)
        elif len(self.notable) + len(self.plain) < self.limit:
            self.plain.append(row)

    def rows(self) -> list[Row]:
        return self.notable + self.plain[: self.limit - len(self.notable)]


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


def _capped(findings: FindingStore, public: Callable[[str], str]) -> list[dict[str, Any]]:
    """At most :data:`HTML_FINDINGS_PER_KIND` findings of each kind, kind by kind."""
    return [
        finding_dict(finding, public) for kind in Kind for finding in findings.of_kind(kind, HTML_FINDINGS_PER_KIND)
    ]


def _html(
    report: AuditReport,
    *,
    summary: dict[str, Any],
    public: Callable[[str], str],
    verdict: dict[str, Any],
    urls: list[Row],
    file: Any,
) -> None:
    templates = files("crawler.audit") / "templates"
    script = (templates / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    environment = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = environment.from_string((templates / "report.html.j2").read_text(encoding="utf-8"))
    kinds = {entry["kind"]: entry for entry in verdict["kinds"]}
    shown = _capped(report.findings, public)
    data = {"urls": urls, "findings": shown, "kinds": kinds, "comparing": report.compare is not None}
    template.stream(
        shown={"urls": len(urls), "findings": len(shown), "every_finding": sum(summary["findings"].values())},
        html_findings_per_kind=HTML_FINDINGS_PER_KIND,
        verdict=verdict,
        heads=[finding_dict(head, public) for head in report.findings.heads()],
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


def write_report(report: AuditReport, folder: Path, production: Callable[[str], str] | None = None) -> list[Path]:
    """Every report file in *folder*; *production* maps a URL to its production form."""
    public = production or report.findings.public
    summary = report.summary()
    written = []

    def target(name: str) -> Path:
        written.append(folder / name)
        return folder / name

    verdict = report.verdict()
    head = {
        "verdict": verdict["verdict"],
        "blocker_line": verdict["blocker"],
        "audit": report.audit,
        "summary": summary,
        "kinds": verdict["kinds"],
        "compare": None if report.compare is None else {"line": verdict["compare"], **report.compare},
        "blockers": report.blockers,
        "sitemaps": report.sitemaps,
    }
    shown = _Shown(HTML_URL_ROWS)
    with _replacing(target("report.json")) as json_file, _replacing(target("urls.csv")) as csv_file:
        _write_json_and_rows(report, head, public, (json_file, csv_file), shown)
    for kind in Kind:
        lines = (
            (finding.url, public(finding.url), finding.detail, related)
            for finding in report.findings.of_kind(kind)
            for related in finding.related or [""]
        )
        _replace(
            target(f"findings-{kind.value}.csv"),
            lambda f, lines=lines: _csv_rows(f, ("url", "production_url", "detail", "related"), lines),
        )
    _replace(
        target("report.html"),
        lambda f: _html(report, summary=summary, public=public, verdict=verdict, urls=shown.rows(), file=f),
    )
    return written


def _lines(file: IO[str], items: Iterator[Any]) -> None:
    """A JSON array's items, one a line (a string in JSON holds no raw newline)."""
    separator = "\n  "
    for item in items:
        file.write(separator + json.dumps(item, ensure_ascii=False))
        separator = ",\n  "
    file.write("\n ]")


def _write_json_and_rows(
    report: AuditReport,
    head: dict[str, Any],
    public: Callable[[str], str],
    files: tuple[IO[str], IO[str]],
    shown: _Shown,
) -> None:
    """report.json (*head*, then ``findings`` and ``urls``, one a line) and urls.csv, in one pass over
    the rows (``urls`` last: ``--compare`` reads what comes before it)."""
    json_file, csv_file = files
    text = json.dumps(head, ensure_ascii=False, indent=1)
    json_file.write(text[: text.rindex("}")].rstrip() + ',\n "findings": [')
    _lines(json_file, (finding_dict(finding, public) for finding in report.findings))
    json_file.write(',\n "urls": [')
    writer = csv.writer(csv_file)
    writer.writerow(URL_COLUMNS)

    def rows() -> Iterator[Row]:
        for row in report.rows():
            writer.writerow([spreadsheet_safe(_cell(row, column)) for column in URL_COLUMNS])
            shown.offer(row)
            yield row

    _lines(json_file, rows())
    json_file.write("\n}\n")
