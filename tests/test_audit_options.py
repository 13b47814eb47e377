"""The audit's options in the one option model of every layer; ``--production-url`` checked;
secrets out of ``ps``; the audit's output swapped in whole, or the previous one left as it was."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import pytest
from scrapy.settings import Settings

from crawler.cli import masked
from crawler.cli.parser import add_audit_options, add_crawl_options, build_parser, option_kinds
from crawler.cli.publishing import add_publishing_options
from crawler.validate.sets import check_set
from settings.environment import env_name
from settings.layers import build_layers
from settings.options import OPTION_SETTINGS
from tests.audit_site import audit, routes, site
from tests.conftest import CLI, run_cli
from tests.staging_site import PASSWORD, PROD, USER, StagingServer

__all__ = ["site"]  # the fixture, used by name

START = "https://staging.example.com/"
HTML = {"Content-Type": "text/html; charset=utf-8"}

# --- one option model: every option, every layer ----------------------------------------------


def _actions() -> dict[str, argparse.Action]:
    parser = argparse.ArgumentParser(add_help=False)
    add_crawl_options(parser)
    add_audit_options(parser)
    add_publishing_options(parser)  # crawl and update only, in the one option model too
    return {action.dest: action for action in parser._actions}


def _defaults() -> Settings:
    args = build_parser().parse_args(["config", "show", START])
    return build_layers(args, None, option_kinds(), environ={})[0]  # the defaults, no profile


def _sample(dest: str, kind: str) -> tuple[list[str], str, str]:
    """What the command line, the environment and a TOML file give option *dest*: a value of its
    kind that is not the default (a flag: whichever of its spellings changes it)."""
    action = _actions()[dest]
    if kind == "bool":
        default = _defaults().get(OPTION_SETTINGS[dest])
        for spelling in action.option_strings:
            value = build_parser().parse_args(["config", "show", START, spelling]).__dict__[dest]
            if value != default:
                return [spelling], str(value).lower(), str(value).lower()
        raise AssertionError(f"no spelling of {dest} changes it")
    if kind == "list":
        flag = action.option_strings[0]
        return [flag, "a=x", flag, "b=y"], "a=x,b=y", '["a=x", "b=y"]'
    text = {"int": "9", "float": "0.5"}.get(kind) or (action.choices and list(action.choices)[-1]) or "value"
    if dest == "url":
        return ["https://www.example.org/"], "https://www.example.org/", '"https://www.example.org/"'
    return [action.option_strings[0], str(text)], str(text), text if kind in ("int", "float") else json.dumps(text)


#: Every option that stands for a setting, as the parser knows it: an option added later is in here.
OPTIONS = sorted(option_kinds().items())


@pytest.mark.parametrize(("dest", "kind"), OPTIONS, ids=[dest for dest, _ in OPTIONS])
def test_every_option_is_taken_alike_by_every_layer(dest: str, kind: str, tmp_path: Path) -> None:
    argv, env_text, toml_text = _sample(dest, kind)
    setting = OPTION_SETTINGS[dest]
    start = [] if dest == "url" else [START]
    toml = tmp_path / "audit.toml"
    toml.write_text(f"{dest.replace('_', '-')} = {toml_text}\n")
    layers = {
        "--" + dest.replace("_", "-") if dest != "url" else "the URL argument": (argv + start, {}),
        env_name(dest): (start, {env_name(dest): env_text}),
        f"config file {toml}: {dest.replace('_', '-')}": (["--config", str(toml), *start], {}),
    }
    values = {}
    for layer, (words, environ) in layers.items():
        args = build_parser().parse_args(["config", "show", "--for", "audit", *words])
        settings, origins = build_layers(args, None, option_kinds(), environ=environ)
        assert origins[setting] == layer, (dest, layer, origins.get(setting))
        value = settings.get(setting)
        values[layer] = value.copy_to_dict() if hasattr(value, "copy_to_dict") else value
    assert len({json.dumps(value, sort_keys=True) for value in values.values()}) == 1, values
    assert next(iter(values.values())) != _defaults().get(setting), (dest, "the sample is the default")


def test_the_table_covers_the_audit_options() -> None:
    assert {"fail_on", "deep_threshold", "as_if_no_blocker", "ignore_robots", "sitemap"} <= dict(OPTIONS).keys()
    assert len(OPTIONS) == len([dest for dest in OPTION_SETTINGS if dest in _actions()]) > 60


def test_config_show_takes_the_audit_options_from_every_layer(tmp_path: Path) -> None:
    toml = tmp_path / "audit.toml"
    toml.write_text('fail-on = "broken-links,orphans"\nas-if-no-blocker = true\n')
    toml.write_text(toml.read_text() + "[settings]\nSITEMAP_AUDIT_DEEP_THRESHOLD = 3\n")
    env = {"SITEMAP_CRAWLER_IGNORE_ROBOTS": "yes", "SITEMAP_CRAWLER_CONFIG": str(toml)}
    result = run_cli("config", "show", "--for", "audit", START, "--set", "SITEMAP_AUDIT_SITEMAPS=/s.xml", env=env)
    assert result.returncode == 0, result.stderr
    lines = {line.split(" = ")[0].strip(): line for line in result.stdout.splitlines()}
    assert lines["SITEMAP_AUDIT_FAIL_ON"].endswith(f'"broken-links,orphans"  # config file {toml}: fail-on')
    assert lines["SITEMAP_AUDIT_AS_IF_NO_BLOCKER"].endswith(f"true  # config file {toml}: as-if-no-blocker")
    assert lines["SITEMAP_AUDIT_DEEP_THRESHOLD"].endswith(f"3  # config file {toml} [settings]")
    assert lines["SITEMAP_ROBOTS_IGNORE_RULES"].endswith("true  # SITEMAP_CRAWLER_IGNORE_ROBOTS")
    assert lines["SITEMAP_AUDIT_SITEMAPS"].endswith('"/s.xml"  # --set')
    bad = run_cli("config", "show", "--for", "audit", START, env={"SITEMAP_CRAWLER_FAIL_ON": "orphan"})
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1, bad.stderr
    assert "unknown finding kind 'orphan'" in bad.stderr and "(from SITEMAP_CRAWLER_FAIL_ON)" in bad.stderr


def test_a_real_audit_takes_its_options_from_the_config_file(site: StagingServer, tmp_path: Path) -> None:
    toml = tmp_path / "audit.toml"
    toml.write_text(f'production-url = "{PROD}"\nfail-on = "broken-links"\ndeep-threshold = 0\n')
    result = audit(site, tmp_path / "out", "--config", str(toml))
    assert result.returncode == 4, result.stderr  # --fail-on broken-links, from the file
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["audit"]["deep_threshold"] == 0 and data["audit"]["production_url"] == PROD + "/"
    assert {f["kind"] for f in data["findings"]} >= {"broken-links", "deep-pages"}


# --- --production-url ---------------------------------------------------------------------------

BAD_PRODUCTION = [
    ((), "audit needs the production origin"),
    (("--production-url", ""), "SITEMAP_PRODUCTION_URL is empty"),
    (("--production-url", "not a url"), "is not an absolute http(s) URL"),
    (("--production-url", "https//x"), "is not an absolute http(s) URL"),
    (("--production-url", "ftp://x"), "is not an absolute http(s) URL"),
    (("--production-url", "www.example.com"), "is not an absolute http(s) URL"),
    (("--production-url", "https://exa mple.com"), "is not an absolute http(s) URL"),
    (("--production-url", "https://"), "is not an absolute http(s) URL"),
    (("--production-url", "https://x:99999"), "is not an absolute http(s) URL"),
    (("--production-url", "https://user:pw@x"), "may not hold a user name or password"),
    (("--production-url", "https://x/path"), "a path is not supported: give the origin (https://x/)"),
    (("--production-url", "https://x/?a=1"), "a query or fragment is not supported"),
    (("--production-url", "https://x/#top"), "a query or fragment is not supported"),
    (("--production-url", "{staging}"), "is the crawled (staging) origin itself"),
]


@pytest.mark.parametrize(("options", "words"), BAD_PRODUCTION, ids=[str(o) for o, _ in BAD_PRODUCTION])
def test_a_wrong_production_url_is_one_line_before_any_request(
    site: StagingServer, tmp_path: Path, options: tuple[str, ...], words: str
) -> None:
    given = [word.replace("{staging}", site.url.rstrip("/")) for word in options]
    result = audit(site, tmp_path / "out", *given)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.stderr
    assert "pw@" not in lines[0]  # a password given in the URL is never shown back
    assert site.log == [] and list(tmp_path.iterdir()) == []


def test_the_production_url_from_the_environment_is_checked_and_used_by_crawl(
    site: StagingServer, tmp_path: Path
) -> None:
    site.password = False
    bad = run_cli("crawl", site.url, "--out", str(tmp_path / "bad"), env={env_name("production_url"): "https//x"})
    assert bad.returncode == 2 and "(from SITEMAP_CRAWLER_PRODUCTION_URL)" in bad.stderr, bad.stderr
    assert site.log == []
    out = tmp_path / "public"
    good = run_cli("crawl", site.url, "--out", str(out), "--no-state", "--delay", "0",
                   env={env_name("production_url"): PROD})  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert check_set(out / "sitemap.xml", PROD) == []
    assert f"<loc>{PROD}/a</loc>" in (out / "sitemap-1.xml").read_text()


# --- secrets out of ps ----------------------------------------------------------------------------


def cmdline_during_run(server: StagingServer, command: list[str]) -> tuple[str, str, int]:
    """The command line of the process as ``ps`` shows it, read when the server sees its first request."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server.watch_pid = process.pid
    stdout, stderr = process.communicate(timeout=120)
    assert server.cmdlines, stderr
    return server.cmdlines[0], stdout + stderr, process.returncode


def test_no_secret_shows_in_ps_while_the_audit_or_crawl_runs(site: StagingServer, tmp_path: Path) -> None:
    command = [str(CLI), "audit", site.url, "--out", str(tmp_path / "out"), "--production-url", PROD,
               "--user", USER, "--password", PASSWORD, "--header", "X-Staging-Token: t0ken",
               "--cookie=c=v4lue", "--delay", "0"]  # fmt: skip
    shown, output, code = cmdline_during_run(site, command)
    assert code == 0, output
    for secret in (PASSWORD, "t0ken", "v4lue"):
        assert secret not in shown and secret not in output
    assert "--password ***" in shown and "--header ***" in shown and "--cookie=***" in shown
    crawled = StagingServer(routes(), password=False).start()
    try:
        command = [str(CLI), "crawl", crawled.url, "--out", str(tmp_path / "public"), "--no-state", "--delay", "0",
                   "--indexnow-endpoint", site.url + "indexnow", "--indexnow-key", "K3y0123456789abc"]  # fmt: skip
        shown, output, code = cmdline_during_run(crawled, command)
    finally:
        crawled.stop()
    assert "K3y0123456789abc" not in shown and "--indexnow-key ***" in shown, shown


@pytest.mark.parametrize("option", ["--head", "--cook", "--pass", "--indexnow-k"])
def test_abbreviations_are_refused_without_echoing_their_value(site: StagingServer, option: str) -> None:
    result = run_cli("audit", site.url, "--production-url", PROD, option, "X-Token: s3cr3t-value")
    assert result.returncode == 2 and "s3cr3t-value" not in result.stderr, result.stderr
    unquoted = run_cli("audit", site.url, "--production-url", PROD, option, "X-Token:", "s3cr3t-value")
    assert unquoted.returncode == 2 and "s3cr3t-value" not in unquoted.stderr, unquoted.stderr
    assert f"unrecognized arguments: {option} " in result.stderr and "did you mean --" in result.stderr
    assert site.log == []


def test_masked_hides_every_secret_spelling() -> None:
    argv = ["--password=p1", "--token", "p2", "--set", "SITEMAP_STAGING_PASSWORD=p3", "--set=SITEMAP_INDEXNOW_KEY=p4",
            "--distributed", "redis://:p5@h:6379/0", "redis://u:p6@h/0", "--set", "DOWNLOAD_DELAY=1"]  # fmt: skip
    shown = " ".join(masked(argv))
    assert not any(f"p{n}" in shown for n in range(1, 7)), shown
    assert "DOWNLOAD_DELAY=1" in shown and "redis://***@h:6379/0" in shown
