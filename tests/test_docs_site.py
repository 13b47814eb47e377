"""The documentation is the tool's first real site: built strictly with Sphinx, served on
127.0.0.1, crawled by sitemap-crawler into its own web root, and its sitemap set validated
with --strict and checked over HTTP as a search engine reads it."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import read_report, run_cli, sitemap_locs
from tests.docs_text import ROOT

SPHINX = Path(sys.executable).with_name("sphinx-build")
NOINDEX = re.compile(rb'<meta name="robots" content="noindex"')


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


def build(source: Path, html: Path) -> subprocess.CompletedProcess[str]:
    """``make docs``'s build: every warning is an error."""
    return subprocess.run(
        [str(SPHINX), "-W", "--keep-going", "-n", "-q", "-b", "html", "-d", str(html.parent / "doctrees"),
         str(source), str(html)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The built documentation, served from its folder on a free 127.0.0.1 port."""
    html = tmp_path_factory.mktemp("docs") / "html"
    result = build(ROOT / "docs", html)
    assert result.returncode == 0, result.stdout + result.stderr
    handler = functools.partial(_Quiet, directory=str(html))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", html
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_the_docs_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    """The strict build is what stops a broken link: a copy of the sources with one bad link fails."""
    source = tmp_path / "docs"
    subprocess.run(["cp", "-r", str(ROOT / "docs"), str(source)], check=True)
    subprocess.run(["rm", "-rf", str(source / "_build")], check=True)
    guide = source / "guides" / "first-run.md"
    guide.write_text(guide.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    result = build(source, tmp_path / "html")
    assert result.returncode != 0
    assert "no-such-page" in result.stdout + result.stderr


def test_the_docs_site_is_crawled_published_and_valid(site: tuple[str, Path], tmp_path: Path) -> None:
    url, html = site
    pages = sorted(html.rglob("*.html"))
    indexable = {str(p.relative_to(html)) for p in pages if not NOINDEX.search(p.read_bytes())}
    assert {"index.html", "reference/commands.html", "guides/first-run.html"} <= indexable
    # Published into the web root it is served from, as a site would have it.
    result = run_cli("crawl", url, "--out", str(html), "--delay", "0", "--no-state", "-q",
                     "--report", str(tmp_path / "report.jsonl"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"Sitemap: {url}sitemap.xml"
    report = read_report(tmp_path / "report.jsonl")
    listed = {line.removeprefix(url) for line in sitemap_locs(html, url.rstrip("/"))}
    # Every page of the build is listed, "/" for index.html (the same page: a duplicate); the
    # noindex ones (search.html, reached only by the search form) are not.
    assert {"index.html" if page == "" else page for page in listed} == indexable
    assert report[url + "index.html"]["reason"] == "duplicate"
    # Nothing broken: no page of the docs links to a missing one.
    broken = [u for u, line in report.items() if line["reason"] in ("status", "fetch-error")]
    assert broken == []
    valid = run_cli("validate", f"{url}sitemap.xml", "--strict", "--origin", url.rstrip("/"))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    checked = run_cli("check", f"{url}sitemap.xml", "--expect", str(html), "--sample", "10")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 errors" in checked.stderr or "valid" in checked.stderr, checked.stderr
