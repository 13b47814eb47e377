"""``audit --ignore-robots`` ignores robots.txt's rules, not its sitemaps: a page
reached only through a sitemap (named in robots.txt, or given with --sitemap) is
crawled and reported with its real outcome, never "never reached"."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit.findings import Kind
from crawler.validate.sets import check_set
from tests.conftest import run_cli, sitemap_locs
from tests.staging_site import PROD, StagingServer, page, urlset

HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture
def server() -> Iterator[StagingServer]:
    site = StagingServer(password=False).start()
    yield site
    site.stop()


def _serve(server: StagingServer, *, robots_names_sitemap: bool) -> str:
    """A site that forbids everything, whose sitemap lists three pages no link reaches."""
    root = server.url.rstrip("/")
    robots = "User-agent: *\nDisallow: /\n" + (f"Sitemap: {root}/sitemap.xml\n" if robots_names_sitemap else "")
    sitemap = urlset([(path, "2026-01-01") for path in ("/", "/orphan", "/moved", "/gone")]).replace(PROD, root)
    server.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, robots),
            "/sitemap.xml": (200, {"Content-Type": "application/xml"}, sitemap),
            "/": (200, HTML, page("Home", '<a href="/about">about</a>')),
            "/about": (200, HTML, page("About", '<a href="/">home</a>')),
            "/orphan": (200, HTML, page("Orphan", "linked from nowhere")),
            "/moved": (301, {"Location": "/about"}, ""),
            "/gone": (404, HTML, page("Gone", "not here")),
        }
    )
    return root


@pytest.mark.parametrize("given", [False, True], ids=["robots-sitemap-line", "explicit-sitemap"])
def test_ignore_robots_still_reads_the_sitemaps(server: StagingServer, tmp_path: Path, given: bool) -> None:
    root = _serve(server, robots_names_sitemap=not given)
    out = tmp_path / "audit"
    extra = ["--sitemap", f"{root}/sitemap.xml"] if given else []
    result = run_cli(
        "audit", server.url, "--out", str(out), "--delay", "0", "--ignore-robots", "--production-url", PROD, *extra
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert f"robots.txt of {root}/ is IGNORED (--ignore-robots)" in result.stderr
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    rows = {row["url"].removeprefix(root): row for row in data["urls"]}
    assert (rows["/orphan"]["status"], rows["/orphan"]["outcome"]) == (200, "listed")
    assert (rows["/moved"]["status"], rows["/moved"]["reason"]) == (301, "redirect")
    assert (rows["/gone"]["status"], rows["/gone"]["reason"]) == (404, "status")
    with (out / "urls.csv").open(newline="", encoding="utf-8") as file:
        csv_rows = {row["url"].removeprefix(root): row for row in csv.DictReader(file)}
    assert {"/orphan", "/moved", "/gone"} <= set(csv_rows)
    assert csv_rows["/gone"]["status"] == "404"
    never = [f for f in data["findings"] if "never reached" in (f.get("detail") or "")]
    assert never == []
    # Compared with the sitemap robots.txt names (or the one given): an orphan of the site's own, since
    # every link was followed: listed as one, not grouped under the (ignored) Disallow: / blocker.
    orphans = {f["url"] for f in data["findings"] if f["kind"] == Kind.ORPHANS.value}
    assert f"{root}/orphan" in orphans
    assert not any(f.get("grouped", {}).get(Kind.ORPHANS.value) for f in data["findings"])
    assert [hit.path for hit in server.log].count("/robots.txt") == 2  # the preflight's, then the crawl's once
    assert check_set(out / "sitemap.xml", PROD) == []
    assert f"{PROD}/orphan" in sitemap_locs(out, PROD)  # the production sitemap lists it
