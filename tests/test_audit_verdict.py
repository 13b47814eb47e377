"""The audit's verdict, end to end on small staging sites of this file's own:
``Ready for launch`` or ``Not ready: ...`` first, every kind with its severity
and count, a blocker's consequences grouped under it, and ``--compare`` with
an earlier audit (new, still there, fixed; ``--fail-on new:KIND``)."""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit.changes import NEW, STILL_THERE, PreviousAudit, mark
from crawler.audit.finding_store import FindingStore
from crawler.audit.findings import Finding, Kind
from crawler.audit.verdict import SEVERITY, Severity, rule, verdict_line
from crawler.validate.sets import check_set
from tests.staging_site import PROD, StagingServer, links, page, urlset
from tests.test_audit import audit

HTML = {"Content-Type": "text/html; charset=utf-8"}
Routes = dict[str, tuple[int, dict[str, str], str]]


def small_site(meta: str = "", **extra: tuple[int, dict[str, str], str]) -> Routes:
    """Three pages linked to each other and listed in the site's sitemap, with distinct lastmods."""
    listed = [("/", "2024-01-01"), ("/a", "2024-01-02"), ("/b", "2024-01-03"), ("/c", "2024-01-04")]
    return {
        "/": (200, HTML, page("Home", links("/a", "/b", "/c"), meta)),
        "/a": (200, HTML, page("A", links("/"), meta)),
        "/b": (200, HTML, page("B", links("/"), meta)),
        "/c": (200, HTML, page("C", links("/"), meta)),
        "/robots.txt": (200, {"Content-Type": "text/plain"}, f"User-agent: *\nSitemap: {PROD}/sitemap.xml\n"),
        "/sitemap.xml": (200, {"Content-Type": "application/xml"}, urlset(listed)),
        **extra,
    }  # fmt: skip


@pytest.fixture
def server() -> Iterator[StagingServer]:
    staging = StagingServer(small_site()).start()
    yield staging
    staging.stop()


def report(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    return data


def summary_lines(stderr: str) -> list[str]:
    """The summary the audit ends with: from the verdict line on."""
    lines = stderr.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(("Ready for launch", "Not ready: ")))
    return lines[start:]


def test_a_clean_site_is_ready_for_launch(
    server: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "audit"
    result = audit(server, out, monkeypatch)
    assert result.returncode == 0, result.stderr
    lines = summary_lines(result.stderr)
    assert lines == result.stderr.splitlines()  # nothing before it on a clean run (no asyncio noise either)
    assert lines[:2] == ["Ready for launch", "No staging blocker found"]
    assert lines[2].startswith("Audited 4 URLs")  # the verdict comes before everything else of the summary
    assert ["critical", "broken-links", "0"] in [line.split() for line in lines]  # every kind, zeros included
    data = report(out)
    assert list(data)[:2] == ["verdict", "blocker_line"]  # the first line of report.json
    assert (data["verdict"], data["blocker_line"]) == ("Ready for launch", "No staging blocker found")
    assert [entry["kind"] for entry in data["kinds"]] == [kind.value for kind in sorted(Kind, key=_position)]
    assert all(entry["count"] == 0 and entry["fix"] for entry in data["kinds"])
    assert data["compare"] is None and data["findings"] == []
    html = (out / "report.html").read_text()
    assert '<p id="verdict" class="verdict ready">Ready for launch</p>' in html
    assert html.index('id="verdict"') < html.index("<h1>")
    assert '<p id="blocker-line" class="headline">No staging blocker found</p>' in html
    assert check_set(out / "sitemap.xml", PROD) == []


def _position(kind: Kind) -> tuple[int, int]:
    return list(Severity).index(rule(kind.value).severity), list(SEVERITY).index(kind.value)


def test_a_broken_link_makes_the_site_not_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    routes = small_site()
    routes["/c"] = (200, HTML, page("C", links("/", "/missing", "/old")))
    routes["/old"] = (302, {"Location": "/a"}, "")  # a warning: named after "Not ready", not in it
    server = StagingServer(routes).start()
    try:
        result = audit(server, tmp_path / "audit", monkeypatch)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    verdict = "Not ready: 1 broken link (and 1 warning)"
    assert summary_lines(result.stderr)[0] == verdict
    data = report(tmp_path / "audit")
    assert data["verdict"] == verdict
    assert {f["kind"]: f["severity"] for f in data["findings"]} == {
        "broken-links": "critical",
        "temporary-redirects": "warning",
    }
    counts = {entry["kind"]: entry["count"] for entry in data["kinds"]}
    assert counts["broken-links"] == 1 and counts["temporary-redirects"] == 1 and counts["orphans"] == 0
    html = (tmp_path / "audit" / "report.html").read_text()
    assert f'<p id="verdict" class="verdict not-ready">{verdict}</p>' in html
    assert check_set(tmp_path / "audit" / "sitemap.xml", PROD) == []


@pytest.mark.parametrize("blocker", ["meta", "robots"])
def test_a_blocker_groups_what_it_causes(blocker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meta = '<meta name="robots" content="noindex, nofollow">' if blocker == "meta" else ""
    routes = small_site(meta)
    if blocker == "robots":
        robots = f"User-agent: *\nDisallow: /\nSitemap: {PROD}/sitemap.xml\n"
        routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, robots)
    server = StagingServer(routes).start()
    try:
        blocked = audit(server, tmp_path / "blocked", monkeypatch, "--fail-on", "listed-not-indexable")
        preview = audit(server, tmp_path / "preview", monkeypatch, "--as-if-no-blocker")
    finally:
        server.stop()
    data = report(tmp_path / "blocked")
    assert data["verdict"] == "Not ready: 1 blocker"
    assert [f["kind"] for f in data["findings"]] == ["staging-blocker"]  # not 4 + 3 rows of the same cause
    (head,) = data["findings"]
    # Behind Disallow: / no page is fetched, so no link is seen: every listed page but the start is an orphan.
    expected = {"listed-not-indexable": 4, **({"orphans": 3} if blocker == "robots" else {})}
    assert {kind: len(urls) for kind, urls in head["grouped"].items()} == expected
    causes = ", ".join(f"{count} {kind}" for kind, count in expected.items())
    assert f"it causes {causes}, grouped here: rerun with --as-if-no-blocker" in head["detail"]
    counts = {entry["kind"]: (entry["count"], entry["grouped"]) for entry in data["kinds"]}
    assert counts["listed-not-indexable"] == (0, 4) and counts["orphans"] == (0, expected.get("orphans", 0))
    lines = summary_lines(blocked.stderr)
    assert lines[0] == "Not ready: 1 blocker"
    assert lines[1].startswith("STAGING BLOCKER: ") and "rerun with --as-if-no-blocker" in lines[1]
    assert any("listed-not-indexable" in line and "(+4 under the staging blocker)" in line for line in lines)
    # A gate on a grouped kind still sees it: grouped is shown together, not dismissed.
    assert blocked.returncode == 4 and "--fail-on: listed-not-indexable found" in blocked.stderr
    with open(tmp_path / "blocked" / "findings-staging-blocker.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert sorted(row["related"] for row in rows) == sorted(server.url + p for p in ("", "a", "b", "c"))
    html = (tmp_path / "blocked" / "report.html").read_text()
    grouped = f"Grouped here, not listed one by one: {causes}.\nRerun with <code>--as-if-no-blocker</code>"
    assert grouped in html.split('<script type="application/json"')[0]  # in the page, not only in its data
    # Read away, the blocker causes nothing: the site's own findings, none here, and the blocker still named.
    seen = report(tmp_path / "preview")
    assert [f["kind"] for f in seen["findings"]] == ["staging-blocker"] and "grouped" not in seen["findings"][0]
    assert seen["blocker_line"].startswith("Staging blocker (read away by --as-if-no-blocker): ")
    assert preview.returncode == 0, preview.stderr
    assert check_set(tmp_path / "preview" / "sitemap.xml", PROD) == []


def test_compare_marks_new_still_there_and_fixed(
    server: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/a"] = (200, HTML, page("A", links("/", "/missing-1", "/gone")))
    first = audit(server, tmp_path / "first", monkeypatch, "--fail-on", "new:broken-links", "--compare", "/nowhere")
    assert first.returncode == 2 and "--compare /nowhere: no report.json there" in first.stderr
    assert server.log == []  # a mistake costs no crawl
    assert audit(server, tmp_path / "first", monkeypatch).returncode == 0
    # Between the runs: /missing-1 fixed, /missing-2 broken anew, /gone still broken.
    server.routes["/missing-1"] = (200, HTML, page("Back", links("/"), '<meta name="robots" content="noindex">'))
    server.routes["/a"] = (200, HTML, page("A", links("/", "/missing-1", "/gone", "/missing-2")))
    second = audit(server, tmp_path / "second", monkeypatch, "--compare", str(tmp_path / "first"),
                   "--fail-on", "new:broken-links")  # fmt: skip
    assert second.returncode == 4, second.stderr
    data = report(tmp_path / "second")
    changes = {(f["kind"], f["url"].removeprefix(server.url)): f["change"] for f in data["findings"]}
    assert changes[("broken-links", "missing-2")] == "new"
    assert changes[("broken-links", "gone")] == "still there"
    fixed = {(f["kind"], f["production_url"]) for f in data["compare"]["fixed_findings"]}
    assert ("broken-links", PROD + "/missing-1") in fixed
    assert ("listed-not-indexable", PROD + "/missing-1") not in fixed  # never listed: never a finding
    line = (
        f"{data['compare']['new']} new, {data['compare']['still_there']} still there, {data['compare']['fixed']} fixed"
    )
    assert data["compare"]["line"].endswith(line) and line in second.stderr
    assert (data["compare"]["new"], data["compare"]["fixed"]) == (1, 1)
    assert "--fail-on: new:broken-links found" in second.stderr
    html = (tmp_path / "second" / "report.html").read_text()
    assert f'<p id="compare-line" class="headline">{data["compare"]["line"]}</p>' in html
    assert "<h2>Fixed since the earlier audit</h2>" in html and PROD + "/missing-1" in html
    # Nothing new since the second run: the gate on regressions passes, though broken links remain.
    third = audit(server, tmp_path / "third", monkeypatch, "--compare", str(tmp_path / "second"),
                  "--fail-on", "new:broken-links")  # fmt: skip
    assert third.returncode == 0, third.stderr
    again = report(tmp_path / "third")
    assert again["compare"]["new"] == 0 and again["compare"]["fixed"] == 0
    assert {f["change"] for f in again["findings"]} == {"still there"}
    assert again["verdict"].startswith("Not ready: 2 broken links")
    assert check_set(tmp_path / "third" / "sitemap.xml", PROD) == []


def test_compare_and_new_gates_refuse_bad_input(
    server: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "report.json").write_text("{not json")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "report.json").write_text('{"urls": []}')
    for options, message in (
        (("--fail-on", "new:broken-links"), "--fail-on new:broken-links: new findings need --compare DIR"),
        (("--compare", str(tmp_path / "bad")), "not readable as JSON"),
        (("--compare", str(tmp_path / "other")), "not an audit report (no findings list)"),
        (("--fail-on", "new:broken-link", "--compare", str(tmp_path / "bad")), "unknown finding kind"),
    ):
        result = audit(server, tmp_path / "out", monkeypatch, *options)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert server.log == []


# Pure logic.


def test_every_kind_has_a_severity_and_a_fix() -> None:
    for kind in Kind:
        assert kind.value in SEVERITY, f"{kind.value}: give it a severity and a fix in crawler/audit/verdict.py"
        entry = SEVERITY[kind.value]
        assert entry.fix.endswith(".") and entry.one and entry.many
    assert rule(Kind.STAGING_BLOCKER.value).severity is Severity.CRITICAL


def test_the_verdict_line() -> None:
    assert verdict_line({}) == "Ready for launch"
    assert verdict_line({"orphans": 2, "deep-pages": 5}) == "Ready for launch; to look at: 2 orphans"
    assert verdict_line({"broken-links": 3, "staging-blocker": 1, "redirect-chains": 1}) == (
        "Not ready: 1 blocker, 3 broken links (and 1 warning)"
    )


def stored(*findings: Finding) -> FindingStore:
    store = FindingStore(sqlite3.connect(":memory:"))
    store.add(findings)
    return store


def test_several_findings_on_one_url_are_matched_by_text_then_one_for_one() -> None:
    previous = PreviousAudit("old", None)
    previous.findings[("hreflang-errors", "u")] = [{"kind": "hreflang-errors", "detail": "de"}, {"detail": "fr"}]
    now = stored(Finding(Kind.HREFLANG_ERRORS, "u", "fr"), Finding(Kind.HREFLANG_ERRORS, "u", "it"),
                 Finding(Kind.HREFLANG_ERRORS, "u", "es"))  # fmt: skip
    block = mark(now, previous, frozenset())
    assert [f.change for f in now] == [STILL_THERE, STILL_THERE, NEW]
    assert (block["new"], block["still_there"], block["fixed"]) == (1, 2, 0)


def test_findings_a_blocker_grouped_are_neither_new_nor_fixed() -> None:
    """Lifting a blocker shows the rows it hid: they were there (grouped), so they are not news."""
    previous = PreviousAudit("old", None, grouped={("listed-not-indexable", "u")})
    previous.findings[("staging-blocker", "start")] = [{"kind": "staging-blocker", "detail": "meta"}]
    now = stored(Finding(Kind.LISTED_NOT_INDEXABLE, "u", "noindex (HTTP 200)"))
    block = mark(now, previous, frozenset())
    assert [f.change for f in now] == [STILL_THERE] and block["fixed"] == 1  # the blocker itself is fixed
    # And the other way round: a blocker put up groups what the earlier audit listed; nothing is fixed.
    earlier = PreviousAudit("old", None)
    earlier.findings[("listed-not-indexable", "u")] = [{"kind": "listed-not-indexable", "detail": "redirect"}]
    head = stored(Finding(Kind.STAGING_BLOCKER, "start", "meta", grouped={"listed-not-indexable": ["u"]}))
    block = mark(head, earlier, frozenset())
    assert [f.change for f in head] == [NEW] and block["fixed"] == 0
