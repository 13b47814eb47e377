"""The documentation is a contract: a short README that links into docs/, and a reference
generated from the code that holds every command, option, variable, setting, reason and exit
status (so nothing is written twice by hand, and nothing can drift)."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest
import yaml

import settings as default_settings
from crawler.audit.findings import Kind
from crawler.audit.verdict import rule
from crawler.cli import build_parser
from crawler.cli.exits import EXIT_STATUSES
from crawler.cli.parser import option_kinds
from crawler.extensions.report import REPORT_FIELDS
from crawler.reasons import MEANINGS, WARNINGS, Reason
from crawler.reference import PAGES
from crawler.reference.commands import grouped_settings, subcommands
from crawler.reference.markdown import code, table
from settings.distributed import SECRET_VARIABLE
from settings.environment import VARIABLES, env_name
from tests.conftest import crawl
from tests.docs_text import README, ROOT, guide, hand_written, reference
from tests.server import SiteServer

COMPOSE = ROOT / "deploy" / "compose.yaml"
COMMANDS = ["crawl", "update", "serve", "validate", "check", "audit", "config", "worker", "coverage"]
#: A Markdown link: [text](target); targets with a scheme are not ours to check.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def long_options(command: argparse.ArgumentParser) -> list[str]:
    return [
        opt for action in command._actions for opt in action.option_strings if opt.startswith("--") and opt != "--help"
    ]


def section(page: str, heading: str) -> str:
    """The text of *page* from *heading* to the next heading of the same level."""
    level = heading.split(" ", 1)[0]
    start = page.index(heading + "\n")
    rest = page[start + len(heading) :]
    ends = [m.start() for m in re.finditer(rf"^{level} ", rest, flags=re.MULTILINE)]
    return rest[: ends[0]] if ends else rest


def test_the_readme_is_short_and_keeps_the_two_commands_at_the_top() -> None:
    lines = README.splitlines()
    assert len(lines) <= 250, len(lines)
    setup = README.index("## Set-up: two commands")
    assert setup < README.index("## Install") < README.index("## A first run")
    assert "make crawl URL=" in README[setup:] and "make test" in README[setup:]
    # Not a second, hand-written reference: no option or setting tables.
    assert not [line for line in lines if line.startswith(("| `--", "| `SITEMAP_"))]


def test_every_local_link_of_every_page_leads_to_a_page() -> None:
    """The README's links into docs/ (and the guides' relative links) name files that exist;
    Sphinx's strict build checks the anchors within docs/ (tests/test_docs_site.py)."""
    checked = 0
    for name, text in hand_written().items():
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            assert ((ROOT / name).parent / path).resolve().exists(), (name, target)
            checked += 1
    assert checked > 30
    linked = set(LINK.findall(README))
    pages = ["install", "architecture", "benchmarks"]
    pages += [f"guides/{name}" for name in ("first-run", "output", "scheduled", "audit", "containers")]
    pages += [f"guides/{name}" for name in ("shared-crawl", "rendering")]
    assert [page for page in pages if f"docs/{page}.md" not in linked] == []


def test_every_subcommand_is_in_the_reference() -> None:
    commands = subcommands()
    assert list(commands) == ["crawl", "update", "serve", "audit", "config", "worker", "check", "validate", "coverage"]
    page = reference("commands.md")
    assert [name for name in commands if f"## `sitemap-crawler {name}`" not in page] == []


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_of_every_subcommand_is_in_the_reference(name: str) -> None:
    """In the command's own section, or in the section of an option group it takes."""
    page = reference("commands.md")
    own = section(page, f"## `sitemap-crawler {name}`")
    groups = re.findall(r"\]\(#([a-z-]+-options)\)", own)
    text = own + "".join(section(page, "## " + group.replace("-", " ").capitalize()) for group in groups)
    options = long_options(subcommands()[name])
    assert options, name
    missing = [opt for opt in options if not re.search(rf"^\| [^|]*`{re.escape(opt)}`", text, flags=re.MULTILINE)]
    assert missing == []


def test_every_subcommand_help_ends_with_an_example() -> None:
    for name, command in subcommands().items():
        assert (command.epilog or "").startswith("example:"), name
        assert f"sitemap-crawler {name}" in (command.epilog or ""), name


def test_every_sitemap_setting_is_in_the_reference_with_a_meaning() -> None:
    names = [name for name in vars(default_settings) if name.startswith("SITEMAP_")]
    assert len(names) > 10
    rows = {line.split(" | ")[0].strip("| `"): line for line in reference("settings.md").splitlines()}
    assert [name for name in names if name not in rows] == []
    # The last cell, the meaning: the settings module's comment or its option's help.
    meanings = {name: re.split(r"(?<!\\)\|", rows[name].strip())[1:-1][-1].strip() for name in names}
    assert [name for name, meaning in meanings.items() if not meaning] == []


def test_every_option_has_its_environment_name_and_config_key_in_the_reference() -> None:
    page = reference("environment.md")
    missing = [env_name(dest) for dest in option_kinds() if f"`{env_name(dest)}`" not in page]
    assert missing == []
    assert "| `--max-pages` | `SITEMAP_CRAWLER_MAX_PAGES` | `max-pages` | `SITEMAP_MAX_PAGES` |" in page
    assert [name for name in VARIABLES if f"| `{name}` |" not in page] == []


def test_every_variable_read_outside_the_options_is_in_the_table() -> None:
    """A variable the code reads by name (``environ.get("...")``, a ``*_VARIABLE`` constant) is
    listed, with what it holds."""
    read = set()
    for path in [*ROOT.glob("crawler/**/*.py"), *ROOT.glob("settings/*.py")]:
        text = path.read_text()
        read |= set(re.findall(r"environ(?:\.get\(|\[)\"([A-Z_]+)\"", text))
        read |= set(re.findall(r"^[A-Z_]+_VARIABLE = \"([A-Z_]+)\"", text, flags=re.MULTILINE))
    assert {SECRET_VARIABLE, "SITEMAP_WEBHOOK_TOKEN", "SITEMAP_STAGING_PASSWORD"} <= read
    options = {env_name(dest) for dest in option_kinds()}
    assert sorted(read - options - set(VARIABLES)) == []


def test_every_reason_and_warning_is_in_the_report_reference() -> None:
    page = reference("report.md")
    assert set(MEANINGS) == set(Reason)
    assert [r for r in Reason if f"| `{r.value}` | {MEANINGS[r].split('`')[0][:20]}" not in page] == []
    assert [code for code in WARNINGS if f"| `{code}` |" not in page] == []
    assert [field for field in REPORT_FIELDS if f"| `{field}` |" not in page] == []


def _warning_codes_in_the_code() -> set[str]:
    """Every literal code sent as a url_warning: ``code="..."``, ``warn(url, "...")`` (either
    branch of an ``a if b else c``), ``self._note(url, "...")``, ``warnings.append(("...", ...))``."""
    codes: set[str] = set()
    # The modules that send it, and the sitemap set's, whose warnings the exporter sends.
    sources = [*ROOT.glob("crawler/**/*.py"), *ROOT.glob("pipelines/*.py")]
    senders = [path for path in sources if "url_warning" in path.read_text()]
    for path in [*senders, *ROOT.glob("crawler/sitemaps/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            values = [kw.value for kw in node.keywords if kw.arg == "code"]
            if name in ("warn", "_note") and len(node.args) >= 2:
                values.append(node.args[1])
            if name == "append" and node.args and isinstance(node.args[0], ast.Tuple) and node.args[0].elts:
                values.append(node.args[0].elts[0])
            values += [part for v in values if isinstance(v, ast.IfExp) for part in (v.body, v.orelse)]
            codes |= {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return {code for code in codes if re.fullmatch(r"[a-z]+(-[a-z]+)+", code)}


def test_every_warning_code_the_code_sends_has_a_meaning() -> None:
    codes = _warning_codes_in_the_code()
    assert {"entry-cut", "entry-too-big", "sitemap-other-origin", "render-fetch", "robots-truncated"} <= codes
    assert sorted(codes - set(WARNINGS)) == []


def test_a_real_reports_fields_are_all_in_the_reference(server: SiteServer, tmp_path: Path) -> None:
    result = crawl(server.url("/"), tmp_path / "out")
    assert result.code == 0
    fields = {field for line in result.report.values() for field in line}
    assert {"url", "status", "outcome", "reason", "images", "redirect_to"} <= fields
    assert sorted(fields - set(REPORT_FIELDS)) == []


def test_every_exit_status_is_in_the_reference() -> None:
    page = reference("exit-status.md")
    assert [s for s, _, _ in EXIT_STATUSES if f"| `{s if s != 128 else '128 + N'}` |" not in page] == []
    assert [s for s, _, _ in EXIT_STATUSES] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 128]


def test_readme_commands_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"`make (\w+)", README)) | set(re.findall(r"^make (\w+)", README, flags=re.MULTILINE))
    assert {"crawl", "test", "docs"} <= targets
    for target in targets:
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), target


def test_the_guides_compose_file_is_the_one_that_runs() -> None:
    """The shared-crawl guide shows deploy/compose.yaml byte for byte: the file
    tests/test_container_shared.py runs."""
    block = guide("shared-crawl.md").split("```yaml\n", 1)[1].split("```", 1)[0]
    assert block == COMPOSE.read_text("utf-8")


def test_the_compose_file_runs_our_commands() -> None:
    """Every service of our image runs a command line our parser accepts, its secrets from the environment."""
    services = yaml.safe_load(COMPOSE.read_text("utf-8"))["services"]
    ours = {name: service for name, service in services.items() if service["image"] == "localhost/sitemap-crawler"}
    assert list(ours) == ["crawl", "worker"]
    for service in ours.values():
        assert service["build"] == ".."  # the repository's Dockerfile
        command = [
            re.sub(r"^\$\{SITE_URL(:\?[^}]*)?\}$", "https://www.example.com/", part) for part in service["command"]
        ]
        assert "https://www.example.com/" in command  # the site comes from the environment too
        parsed = build_parser().parse_args(command)
        assert parsed.command in ("crawl", "worker")
        environment = service["environment"]
        assert environment[env_name("distributed")].startswith("redis://:${REDIS_PASSWORD:?")
        assert environment[env_name("distributed")].endswith("}@redis:6379/0")
        assert environment[SECRET_VARIABLE].startswith(f"${{{SECRET_VARIABLE}:?")
    assert services["worker"]["deploy"] == {"mode": "replicated", "replicas": 2}
    # Redis asks for the password it reads from the environment, on its standard input (never in ps).
    assert "requirepass $$REDIS_PASSWORD" in services["redis"]["command"][-1]
    assert services["redis"]["build"] == {"context": ".", "dockerfile": "redis.Dockerfile"}


def test_the_audit_guide_shows_every_finding_kind_with_its_severity_and_fix() -> None:
    """One table of severities: the code's (crawler/audit/verdict.py) is the guide's."""
    text = guide("audit.md")
    table = text[text.index("**Finding kinds**") :].split("\n\n")[1].splitlines()
    for kind in Kind:
        row = next((line for line in table if line.startswith(f"| `{kind.value}` |")), None)
        assert row is not None, kind
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert (cells[1], cells[3]) == (rule(kind.value).severity.value, rule(kind.value).fix), kind


def test_the_retried_statuses_are_the_ones_named() -> None:
    """--retries and the crawling guide name the statuses Scrapy retries (RETRY_HTTP_CODES), not "5xx"."""
    from scrapy.settings import Settings

    codes = Settings({**{k: v for k, v in vars(default_settings).items() if k.isupper()}}).getlist("RETRY_HTTP_CODES")
    retries = next(a for a in subcommands()["crawl"]._actions if a.dest == "retries")
    named = {int(n) for n in re.findall(r"\d{3}", (retries.help or "").replace("502-504", "502 503 504"))}
    assert named == {int(code) for code in codes}
    assert all(str(code) in guide("crawling.md") for code in codes)


def test_a_default_named_in_an_options_help_is_the_real_one() -> None:
    """``--concurrency ... (default: 4)`` in --help (and so in the reference) is the setting's
    default: a default changed in settings/__init__.py cannot leave the help behind."""
    named = 0
    for action, setting in grouped_settings():
        found = re.search(r"\((?:default:? )?(\d+(?:\.\d+)?)\)", action.help or "")
        if found is None:
            continue
        assert float(found.group(1)) == float(getattr(default_settings, setting)), (action.dest, action.help)
        named += 1
    assert named >= 6


def test_reference_cells_escape_pipes_and_tags_but_not_code() -> None:

    text = table(["a"], [["each page's <html lang> | `<meta name=X>`"]])
    assert text.splitlines()[2] == "| each page's &lt;html lang> \\| `<meta name=X>` |"
    assert code("a`b") == "``a`b``"


def test_the_committed_reference_is_the_generated_one() -> None:
    """docs/reference/ is committed so that it reads on any forge too, and every docs build
    rewrites it from the code: a change to an option, a setting or a reason without
    `make docs` fails here, never drifts."""
    stale = [name for name in PAGES if (ROOT / "docs" / "reference" / name).read_text("utf-8") != reference(name)]
    assert stale == [], f"run `make docs` and commit docs/reference/: {stale}"
