"""Configuration that refuses what cannot be right: numbers out of range or not finite, names
nothing reads, a config file that is not a regular file, credentials in URLs, paths that are
one file through a symbolic link. Each is one line and exit status 2, before anything runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from crawler.cli.crawl import effective_config
from crawler.cli.examples import CONFIG_EXAMPLE
from crawler.cli.parser import UsageError, build_parser, option_kinds
from settings.distributed import SECRET_VARIABLE
from settings.environment import ENV_PREFIX, OTHER_VARIABLES, check_variables, env_name
from settings.layers import build_layers
from settings.options import OPTION_SETTINGS
from settings.ranges import RANGES, Range, checked
from tests.conftest import crawl, run_cli
from tests.docs_text import DOCS, reference
from tests.server import SiteServer

ROOT = Path(__file__).parent.parent
START = "https://www.example.com/"
#: Every option that takes a number, and the setting (with its range) behind it.
NUMERIC = sorted(dest for dest, kind in option_kinds().items() if kind in ("int", "float"))


def one_line_usage_error(result: subprocess.CompletedProcess[str], *texts: str) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(text in lines[0] for text in texts), lines[0]
    return lines[0]


def refusal(*argv: str, env: dict[str, str] | None = None) -> str:
    """The one-line message the CLI would print for ``config show START *argv`` (in-process)."""
    args = build_parser().parse_args(["config", "show", START, *argv])
    with pytest.raises((UsageError, ValueError)) as raised:
        settings, origins = build_layers(args, "live", option_kinds(), environ=env or {})
        effective_config(settings, origins)
    return str(raised.value)


def accepted(*argv: str, env: dict[str, str] | None = None) -> None:
    args = build_parser().parse_args(["config", "show", START, *argv])
    settings, origins = build_layers(args, "live", option_kinds(), environ=env or {})
    effective_config(settings, origins)


def given(dest: str, value: str, layer: str, tmp_path: Path) -> tuple[list[str], dict[str, str], str]:
    """Options and environment that give *value* to option *dest* through *layer*, and the
    words the message must name that layer with."""
    option = "--" + dest.replace("_", "-")
    if layer == "command line":
        return [option, value], {}, f"(from {option})"
    if layer == "environment":
        return [], {env_name(dest): value}, f"(from {env_name(dest)})"
    if layer == "config file":
        path = tmp_path / "crawl.toml"
        path.write_text(f"{option[2:]} = {value}\n")  # a TOML number: nan, inf, 1e308 and big ints too
        return ["--config", str(path)], {}, f"(from config file {path}: {option[2:]})"
    return ["--set", f"{OPTION_SETTINGS[dest]}={value}"], {}, "(from --set)"


def outside(span: Range) -> list[tuple[str, str]]:
    """Values just out of *span* on both sides, and the words of each refusal."""
    if span.whole:
        values = [(str(int(span.low) - 1), "must be at least"), (str(int(span.high) + 1), "must be at most")]
        return [*values, ("99999999999999999999", "must be at most")]
    values = [(repr(span.low - 0.0005 if span.low else -0.5), "must be at least"), ("1e308", "must be at most")]
    return [*values, ("nan", "must be a finite number"), ("inf", "must be a finite number")]


LAYERS = ("command line", "environment", "config file", "--set")
CASES = [
    pytest.param(dest, value, words, layer, id=f"{dest}-{value}-{layer}")
    for dest in NUMERIC
    for value, words in outside(RANGES[OPTION_SETTINGS[dest]])
    for layer in LAYERS
]


def test_every_numeric_option_has_a_range_and_the_reference_shows_it() -> None:
    """The generated reference gives each range in the row of its option or setting."""
    assert len(NUMERIC) >= 17
    rows = [*reference("commands.md").splitlines(), *reference("settings.md").splitlines()]
    for dest in NUMERIC:
        span = RANGES[OPTION_SETTINGS[dest]]
        option = [line for line in rows if line.startswith(f"| `--{dest.replace('_', '-')}`")]
        assert any(span.describe() in line for line in option), (dest, span.describe(), option)
    for name, span in RANGES.items():  # the settings, Scrapy's, the other commands' options
        token = f"`{name.split()[-1]}`"
        assert any(line.startswith((f"| {token}", f"| [{token}]")) for line in rows), name
        assert any(token in line and span.describe() in line for line in rows), name


@pytest.mark.parametrize(("dest", "value", "words", "layer"), CASES)
def test_a_number_out_of_range_names_the_setting_and_its_layer(
    dest: str, value: str, words: str, layer: str, tmp_path: Path
) -> None:
    argv, env, source = given(dest, value, layer, tmp_path)
    setting = OPTION_SETTINGS[dest]
    message = refusal(*argv, env=env)
    assert message.startswith(f"{setting} {words} "), message
    assert RANGES[setting].describe() in message and message.endswith(source), message


@pytest.mark.parametrize("dest", NUMERIC)
def test_the_ends_of_every_range_are_accepted(dest: str) -> None:
    span = RANGES[OPTION_SETTINGS[dest]]
    option = "--" + dest.replace("_", "-")
    for end in (span.low, span.high):
        accepted(option, str(int(end)) if span.whole else repr(float(end)))


#: The positionals each command needs before its own numeric option is read.
POSITIONALS = {
    "validate": ["public/"], "check": [START], "serve": [START, "--out", "public"], "worker": [],
    "coverage": ["public/", "--logs", "access.log"],
}  # fmt: skip


@pytest.mark.parametrize("name", [name for name in RANGES if " " in name])
def test_every_commands_own_number_is_held_to_its_range(name: str) -> None:
    """``worker --wait nan``, ``check --deadline 1e308``: refused by the parser, naming the range."""
    command, option = name.split()
    bad = ("nan", "must be a whole number") if RANGES[name].whole else ("nan", "must be a finite number")
    too_big = str(int(RANGES[name].high) + 1) if RANGES[name].whole else "1e308"
    for value, words in (bad, (too_big, "must be at most")):
        result = run_cli(command, *POSITIONALS[command], option, value)
        one_line_usage_error(result, f"argument {option}: {words}", RANGES[name].describe())


def test_the_settings_of_no_option_are_checked_too() -> None:
    for name in ("AUTOTHROTTLE_MAX_DELAY", "SITEMAP_LEASE_SECONDS", "SITEMAP_IDLE_GRACE", "SITEMAP_SHARED_DELAY"):
        assert refusal("--set", f"{name}=nan").startswith(f"{name} must be a finite number"), name
    assert refusal("--set", "DOWNLOAD_MAXSIZE=1e3").startswith("DOWNLOAD_MAXSIZE must be a whole number")
    assert checked("SITEMAP_MAX_PAGES", 2.0) == 2  # a TOML float that is a whole number
    for bad in (True, 2.5, [3], "x" * 5000):
        with pytest.raises(ValueError, match="must be a whole number") as raised:
            checked("SITEMAP_MAX_PAGES", bad)
        assert len(str(raised.value)) < 120  # a pasted megabyte stays one short line


def test_a_bad_number_is_one_line_from_every_layer_of_the_real_command(tmp_path: Path) -> None:
    config = tmp_path / "crawl.toml"
    config.write_text("timeout = nan\n")
    one_line_usage_error(run_cli("config", "show", START, "--config", str(config)), "DOWNLOAD_TIMEOUT", str(config))
    one_line_usage_error(
        run_cli("config", "show", START, env={"SITEMAP_CRAWLER_DELAY": "1e308"}), "(from SITEMAP_CRAWLER_DELAY)"
    )
    one_line_usage_error(run_cli("config", "show", START, "--retries", "1000000000"), "RETRY_TIMES must be at most")
    one_line_usage_error(run_cli("config", "show", START, "--set", "SITEMAP_MAX_CRAWL_DELAY=nan"), "(from --set)")
    one_line_usage_error(
        run_cli("audit", START, "--deep-threshold", "99999"),
        "SITEMAP_AUDIT_DEEP_THRESHOLD must be at most",
        "(from --deep-threshold)",
    )
    one_line_usage_error(run_cli("validate", "x.xml", "--timeout", "nan"), "--timeout: must be a finite number")


def test_a_delay_that_is_not_finite_never_starts_a_crawl(server: SiteServer, tmp_path: Path) -> None:
    for value in ("inf", "1e308"):
        result = run_cli(
            "crawl", server.url(), "--out", str(tmp_path / "out"), env={"SITEMAP_CRAWLER_DELAY": value}, timeout=30
        )
        one_line_usage_error(result, "DOWNLOAD_DELAY", "(from SITEMAP_CRAWLER_DELAY)")
    with server.lock:
        assert server.hits == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.state.sqlite").exists()


# --- names nothing reads -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "env", "text"),
    [
        ((), {"SITEMAP_CRAWLER_DELAYS": "1"}, "'SITEMAP_CRAWLER_DELAYS' (did you mean 'SITEMAP_CRAWLER_DELAY'?)"),
        ((), {"SITEMAP_CRAWLER_MAXPAGES": "1"}, "(did you mean 'SITEMAP_CRAWLER_MAX_PAGES'?)"),
        ((), {"SITEMAP_CRAWLER_SECRET": "x"}, f"(did you mean '{SECRET_VARIABLE}'?)"),
        ((), {"SITEMAP_CRAWLER_XYZZY": "1"}, "unknown environment variable 'SITEMAP_CRAWLER_XYZZY': nothing reads it"),
        (("--set", "DOWNLOAD_DELAYY=1"), {}, "--set: unknown setting 'DOWNLOAD_DELAYY' (did you mean 'DOWNLOAD_DELAY'"),
        (("--set", "sitemap_max_pages=1"), {}, "(did you mean 'SITEMAP_MAX_PAGES'?)"),
        (("--set", "SITEMAP_FOO=1"), {}, "--set: unknown setting 'SITEMAP_FOO'"),
    ],
)  # fmt: skip
def test_an_unknown_name_is_refused_with_the_closest_known_one(
    argv: tuple[str, ...], env: dict[str, str], text: str
) -> None:
    message = refusal(*argv, env=env)
    assert text in message, message
    if "did you mean" not in text:
        assert "did you mean" not in message  # nothing close: no wild guess


def test_unknown_names_in_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "crawl.toml"
    config.write_text("max-pagez = 3\n")
    one_line_usage_error(
        run_cli("config", "show", START, "--config", str(config)),
        f"config file {config}: unknown option 'max-pagez' (did you mean 'max-pages'?)",
    )
    config.write_text("[settings]\nCONCURENT_REQUESTS = 3\n")
    one_line_usage_error(
        run_cli("config", "show", START, env={"SITEMAP_CRAWLER_CONFIG": str(config)}),
        f"config file {config} [settings]: unknown setting 'CONCURENT_REQUESTS' (did you mean 'CONCURRENT_REQUESTS'?)",
    )
    one_line_usage_error(
        run_cli("config", "show", START, env={"SITEMAP_CRAWLER_DELAYS": "1"}), "did you mean 'SITEMAP_CRAWLER_DELAY'"
    )


def test_every_variable_the_project_reads_is_known() -> None:
    """Grep the code, the docs and the build for ``SITEMAP_CRAWLER_*`` names: each is an
    option's variable or one of the others read elsewhere, and a run with all of them set
    (as a container or CI might) is not refused."""
    sources = [*ROOT.glob("crawler/**/*.py"), *ROOT.glob("settings/*.py"), *ROOT.glob("tests/*.py")]
    sources += [
        *ROOT.glob("docs/**/*.md"),
        ROOT / "README.md",
        ROOT / "Dockerfile",
        ROOT / "Makefile",
        *ROOT.glob(".ci/*"),
    ]
    found = {name for path in sources for name in re.findall(rf"{ENV_PREFIX}[A-Z][A-Z_]*[A-Z]", path.read_text())}
    options = {env_name(dest) for dest in option_kinds()}
    assert len(found) > 40 and SECRET_VARIABLE in OTHER_VARIABLES
    assert {env_name("config"), env_name("profile"), env_name("fail_on"), env_name("password")} <= found
    found -= {"SITEMAP_CRAWLER_DELAYS", "SITEMAP_CRAWLER_MAXPAGES", "SITEMAP_CRAWLER_SECRET", "SITEMAP_CRAWLER_XYZZY"}
    assert sorted(found - options - OTHER_VARIABLES) == []
    check_variables(dict.fromkeys(found, "1"), options)


# --- the config file, config show -----------------------------------------------------------


def test_a_config_file_that_is_not_a_regular_file_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "crawl.toml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    result = run_cli("config", "show", START, "--config", str(fifo), timeout=20)
    one_line_usage_error(result, f"config file {fifo} is not a regular file")
    result = run_cli("crawl", START, env={"SITEMAP_CRAWLER_CONFIG": str(fifo)}, timeout=20)
    one_line_usage_error(result, "is not a regular file")
    one_line_usage_error(run_cli("config", "show", START, "--config", str(tmp_path)), "is not a regular file")


def readme_config_commands() -> list[list[str]]:
    """Every ``config show`` command line of the docs and of ``config --help``, without the
    prompt and the environment."""
    commands = []
    for line in [*DOCS.splitlines(), *CONFIG_EXAMPLE.splitlines()]:
        if "sitemap-crawler config show" in line and "[" not in line:  # not the synopsis
            words = shlex.split(line.split("sitemap-crawler", 1)[1])
            commands.append(words)
    return commands


def test_every_config_show_of_the_readme_parses_in_its_own_order() -> None:
    commands = readme_config_commands()
    assert len(commands) >= 4 and any(words[2] == "--for" for words in commands)
    for words in commands:
        args = build_parser().parse_args(words)
        assert args.action == "show" and args.url and args.url.startswith("https://"), words
    synopsis = build_parser().parse_args(["config", "show", "--for", "audit", START, "--delay", "1"])
    assert (synopsis.for_command, synopsis.url, synopsis.delay) == ("audit", START, 1.0)


def test_config_show_for_audit_in_the_readme_order() -> None:
    result = run_cli("config", "show", "--for", "audit", "--profile", "container", START)
    assert result.returncode == 0, result.stderr
    assert f'"{START}"  # the URL argument' in result.stdout
    assert "(profile container;" in result.stderr


# --- credentials in URLs ------------------------------------------------------------------

PASSWORD = "hunter2-secret"


@pytest.mark.parametrize(
    ("argv", "setting"),
    [
        (("config", "show", f"https://user:{PASSWORD}@www.example.com/"), "SITEMAP_START_URL"),
        (("config", "show", f"user:{PASSWORD}@www.example.com"), "SITEMAP_START_URL"),
        (("config", "show", START, "--base-url", f"https://u:{PASSWORD}@www.example.com/"), "SITEMAP_BASE_URL"),
        (("config", "show", "--for", "audit", START, "--production-url", f"https://u:{PASSWORD}@example.org"),
         "SITEMAP_PRODUCTION_URL"),
        (("config", "show", START, "--indexnow-endpoint", f"https://k:{PASSWORD}@api.indexnow.org/indexnow",
          "--indexnow-key", "abcdef123456"), "SITEMAP_INDEXNOW_ENDPOINT"),
        (("audit", START, "--sitemap", f"https://u:{PASSWORD}@www.example.com/sitemap.xml"), "--sitemap"),
        (("update", START, "--add", f"https://u:{PASSWORD}@www.example.com/new"), "--add"),
    ],
)  # fmt: skip
def test_credentials_in_a_url_option_are_refused_never_echoed(
    argv: tuple[str, ...], setting: str, tmp_path: Path
) -> None:
    result = run_cli(*argv, "--out", str(tmp_path / "out"))
    one_line_usage_error(result, setting, "may not hold a user name or password", "--user")
    assert PASSWORD not in result.stderr + result.stdout
    assert list(tmp_path.iterdir()) == []  # nothing stored


def test_a_start_url_with_credentials_fetches_and_stores_nothing(server: SiteServer, tmp_path: Path) -> None:
    url = server.url().replace("http://", f"http://preview:{PASSWORD}@")
    result = crawl(url, tmp_path / "out", env={"SITEMAP_CRAWLER_LOG_FORMAT": "json"})
    assert result.code == 2 and PASSWORD not in result.process.stderr, result.process.stderr
    assert '"usage-error"' in result.process.stderr and "--user" in result.process.stderr
    with server.lock:
        assert server.hits == []
    assert list(tmp_path.iterdir()) == []  # no report, no state store


# --- paths that are one file through a symbolic link ---------------------------------------


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "case",
    [
        ("report.jsonl", "public.state.sqlite", ("--report", "{tmp}/report.jsonl"), "would be the same file"),
        ("alias", "public", ("--report", "{tmp}/alias/report.jsonl"), "inside the output folder"),
        ("removals.jsonl", "public.state.sqlite", ("--removals", "{tmp}/removals.jsonl"), "would be the same file"),
        ("state.sqlite", "public.crawl-report.jsonl", ("--state", "{tmp}/state.sqlite"), "would be the same file"),
        ("alias", "public", ("--out", "{tmp}/alias", "--state", "{tmp}/public/s.sqlite"), "inside the output folder"),
        ("wal", "public.state.sqlite-wal", ("--report", "{tmp}/wal"), "the state store's -wal file"),
    ],
)
def test_a_symbolic_link_cannot_make_two_files_one(
    live_site: SiteServer, tmp_path: Path, case: tuple[str, str, tuple[str, ...], str]
) -> None:
    link, target, options, text = case  # a link LINK -> TARGET beside OUT, then a crawl with OPTIONS
    first = crawl(live_site.url(), tmp_path / "public")
    assert first.code == 0, first.process.stderr
    store = tmp_path / "public.state.sqlite"
    assert store.stat().st_size > 0
    (tmp_path / link).symlink_to(tmp_path / target)
    before = files_under(tmp_path)
    live_site.reset()
    args = [option.replace("{tmp}", str(tmp_path)) for option in options]
    result = crawl(live_site.url(), tmp_path / "public", *args)
    one_line_usage_error(result.process, text, os.path.realpath(tmp_path / target))
    assert files_under(tmp_path) == before  # the state store's bytes above all
    assert live_site.paths() == []


def test_a_run_file_on_an_audit_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    (tmp_path / "link.csv").symlink_to(out / "urls.csv")
    for options in (("--report", str(out / "report.json")), ("--removals", str(tmp_path / "link.csv"))):
        result = run_cli("audit", "http://127.0.0.1:9/", "--out", str(out), *options)
        one_line_usage_error(result, "would be the same file")
    assert list(out.iterdir()) == []
