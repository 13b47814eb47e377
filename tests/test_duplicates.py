"""Exact duplicates are one page: `/` and `/index.html` serving the same bytes are
listed once (the start URL), the other excluded ``duplicate`` naming it; the choice
holds from run to run; ``--keep-duplicates`` (every layer) lists both; the audit
reports ``duplicate-content``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit.findings import Kind
from crawler.duplicates import Duplicates, kept_of, twins
from crawler.validate.sets import check_set
from tests.conftest import crawl, run_cli
from tests.staging_site import PROD, StagingServer, page

HTML = {"Content-Type": "text/html; charset=utf-8"}
HOME = page("Home", '<a href="#main">skip</a> <a href="index.html">home</a> <a href="other">other</a> <p>Welcome</p>')


@pytest.fixture
def server() -> Iterator[StagingServer]:
    site = StagingServer(
        {
            "/": (200, HTML, HOME),
            "/index.html": (200, HTML, HOME),  # the same bytes, no canonical
            "/other": (200, HTML, page("Other", '<a href="/">home</a> <p>Something else</p>')),
        },
        password=False,
    ).start()
    yield site
    site.stop()


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def _root(server: StagingServer) -> str:
    return server.url.rstrip("/")


def test_the_start_url_is_listed_and_its_copy_excluded(server: StagingServer, tmp_path: Path) -> None:
    result = crawl(server.url, tmp_path / "out", "--no-state")
    assert result.code == 0, result.process.stderr
    root = _root(server)
    assert sorted(result.listed) == [f"{root}/", f"{root}/other"]  # sitemap_locs validated every file
    copy = result.report[f"{root}/index.html"]
    assert (copy["outcome"], copy["reason"]) == ("excluded", "duplicate")
    assert kept_of(str(copy["detail"])) == f"{root}/"
    assert result.report[f"{root}/"]["outcome"] == "listed"


@pytest.mark.parametrize(
    ("how", "env"),
    [
        (["--keep-duplicates"], None),
        (["--set", "SITEMAP_KEEP_DUPLICATES=true"], None),
        ([], {"SITEMAP_CRAWLER_KEEP_DUPLICATES": "true"}),
        (["--config", "{config}"], None),
    ],
    ids=["option", "set", "environment", "toml"],
)
def test_keep_duplicates_lists_both(
    server: StagingServer, tmp_path: Path, how: list[str], env: dict[str, str] | None
) -> None:
    config = tmp_path / "crawl.toml"
    config.write_text("keep-duplicates = true\n", encoding="utf-8")
    options = [option.format(config=config) for option in how]
    result = crawl(server.url, tmp_path / "out", *options, env=env)  # a state store: digests are read
    assert result.code == 0, result.process.stderr
    root = _root(server)
    assert sorted(result.listed) == [f"{root}/", f"{root}/index.html", f"{root}/other"]


def _twins(order: tuple[str, str]) -> dict[str, tuple[int, dict[str, str], str]]:
    twin = page("Twin", '<a href="/">home</a> <p>One text, two addresses</p>')
    links = " ".join(f'<a href="{path}">{path}</a>' for path in order)
    return {"/": (200, HTML, page("Home", links)), "/x": (200, HTML, twin), "/y": (200, HTML, twin)}


def test_the_kept_url_holds_across_scheduled_runs(tmp_path: Path) -> None:
    """Two copies at the same depth: the one listed first stays listed when the next run meets
    the other first (one request at a time, so the home page's link order decides what comes first)."""
    server = StagingServer(_twins(("/x", "/y")), password=False).start()
    try:
        root = _root(server)
        out = tmp_path / "out"
        first = crawl(server.url, out, "--concurrency", "1")
        assert first.code == 0, first.process.stderr
        assert sorted(first.listed) == [f"{root}/", f"{root}/x"]
        server.routes.update(_twins(("/y", "/x")))
        second = crawl(server.url, out, "--concurrency", "1")
        assert second.code == 0, second.process.stderr
        assert sorted(second.listed) == [f"{root}/", f"{root}/x"]
        assert kept_of(str(second.report[f"{root}/y"]["detail"])) == f"{root}/x"
        order = [hit.path for hit in server.log if hit.path in ("/x", "/y")]
        assert order[-2:] == ["/y", "/x"]  # this run did meet /y first
        # Without the state store, first come, first listed.
        fresh = crawl(server.url, tmp_path / "fresh", "--concurrency", "1", "--no-state")
        assert sorted(fresh.listed) == [f"{root}/", f"{root}/y"]
    finally:
        server.stop()


def test_the_audit_reports_duplicate_content(server: StagingServer, tmp_path: Path) -> None:
    out = tmp_path / "audit"
    result = run_cli("audit", server.url, "--out", str(out), "--delay", "0", "--production-url", PROD)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    found = [f for f in data["findings"] if f["kind"] == Kind.DUPLICATE_CONTENT.value]
    assert [(_path(f["url"]), [_path(url) for url in f["related"]]) for f in found] == [("/index.html", ["/"])]
    rows = {_path(row["url"]): row for row in data["urls"]}
    assert rows["/index.html"]["reason"] == "duplicate"
    assert rows["/"]["outcome"] == "listed"
    assert check_set(out / "sitemap.xml", PROD) == []


def _home(url: str) -> tuple[str, str, list[str], list[str]]:
    """The same bytes served at *url*: a skip link, a link home, one elsewhere, one image."""
    return url, "d", ["https://e.com/logo.png"], [url + "#main", "https://e.com/", "https://e.com/a"]


def test_what_makes_a_duplicate() -> None:
    duplicates = Duplicates()
    assert duplicates.find(*_home("https://e.com/")) is None
    duplicates.remember(*_home("https://e.com/"))
    assert duplicates.find(*_home("https://e.com/index.html")) == "https://e.com/"  # links to it, it to itself
    assert twins(_home("https://e.com/"), _home("https://e.com/index.html"))
    url, digest, images, links = _home("https://e.com/b")
    assert duplicates.find(url, digest, images, [*links[1:], "https://e.com/c"]) is None  # links elsewhere too
    assert duplicates.find(url, digest, [], links) is None  # other images
    assert duplicates.find(url, "e", images, links) is None  # other text
    assert not twins(_home("https://e.com/"), (url, digest, images, ["https://e.com/c"]))
    farm = Duplicates()  # one text, each page linking on: none is a duplicate
    for n in range(50):
        page = (f"https://e.com/farm/{n}", "d", [], [f"https://e.com/farm/{n + 1}", f"https://e.com/farm/{n - 1}"])
        assert farm.find(*page) is None
        farm.remember(*page)
    assert kept_of("same content as https://e.com/") == "https://e.com/"
    assert kept_of("max pages 5 reached") is None
