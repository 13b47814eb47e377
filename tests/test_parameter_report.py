"""The parameter report of a crawl and an audit (issue 41): for each query parameter, the URLs
it multiplied, its values, how many are listed, why the others were left out, and robots.txt
lines suggested only when they block no listed URL, on a real crawl of a faceted shop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protego import Protego

from tests.app_site import HTML, AppSite, Route, page
from tests.conftest import run_cli, sitemap_locs


def _site() -> dict[str, Route]:
    shop = page("Shop", "<main><h1>Shop</h1><p>Every product we sell, in one list.</p></main>")
    links = "".join(
        f'<a href="{target}">{n}</a> '
        for n, target in enumerate([
            "/list", "/shop", "/shop?sort=price", "/shop?sort=name", "/shop?sort=date&color=red",
            "/shop?color=red", "/shop?color=blue", "/list?view=grid", "/list?view=rows",
            "/draft?ref=mail", "/a&page=1", "/b?page=2",
        ])
    )  # fmt: skip
    canonical = '<link rel="canonical" href="/shop">'
    noindex = '<meta name="robots" content="noindex">'

    def colour(target: str) -> tuple[int, dict[str, str], str]:
        if "sort=" in target:
            return 200, HTML, page("Shop", "<main><p>Sorted.</p></main>", canonical)
        name = target.rpartition("=")[2]
        return 200, HTML, page(name, f"<main><h1>All {name} products</h1><p>Only the {name} ones.</p></main>")

    return {
        "/": (200, HTML, page("Home", f"<main><h1>Home</h1><p>{links}</p></main>")),
        "/shop": (200, HTML, shop),
        "/shop?*": colour,
        "/list": (200, HTML, page("List", "<main><h1>List</h1><p>A list of things.</p></main>")),
        "/list?*": (200, HTML, page("List", "<main><h1>List</h1><p>A list of things.</p></main>")),
        "/draft?*": (200, HTML, page("Draft", "<main><p>Not yet.</p></main>", noindex)),
        "/a&page=1": (200, HTML, page("A", "<main><h1>A page whose path has an ampersand</h1></main>")),
        "/b?*": (200, HTML, page("B", "<main><p>Page two.</p></main>", noindex)),
    }


def _by_name(parameters: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in parameters}


def _assert_report(parameters: dict[str, dict[str, Any]], listed: list[str]) -> None:
    assert parameters["sort"] == {
        "name": "sort", "urls": 3, "values": 3, "listed": 0, "excluded": {"canonicalised": 3}, "fetches": 0,
        "suggested": ["Disallow: /*?sort=", "Disallow: /*&sort="],
    }  # fmt: skip
    assert parameters["color"]["urls"] == 3 and parameters["color"]["listed"] == 2
    assert parameters["color"]["values"] == 2 and parameters["color"]["suggested"] == []
    assert parameters["view"]["excluded"] == {"duplicate": 2} and parameters["view"]["suggested"]
    assert parameters["ref"]["excluded"] == {"noindex": 1}
    # page= only ever gave a noindex page, but Disallow: /*&page= would block the listed /a&page=1
    assert parameters["page"]["listed"] == 0 and parameters["page"]["suggested"] == []
    suggested = [line for entry in parameters.values() for line in entry["suggested"]]
    rules = Protego.parse("User-agent: *\n" + "\n".join(suggested) + "\n")
    assert [url for url in listed if not rules.can_fetch(url, "*")] == []


def test_a_crawl_reports_what_each_query_parameter_multiplied(tmp_path: Path) -> None:
    with AppSite(_site()) as site:
        out = tmp_path / "out"
        done = run_cli("crawl", site.url, "--out", str(out), "--delay", "0", "--log-format", "json")
        assert done.returncode == 0, done.stderr
        listed = sitemap_locs(out, site.url.rstrip("/"))
        assert site.url + "a&page=1" in listed and site.url + "shop?color=red" in listed
        summary = [json.loads(line) for line in done.stderr.splitlines() if '"summary"' in line][-1]
        _assert_report(_by_name(summary["parameters"]), listed)
        words = run_cli("crawl", site.url, "--out", str(tmp_path / "words"), "--delay", "0")
    assert words.returncode == 0, words.stderr
    assert (
        "  sort: 3 URLs (3 values), 0 listed; left out: canonicalised 3; "
        "robots.txt: Disallow: /*?sort= and Disallow: /*&sort=\n" in words.stderr
    )
    page = "  page: 1 URL (1 value), 0 listed; left out: noindex 1; robots.txt: no line: it would block"
    assert page in words.stderr
    assert "  color: 3 URLs (2 values), 2 listed; left out: canonicalised 1; robots.txt: no line" in words.stderr


def test_an_audit_reports_the_parameters_in_its_summary(tmp_path: Path) -> None:
    with AppSite(_site()) as site:
        out = tmp_path / "audit"
        done = run_cli(
            "audit", site.url, "--out", str(out), "--delay", "0", "--production-url", "https://www.example.com/"
        )
    assert done.returncode in (0, 4), done.stderr
    report = json.loads((out / "report.json").read_text())
    listed = [row["url"] for row in report["urls"] if row["outcome"] == "listed"]
    _assert_report(_by_name(report["summary"]["parameters"]), listed)
    assert "sort: 3 URLs (3 values), 0 listed; left out: canonicalised 3" in done.stderr
