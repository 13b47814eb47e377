"""A big site's audit in bounded memory (issue 38): the report's URL rows are
streamed from the record into report.json and urls.csv, report.html shows a
bounded share of them (the notable ones first), and ``--compare`` reads an
earlier report's head without its rows."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from crawler import regular_file
from crawler.audit import changes, report
from crawler.audit.build import build_report
from crawler.audit.changes import read_previous
from crawler.audit.finding_store import FindingStore
from crawler.audit.findings import Finding, Kind
from crawler.audit.record import open_record, record_page
from crawler.audit.report import AuditReport, Row, write_report
from crawler.hostmap import HostMap

STAGING = "https://staging.example.com/"
HOSTS = HostMap.one(STAGING, "https://www.example.com/")


def rows(count: int) -> Iterator[Row]:
    """*count* rows: every seventh left out, every eleventh with a finding, the rest plain."""
    for n in range(count):
        url = f"{STAGING}page-{n}"
        excluded = n % 7 == 3
        yield {
            "url": url,
            "production_url": HOSTS.to_production(url),
            "status": 404 if excluded else 200,
            "outcome": "excluded" if excluded else "listed",
            "reason": "status" if excluded else None,
            "findings": "soft-404" if n % 11 == 5 else "",
            "linked_from": [],
            "title": f"=Page {n}",
        }


def stored(findings: Iterable[Finding] = ()) -> FindingStore:
    store = FindingStore(sqlite3.connect(":memory:"), HOSTS.to_production)
    store.add(findings)
    return store


def html_data(folder: Path) -> dict[str, object]:
    html = (folder / "report.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="audit-data">(.*?)</script>', html, re.DOTALL)
    assert found is not None
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_report_html_shows_a_bounded_share_of_the_rows_notable_first_and_the_files_hold_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "HTML_URL_ROWS", 12)
    monkeypatch.setattr(report, "HTML_FINDINGS_PER_KIND", 3)
    findings = stored(Finding(Kind.SOFT_404, f"{STAGING}page-{n}", "title says not found") for n in range(5, 80, 11))
    audit = {"start_url": STAGING, "production_url": HOSTS.production}
    counts = {"urls": 80, "outcomes": {"excluded": 11, "listed": 69}, "reasons": {"status": 11}}
    written = AuditReport(audit, [], {}, findings, counts, lambda: rows(80))
    write_report(written, tmp_path, HOSTS.to_production)

    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [row["url"] for row in document["urls"]] == [row["url"] for row in rows(80)]
    assert document["summary"]["urls"] == 80 and len(document["findings"]) == 7
    with open(tmp_path / "urls.csv", newline="", encoding="utf-8") as file:
        table = list(csv.DictReader(file))
    assert len(table) == 80 and table[0]["title"] == "'=Page 0"  # spreadsheet-safe, every row

    data = html_data(tmp_path)
    shown = [row["url"] for row in data["urls"]]  # type: ignore[attr-defined]
    notable = [row["url"] for row in rows(80) if row["findings"] or row["outcome"] != "listed"]
    assert len(notable) == 17
    assert shown == notable[:12]  # notable first, and no more than the cap
    assert len(data["findings"]) == 3  # type: ignore[arg-type]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "shows 12 of 80 URLs" in html and "shows 3 of 7 findings" in html


def test_a_small_report_html_shows_every_row_and_says_nothing_of_a_cap(tmp_path: Path) -> None:
    audit = {"start_url": STAGING, "production_url": HOSTS.production}
    counts = {"urls": 30, "outcomes": {"excluded": 5, "listed": 25}, "reasons": {"status": 5}}
    write_report(AuditReport(audit, [], {}, stored(), counts, lambda: rows(30)), tmp_path)
    assert len(html_data(tmp_path)["urls"]) == 30  # type: ignore[arg-type]
    assert "urls-capped" not in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_compare_reads_the_head_of_an_earlier_report_not_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audit = {"start_url": STAGING + "start", "production_url": HOSTS.production, "finished": "2026-12-01T00:00:00"}
    blocker = Finding(Kind.STAGING_BLOCKER, STAGING, "Disallow: /", grouped={"orphans": [f"{STAGING}lonely"]})
    findings = stored([blocker, Finding(Kind.BROKEN_LINKS, f"{STAGING}gone", "HTTP 404, linked from 1 page")])
    counts = {"urls": 3000, "outcomes": {"listed": 3000}, "reasons": {}}
    write_report(AuditReport(audit, [], {}, findings, counts, lambda: rows(3000)), tmp_path, HOSTS.to_production)
    size = (tmp_path / "report.json").stat().st_size
    monkeypatch.setattr(changes, "MAX_REPORT_BYTES", size // 4)  # the rows would not fit; the head does
    previous = read_previous(tmp_path)
    assert previous.finished == "2026-12-01T00:00:00"
    assert ("broken-links", "https://www.example.com/gone") in previous.findings
    # a grouped URL's production form comes from the audit block's host map, not from the rows
    assert previous.grouped == {("orphans", "https://www.example.com/lonely")}


def test_an_earlier_report_too_big_before_its_rows_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audit = {"start_url": STAGING, "production_url": HOSTS.production}
    findings = stored(Finding(Kind.SOFT_404, f"{STAGING}page-{n}", "x" * 200) for n in range(50))
    write_report(AuditReport(audit, [], {}, findings, {"urls": 0, "outcomes": {}, "reasons": {}}), tmp_path)
    monkeypatch.setattr(changes, "MAX_REPORT_BYTES", 2000)
    with pytest.raises(ValueError, match=r"--compare .*report.json: not readable \(larger than 2,000 bytes"):
        read_previous(tmp_path)


def test_read_until_finds_a_marker_across_a_chunk_boundary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regular_file, "_CHUNK", 4)
    path = tmp_path / "file"
    path.write_bytes(b'{"a": 1,\n "urls": [\n  {"b": 2}]}')
    assert regular_file.read_until(path, b'\n "urls": [', 1000) == (b'{"a": 1,', True)
    assert regular_file.read_until(path, b"nowhere", 1000) == (path.read_bytes(), False)
    with pytest.raises(OSError, match="larger than 8 bytes"):
        regular_file.read_until(path, b"nowhere", 8)
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match="symbolic links"):
        regular_file.read_until(path, b"x", 1000)


def record_of(path: Path, count: int) -> sqlite3.Connection:
    """A record: a chain of *count* pages, each linking to the next; every tenth listed in the sitemaps."""
    db = open_record(path)
    for n in range(count):
        url = f"{STAGING}p{n}"
        record_page(db, {"url": url, "status": 200, "depth": n, "title": f"P{n}", "digest": f"{n:x}"})
        db.execute("INSERT INTO links VALUES (?, ?, 1, ?)", (url, f"{STAGING}p{n + 1}", f"next {n}"))
        if n % 10 == 0:
            db.execute("INSERT INTO listed VALUES (?, 1)", (url,))
    db.commit()
    return db


def test_the_rows_are_read_from_the_record_with_click_depth_inlinks_and_listing(tmp_path: Path) -> None:
    db = record_of(tmp_path / "record.sqlite3", 40)
    audit = {"start_url": f"{STAGING}p0", "production_url": None}
    built = build_report(db, audit=audit, hosts=None, deep_threshold=30, blockers=[], not_found={}, existing=None)
    assert built.summary()["urls"] == 40
    deep = [finding.url for finding in built.findings.of_kind(Kind.DEEP_PAGES)]
    assert deep == [f"{STAGING}p{n}" for n in range(31, 40)]
    table = {row["url"]: row for row in built.rows()}
    assert table[f"{STAGING}p7"]["depth"] == 7 and table[f"{STAGING}p7"]["inlinks"] == 1
    assert table[f"{STAGING}p7"]["linked_from"] == [{"url": f"{STAGING}p6", "anchor": "next 6"}]
    assert table[f"{STAGING}p0"]["inlinks"] == 0 and table[f"{STAGING}p0"]["in_sitemaps"] is None  # not compared
    assert "deep-pages" in table[f"{STAGING}p35"]["findings"]
    assert list(built.rows()) == list(built.rows())  # read afresh on every call
    db.close()
