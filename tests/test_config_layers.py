"""Configuration in layers (defaults < profile < TOML < environment < options
< --set), ``config show``, and JSON logs, through the real console script."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.server import SiteServer


def show(*options: str, env: dict[str, str] | None = None) -> dict[str, tuple[object, str]]:
    """``config show`` as {setting: (value, layer)}."""
    result = run_cli("config", "show", *options, env=env)
    assert result.returncode == 0, result.stderr
    values = {}
    for line in result.stdout.splitlines():
        name, _, rest = line.partition(" = ")
        value, _, layer = rest.rpartition("  # ")
        values[name.strip()] = (json.loads(value), layer)
    return values


def test_each_layer_wins_over_the_one_below(tmp_path: Path) -> None:
    config = tmp_path / "crawl.toml"
    config.write_text('max-pages = 100\nmax-depth = 7\nout = "from-file"\n[settings]\nDOWNLOAD_TIMEOUT = 12\n')
    env = {"SITEMAP_CRAWLER_MAX_PAGES": "200", "SITEMAP_CRAWLER_EXCLUDE": "/a, /b"}
    values = show("https://e.com/", "--config", str(config), "--max-pages", "300", "--profile", "container", env=env)
    assert values["SITEMAP_MAX_PAGES"] == (300, "--max-pages")
    assert values["SITEMAP_MAX_DEPTH"] == (7, f"config file {config}: max-depth")
    assert values["SITEMAP_OUTPUT_DIR"] == ("from-file", f"config file {config}: out")  # over the container profile
    assert values["SITEMAP_LOG_FORMAT"] == ("json", "profile container")
    assert values["SITEMAP_EXCLUDE"] == (["/a", "/b"], "SITEMAP_CRAWLER_EXCLUDE")
    assert values["DOWNLOAD_TIMEOUT"] == (12, f"config file {config} [settings]")
    assert values["SITEMAP_GZIP"] == (False, "default")
    values = show("https://e.com/", "--config", str(config), env=env)
    assert values["SITEMAP_MAX_PAGES"] == (200, "SITEMAP_CRAWLER_MAX_PAGES")
    assert values["SITEMAP_OUTPUT_DIR"] == ("from-file", f"config file {config}: out")
    env = {"SITEMAP_CRAWLER_CONFIG": str(config), "SITEMAP_CRAWLER_URL": "https://f.com/"}
    values = show("--max-pages", "1", "--set", "SITEMAP_MAX_PAGES=9", env=env)
    assert values["SITEMAP_MAX_PAGES"] == ("9", "--set")
    assert values["SITEMAP_START_URL"] == ("https://f.com/", "SITEMAP_CRAWLER_URL")
    assert values["SITEMAP_MAX_DEPTH"] == (7, f"config file {config}: max-depth")


def test_secrets_are_masked_in_config_show() -> None:
    values = show("https://e.com/", "--user", "u", "--password", "hunter22", "--cookie", "s=tok3n")
    assert values["SITEMAP_STAGING_PASSWORD"] == ("***", "--password")
    assert values["SITEMAP_STAGING_COOKIES"] == ("***", "--cookie")
    result = run_cli("config", "show", "https://e.com/", "--user", "u", "--password", "hunter22")
    assert "hunter22" not in result.stdout + result.stderr


def test_a_bad_value_names_its_key_and_layer(tmp_path: Path) -> None:
    result = run_cli("config", "show", "https://e.com/", env={"SITEMAP_CRAWLER_MAX_PAGES": "lots"})
    assert result.returncode == 2
    assert result.stderr.strip() == "sitemap-crawler: error: SITEMAP_CRAWLER_MAX_PAGES: not an integer: 'lots'"
    config = tmp_path / "bad.toml"
    config.write_text('gzip = "sometimes"\n')
    result = run_cli("crawl", "https://e.com/", "--config", str(config))
    assert result.returncode == 2 and f"config file {config}: gzip: not true or false: 'sometimes'" in result.stderr
    result = run_cli("crawl", "https://e.com/", env={"SITEMAP_CRAWLER_MAX_PAGES": "-3"})
    assert result.returncode == 2 and "(from SITEMAP_CRAWLER_MAX_PAGES)" in result.stderr
    result = run_cli("crawl", env={"SITEMAP_CRAWLER_PROFILE": "cloud"})
    assert result.returncode == 2 and "profile 'cloud' is not one of live, container, audit" in result.stderr
    assert run_cli("crawl").returncode == 2
    assert "no start URL" in run_cli("crawl").stderr


def test_json_logs_are_one_object_per_line_with_a_summary(server: SiteServer, tmp_path: Path) -> None:
    result = run_cli(
        "crawl", server.url(), "--out", str(tmp_path / "out"), "--delay", "0", "-v", "--no-state",
        env={"SITEMAP_CRAWLER_LOG_FORMAT": "json"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"Sitemap: {server.url()}sitemap.xml"]
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert any(line["level"] == "INFO" and line["logger"].startswith("scrapy") for line in lines)
    summary = lines[-1]
    assert summary["event"] == "summary" and summary["exit"] == 0
    assert summary["counts"]["listed"] > 0 and summary["counts"]["reasons"]["redirect"] > 0
    assert summary["url"] == f"{server.url()}sitemap.xml"
    usage = run_cli("crawl", "https://e.com/", "--max-pages", "x", "--log-format", "json")
    assert usage.returncode == 2 and json.loads(usage.stderr)["event"] == "usage-error"
