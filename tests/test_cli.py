"""The console script as a subprocess: exit codes and messages."""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path

from tests.conftest import read_report, run_cli
from tests.server import NOT_PAGES, SiteServer


def assert_usage_error(result, text: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("sitemap-crawler: error:")
    assert text in lines[0]
    assert "Traceback" not in result.stderr


def test_help_ends_with_an_example() -> None:
    result = run_cli("crawl", "--help")
    assert result.returncode == 0
    assert "example:" in result.stdout
    assert "sitemap-crawler crawl https://" in result.stdout.split("example:")[1]


def test_no_command_is_a_usage_error() -> None:
    assert run_cli().returncode == 2


def test_unknown_option() -> None:
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--bogus"), "unrecognized arguments: --bogus")


def test_bad_option_value() -> None:
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--max-pages", "many"), "--max-pages")


def test_out_of_range_setting_names_the_setting() -> None:
    assert_usage_error(
        run_cli("crawl", "http://127.0.0.1/", "--max-urls-per-file", "60000"), "SITEMAP_MAX_URLS_PER_FILE"
    )


def test_bad_start_url() -> None:
    assert_usage_error(run_cli("crawl", "ftp://example.com/"), "not an absolute http(s) URL")


def test_base_url_on_another_host() -> None:
    assert_usage_error(
        run_cli("crawl", "http://127.0.0.1/", "--base-url", "https://cdn.example.com/"), "must be on the crawled site"
    )


def test_bad_regular_expression() -> None:
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--exclude", "(unclosed"), "bad regular expression")


def test_unwritable_output_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--out", str(blocker / "out")), "not writable")


def test_config_file_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("max-pages = [unclosed")
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--config", str(broken)), "not valid TOML")
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("max-pagez = 3")
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--config", str(unknown)), "unknown option 'max-pagez'")
    assert_usage_error(run_cli("crawl", "http://127.0.0.1/", "--config", str(tmp_path / "none.toml")), "cannot read")


def test_unreachable_start_url(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run_cli("crawl", f"http://127.0.0.1:{port}/", "--out", str(tmp_path / "out"), "--retries", "0", "-q")
    assert result.returncode == 1
    assert "is unreachable" in result.stderr.strip().splitlines()[-1]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "sitemap.xml").exists()
    report = read_report(tmp_path / "out.crawl-report.jsonl")
    # RFC 9309: robots.txt out of reach means nothing may be crawled, the start URL included.
    start = report[f"http://127.0.0.1:{port}/"]
    assert start["reason"] == "robots" and "is unreachable" in str(start["detail"])


def test_config_file_and_any_directory(server: SiteServer, tmp_path: Path) -> None:
    config = tmp_path / "crawl.toml"
    config.write_text(
        'out = "site-maps"\nmax-pages = 3\ndelay = 0\ngzip = true\nbasename = "map"\n'
        'exclude = ["/nothing-matches-this"]\n[settings]\nCONCURRENT_REQUESTS_PER_DOMAIN = 2\n'
    )
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    result = run_cli("crawl", server.url(), "--config", str(config), "--max-pages", "2", "-q", cwd=workdir)
    assert result.returncode == 0, result.stderr
    out = workdir / "site-maps"
    assert (out / "map.xml").is_file()
    assert (out / "map-1.xml.gz").is_file()
    assert result.stdout.strip() == f"Sitemap: {server.url('/map.xml')}"
    pages = [p for p in server.paths() if p not in NOT_PAGES and "seed-" not in p]
    assert len(pages) == 2  # the command line wins over the file
    assert "Listed " in result.stderr and "limit" in result.stderr


def test_tracebacks_fold_into_one_line_except_at_debug_level() -> None:
    from crawler.cli.crawl import log_filters

    (fold,) = log_filters(0)
    assert log_filters(1) and log_filters(2) == []
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("scrapy", logging.ERROR, __file__, 1, "Error downloading %s", ("u",), sys.exc_info())
    assert fold.filter(record)
    assert record.exc_info is None and record.getMessage() == "Error downloading u (ValueError('boom'))"


def test_a_typo_and_an_abbreviation_are_told_apart() -> None:
    typo = run_cli("crawl", "https://www.example.com/", "--gizp")
    assert typo.returncode == 2 and "(did you mean --gzip?)" in typo.stderr, typo.stderr
    short = run_cli("crawl", "https://www.example.com/", "--max-page", "5")
    assert short.returncode == 2 and "(options are never abbreviated: did you mean --max-pages?)" in short.stderr
