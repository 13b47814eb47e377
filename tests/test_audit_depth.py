"""Click depth, orphans, redirect targets, soft 404s and per-URL facts of
``sitemap-crawler audit`` (issue 23), on a small staging site of its own
whose sitemap (named in robots.txt) lists every page, so the sitemap
seeds them all before the links reach them."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit.soft404 import says_not_found
from crawler.validate.sets import check_set
from tests.conftest import crawl, run_cli
from tests.staging_site import PASSWORD, PROD, USER, StagingServer, links, page, urlset

HTML = {"Content-Type": "text/html; charset=utf-8"}
ABOUT_404 = "Canonical pointing at a 404 page"
LISTED = ("/", *(f"/d{n}" for n in range(1, 8)), "/orphan", "/orphan-child", "/sale.html", "/alt-only", "/not-here")
LISTED += ("/about-404",)


def routes(origin: str = PROD) -> dict[str, tuple[int, dict[str, str], str]]:
    """The site; its sitemap (named in robots.txt) and hreflang alternate on *origin*."""
    chain = {
        f"/d{n}": (200, HTML, page(f"Step {n}", f'<a href="/d{n + 1}">Step {n + 1} of the chain</a>'))
        for n in range(1, 7)
    }
    home = (
        '<a href="/d1"><span>First</span> step</a> <a href="/d1">again</a> '
        + links("/promo", "/about-404", "/not-here")
        + '<a href="/tools"><img src="/t.png" alt="Tools"></a>'
    )
    head = f'<link rel="alternate" hreflang="de" href="{origin}/alt-only"><link rel="canonical" href="/canon-only">'
    return {
        "/": (200, HTML, page("Home", home, head)),
        **chain,
        "/d7": (200, HTML, page("Step 7", links("/d8"))),
        "/d8": (200, HTML, page("Step 8", links("/d9"))),  # not in the sitemap
        "/d9": (200, HTML, page("Step 9", links("/"))),
        "/tools": (200, HTML, page("Tools", links("/"))),
        "/orphan": (200, HTML, page("Orphan", links("/orphan-child"))),  # listed, linked from nowhere
        "/orphan-child": (200, HTML, page("Orphan's child", links("/"))),  # linked from the orphan only
        "/promo": (302, {"Location": "/sale.html"}, ""),
        "/sale.html": (200, HTML, page("Sale", links("/"))),
        "/alt-only": (200, HTML, page("Deutsch", links("/"))),  # an hreflang alternate only: not a click
        "/canon-only": (200, HTML, page("Canonical", links("/"))),  # a canonical only: not a click
        "/not-here": (200, HTML, page("Page not found \u2013 Example", "Sorry.")),  # a soft 404
        "/about-404": (200, HTML, page(ABOUT_404, "An article about 404s.")),  # about 404s: not one
        "/robots.txt": (200, {"Content-Type": "text/plain"}, f"User-agent: *\nSitemap: {origin}/sitemap.xml\n"),
        "/sitemap.xml": (200, {"Content-Type": "application/xml"}, sitemap(origin)),
    }


def sitemap(origin: str) -> str:
    return urlset([(path, "2026-01-02") for path in LISTED]).replace(PROD, origin)


@pytest.fixture
def site() -> Iterator[StagingServer]:
    server = StagingServer(routes()).start()
    yield server
    server.stop()


def audit(server: StagingServer, out: Path, *options: str) -> dict[str, Any]:
    result = run_cli(
        "audit", server.url, "--out", str(out), "--user", USER, "--password-env", "AUDIT_PASSWORD",
        "--production-url", PROD, "--delay", "0", "--concurrency", "8", *options, env={"AUDIT_PASSWORD": PASSWORD},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and PASSWORD not in result.stderr
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    return data


def by_path(server: StagingServer, urls: list[str]) -> set[str]:
    return {url.removeprefix(server.url[:-1]) for url in urls}


def found(server: StagingServer, data: dict[str, Any], kind: str) -> set[str]:
    return by_path(server, [f["url"] for f in data["findings"] if f["kind"] == kind])


def test_click_depth_is_the_shortest_link_path_whatever_the_sitemap_seeds(site: StagingServer, tmp_path: Path) -> None:
    out = tmp_path / "audit"
    data = audit(site, out)
    rows = {row["url"].removeprefix(site.url[:-1]): row for row in data["urls"]}
    assert {path: rows[path]["depth"] for path in ("/", "/d1", "/d2", "/d6", "/d7", "/d9")} == {
        "/": 0, "/d1": 1, "/d2": 2, "/d6": 6, "/d7": 7, "/d9": 9,
    }  # fmt: skip
    assert found(site, data, "deep-pages") == {"/d6", "/d7", "/d8", "/d9"}
    # Reached only through the sitemap (or a link from such a page): no click depth, orphans.
    assert rows["/orphan"]["depth"] is None and rows["/orphan-child"]["depth"] is None
    assert rows["/orphan-child"]["inlinks"] == 1  # linked, but only from an orphan: no way in
    # A redirect is a way in, not a click: its target has the depth of the redirecting URL.
    assert (rows["/promo"]["depth"], rows["/sale.html"]["depth"]) == (1, 1)
    # hreflang alternates and canonicals are no clicks.
    assert rows["/alt-only"]["depth"] is None and rows["/canon-only"]["depth"] is None
    assert found(site, data, "orphans") == {"/orphan", "/orphan-child", "/alt-only"}
    # Soft 404: a whole not-found phrase, not a title about 404s.
    assert found(site, data, "soft-404") == {"/not-here"}
    # Per URL: response time, size, inlinks with their anchor text (clicks first, the first anchor per page).
    home = site.url
    assert rows["/d1"]["linked_from"] == [{"url": home, "anchor": "First step"}]
    assert rows["/tools"]["linked_from"] == [{"url": home, "anchor": "Tools"}]  # an image's alt
    assert rows["/alt-only"]["linked_from"] == [{"url": home, "anchor": None}]  # a <link>, not a click
    assert rows["/d1"]["bytes"] == len(routes()["/d1"][2].encode())
    assert all(isinstance(rows[p]["response_ms"], int) and rows[p]["response_ms"] >= 0 for p in ("/", "/d6"))
    with open(out / "urls.csv", newline="") as file:
        lines = {line["url"].removeprefix(site.url[:-1]): line for line in csv.DictReader(file)}
    assert (lines["/d6"]["depth"], lines["/orphan"]["depth"]) == ("6", "")
    assert (lines["/d2"]["anchors"], lines["/d2"]["inlinks"]) == ("Step 2 of the chain", "1")
    assert lines["/d1"]["bytes"] == str(rows["/d1"]["bytes"]) and lines["/d1"]["response_ms"].isdigit()
    assert check_set(out / "sitemap.xml", PROD) == []


def test_the_crawl_counts_a_sitemap_entry_as_one_step(tmp_path: Path) -> None:
    """crawl's report ``depth`` and ``--max-depth`` are the crawl's discovery depth: a link is
    one more than its page, a redirect target keeps its depth, a sitemap entry is depth 1."""
    server = StagingServer(password=False)
    server.routes = routes(server.url[:-1])
    server.start()
    try:
        result = crawl(server.url, tmp_path / "out", "--max-depth", "2")
    finally:
        server.stop()
    assert result.code == 0, result.process.stderr
    depths = {url.removeprefix(server.url[:-1]): line["depth"] for url, line in result.report.items()}
    assert (depths["/d7"], depths["/d8"]) == (1, 2)  # seeded from the sitemap, and linked from there
    assert depths["/sale.html"] == 1 and result.reason(server.url + "sale.html") is None
    assert depths["/tools"] == 1
    assert (depths["/d9"], result.reason(server.url + "d9")) == (3, "limit")  # 3 > --max-depth 2
    assert server.url + "d7" in result.listed and server.url + "d8" in result.listed


@pytest.mark.parametrize(
    "title",
    [
        "404 Not Found", "Page not found \u2013 Example", "Error 404", "404", "Oops! Page not found.",
        "Example | 404", "Error: page not found", "Seite nicht gefunden", "Fehler 404 - Seite nicht gefunden",
        "Page introuvable", "P\u00e1gina no encontrada", "Pagina non trovata", "Pagina niet gevonden",
        "\u30da\u30fc\u30b8\u304c\u898b\u3064\u304b\u308a\u307e\u305b\u3093 | Example",
    ],
)  # fmt: skip
def test_a_title_that_says_not_found_is_a_soft_404(title: str) -> None:
    assert says_not_found(title)


@pytest.mark.parametrize(
    "title",
    [
        ABOUT_404, "Top 404 errors explained", "404 errors explained", "How to fix page not found errors",
        "Not found: the best hidden beaches", "Page not found, and how to fix it", "Peugeot 404 for sale",
        "Lost and Found", "Error", "Home - Example",
    ],
)  # fmt: skip
def test_a_title_about_404s_is_not_a_soft_404(title: str) -> None:
    assert not says_not_found(title)
