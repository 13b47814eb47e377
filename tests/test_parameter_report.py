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
            "/ok/a%26w%3D1", "/x?w=5", "/x?a+b=1", "/x?flag", "/x?color%5B%5D=red",
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
        "/ok/a%26w%3D1": (200, HTML, page("W", "<main><h1>An encoded ampersand in the path</h1></main>")),
        "/x?*": (200, HTML, page("X", "<main><p>A variant.</p></main>", noindex)),
    }


def _by_name(parameters: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in parameters}


def _assert_report(parameters: dict[str, dict[str, Any]], listed: list[str], met: list[str]) -> None:
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
    # Google reads robots.txt lines undecoded: a line must spell the name as the URLs do, and
    # Protego, which decodes, must find no listed URL it blocks (/ok/a%26w%3D1 is one for w).
    assert parameters["w"]["suggested"] == [] and parameters["color%5B%5D"]["suggested"]
    assert "flag" not in parameters  # a bare word names no parameter
    for entry in parameters.values():
        rules = Protego.parse("User-agent: *\n" + "\n".join(entry["suggested"]) + "\n")
        assert [url for url in listed if not rules.can_fetch(url, "*")] == []
        for url in met:  # each line blocks the URLs of its name
            if entry["suggested"] and f"?{entry['name']}=" in url:
                assert not rules.can_fetch(url, "*"), (entry["name"], url)
    assert parameters["a+b"]["suggested"] == ["Disallow: /*?a+b=", "Disallow: /*&a+b="]


def test_a_crawl_reports_what_each_query_parameter_multiplied(tmp_path: Path) -> None:
    with AppSite(_site()) as site:
        out = tmp_path / "out"
        done = run_cli("crawl", site.url, "--out", str(out), "--delay", "0", "--log-format", "json")
        assert done.returncode == 0, done.stderr
        listed = sitemap_locs(out, site.url.rstrip("/"))
        assert site.url + "a&page=1" in listed and site.url + "shop?color=red" in listed
        summary = [json.loads(line) for line in done.stderr.splitlines() if '"summary"' in line][-1]
        met = [json.loads(line)["url"] for line in (tmp_path / "out.crawl-report.jsonl").read_text().splitlines()]
        _assert_report(_by_name(summary["parameters"]), listed, met)
        words = run_cli("crawl", site.url, "--out", str(tmp_path / "words"), "--delay", "0")
    assert words.returncode == 0, words.stderr
    assert (
        "  sort: 3 URLs (3 values), 0 listed; left out: canonicalised 3; "
        "robots.txt: Disallow: /*?sort= and Disallow: /*&sort=\n" in words.stderr
    )
    plus = "  a+b: 1 URL (1 value), 0 listed; left out: noindex 1; robots.txt: Disallow: /*?a+b= and Disallow: /*&a+b="
    assert plus in words.stderr
    assert (
        "  color: 3 URLs (2 values), 2 listed; left out: canonicalised 1; robots.txt: no line: listed URLs"
        in words.stderr
    )


def test_an_audit_reports_the_parameters_in_its_summary(tmp_path: Path) -> None:
    with AppSite(_site()) as site:
        out = tmp_path / "audit"
        done = run_cli(
            "audit", site.url, "--out", str(out), "--delay", "0", "--production-url", "https://www.example.com/"
        )
    assert done.returncode in (0, 4), done.stderr
    report = json.loads((out / "report.json").read_text())
    listed = [row["url"] for row in report["urls"] if row["outcome"] == "listed"]
    _assert_report(_by_name(report["summary"]["parameters"]), listed, [row["url"] for row in report["urls"]])
    assert "sort: 3 URLs (3 values), 0 listed; left out: canonicalised 3" in done.stderr
