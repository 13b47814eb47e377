"""List mode (issue 38): ``crawl URL --urls FILE`` judges exactly the URLs of the file with
every rule, follows no link unless ``--follow``, reads no seed sitemap, and leaves a report
line for every line of the list (a line that is no URL included); a real crawl of the test
site on 127.0.0.1, the sets validated."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from crawler.validate.sets import check_set
from tests.conftest import CLI, crawl, run_cli
from tests.server import SiteServer

LIST = """\
# the pages to judge, absolute or relative to the start URL
/canon-self.html
{root}/noindex.html

/private/secret.html
/old
/gone-404
/canon-abs.html
http://localhost:{port}/elsewhere.html
mailto:someone@example.com
/canon-self.html
"""


def written_list(server: SiteServer, tmp_path: Path) -> Path:
    root = server.url("/").rstrip("/")
    path = tmp_path / "urls.txt"
    path.write_text(LIST.format(root=root, port=server.port))
    return path


def test_exactly_the_listed_urls_are_judged_with_every_rule(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url("/"), tmp_path / "out", "--no-state", "--urls", str(written_list(server, tmp_path)))
    assert result.process.returncode == 0, result.process.stderr
    root = server.url("/").rstrip("/")
    assert result.listed == [root + "/canon-self.html"]
    reasons = {url.removeprefix(root): row.get("reason") for url, row in result.report.items()}
    assert reasons["/noindex.html"] == "noindex"
    assert reasons["/private/secret.html"] == "robots"
    assert reasons["/old"] == "redirect"
    assert reasons["/gone-404"] == "status"
    assert reasons["/canon-abs.html"] == "canonicalised"
    assert result.report[f"http://localhost:{server.port}/elsewhere.html"]["reason"] == "out-of-scope"
    lines = [json.loads(line) for line in (tmp_path / "out.crawl-report.jsonl").read_text().splitlines()]
    assert {"url": "mailto:someone@example.com", "outcome": "warning", "reason": "list-invalid",
            "detail": "line 10: not an http(s) URL"} in lines  # fmt: skip
    # Nothing else: no link, redirect target, canonical, robots.txt sitemap or start page fetched.
    fetched = set(server.paths())
    assert fetched - {"/robots.txt"} == {
        "/canon-self.html", "/noindex.html", "/old", "/gone-404", "/canon-abs.html",
    }, fetched  # fmt: skip
    assert check_set(tmp_path / "out" / "sitemap.xml", root) == []


def test_follow_crawls_on_from_the_listed_pages_and_stdin_is_a_list(server: SiteServer, tmp_path: Path) -> None:
    root = server.url("/").rstrip("/")
    process = subprocess.run(
        [str(CLI), "crawl", root + "/", "--out", str(tmp_path / "out"), "--no-state", "--delay", "0", "-q",
         "--urls", "-", "--follow"],
        input="/canon-abs.html\n", capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    fetched = server.paths()
    pages = [path for path in fetched if not path.startswith("/seed")]  # robots.txt's sitemaps come when they come
    assert pages[:2] == ["/robots.txt", "/canon-abs.html"], fetched
    assert "/canon-target.html" in fetched  # its canonical, followed
    assert "/seed-sitemap.xml" in fetched  # as a crawl does: robots.txt's sitemaps are read too
    assert check_set(tmp_path / "out" / "sitemap.xml", root) == []


def test_a_slow_pipe_holds_back_the_next_urls_never_the_crawl(server: SiteServer, tmp_path: Path) -> None:
    """stdin is read off the reactor: the first URL is fetched while the pipe has not said more
    (read on the reactor, the crawl would wait for the next line, and this test for ever)."""
    root = server.url("/").rstrip("/")
    with subprocess.Popen(
        [str(CLI), "crawl", root + "/", "--out", str(tmp_path / "out"), "--no-state", "--delay", "0", "-q",
         "--urls", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        assert process.stdin is not None
        try:
            process.stdin.write("/canon-self.html\n")
            process.stdin.flush()
            first = server.wait_for(2, timeout=60)  # robots.txt, then the page, with the pipe still open
            assert first == ["/robots.txt", "/canon-self.html"], first
            process.stdin.write("/noindex.html\n")
            _, errors = process.communicate(timeout=120)  # closes stdin: the end of the list
            assert process.returncode == 0, errors
        finally:
            process.kill()
    assert server.paths() == ["/robots.txt", "/canon-self.html", "/noindex.html"]
    assert check_set(tmp_path / "out" / "sitemap.xml", root) == []


def test_a_line_too_long_is_said_and_never_held_whole(tmp_path: Path) -> None:
    from crawler.spiders.url_list import MAX_LINE, listed_urls

    path = tmp_path / "urls.txt"
    path.write_bytes(b"/a\n/" + b"x" * (5 * MAX_LINE) + b"\n/b\n" + b"\xff\xfe\n")
    read = list(listed_urls(str(path), "http://127.0.0.1:9/"))
    assert read[0] == ("http://127.0.0.1:9/a", None)
    assert read[1][1] == f"line 2: longer than {MAX_LINE:,} characters" and len(read[1][0]) == 200
    assert read[2] == ("http://127.0.0.1:9/b", None)  # the long line's tail is no line of its own
    assert read[3][1] == "line 4: not UTF-8 text"
    assert len(read) == 4


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["crawl", "--urls", "/nonexistent/urls.txt"], "--urls /nonexistent/urls.txt: no readable file there"),
        (["crawl", "--follow"], "--follow is list mode's: give --urls FILE too"),
        (["crawl", "--urls", "-", "--resume"], "--urls (list mode) and --resume cannot be combined"),
        (["crawl", "--urls", "-", "--workers", "2"], "--urls (list mode) runs in one process"),
        (["update", "--urls", "-", "--add", "http://127.0.0.1:9/a"], "--urls (list mode) and update cannot be"),
        (["audit", "--urls", "-", "--production-url", "https://www.example.com"], "--urls (list mode) is crawl's"),
    ],
)
def test_list_mode_misuse_is_one_line_and_exit_2(options: list[str], words: str, tmp_path: Path) -> None:
    command, *rest = options
    process = run_cli(command, "http://127.0.0.1:9/", "--out", str(tmp_path / "out"), *rest)
    assert process.returncode == 2, process.stderr
    assert words in process.stderr and len(process.stderr.strip().splitlines()) == 1, process.stderr


def test_the_list_is_the_page_budget_unless_one_is_given(tmp_path: Path) -> None:
    from scrapy.settings import Settings

    from settings.config import SitemapConfig

    settings = Settings()
    settings.setmodule("settings", priority="project")
    settings.set("SITEMAP_START_URL", "https://www.example.com/", priority="cmdline")
    settings.set("SITEMAP_OUTPUT_DIR", str(tmp_path / "out"), priority="cmdline")
    assert SitemapConfig.from_settings(settings).max_pages == 100_000  # a crawl: the default budget
    settings.set("SITEMAP_URLS_FILE", "-", priority="cmdline")
    assert SitemapConfig.from_settings(settings).max_pages == 0  # a million lines are a million pages
    settings.set("SITEMAP_LIST_FOLLOW", True, priority="cmdline")
    assert SitemapConfig.from_settings(settings).max_pages == 100_000  # past the list: a crawl's budget
    settings.set("SITEMAP_MAX_PAGES", 5, priority="cmdline")
    assert SitemapConfig.from_settings(settings).max_pages == 5
