"""The README is a contract: every option and setting is documented there."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

import settings as default_settings
from crawler.audit.findings import Kind
from crawler.audit.verdict import rule
from crawler.cli import build_parser
from settings.distributed import SECRET_VARIABLE
from settings.environment import env_name

README = (Path(__file__).parent.parent / "README.md").read_text("utf-8")
COMPOSE = Path(__file__).parent.parent / "deploy" / "compose.yaml"


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return dict(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def long_options(command: argparse.ArgumentParser) -> list[str]:
    return [
        opt for action in command._actions for opt in action.option_strings if opt.startswith("--") and opt != "--help"
    ]


def test_every_subcommand_is_in_the_readme() -> None:
    commands = subcommands()
    assert set(commands) == {"crawl", "update", "serve", "validate", "check", "audit", "config", "worker"}
    missing = [name for name in commands if f"sitemap-crawler {name}" not in README]
    assert missing == []


@pytest.mark.parametrize("name", ["crawl", "update", "serve", "validate", "check", "audit", "config", "worker"])
def test_every_option_of_every_subcommand_is_in_the_readme(name: str) -> None:
    options = long_options(subcommands()[name])
    assert options, name
    missing = [opt for opt in options if f"`{opt}" not in README]
    assert missing == []


def test_every_subcommand_help_ends_with_an_example() -> None:
    for name, command in subcommands().items():
        assert (command.epilog or "").startswith("example:"), name
        assert f"sitemap-crawler {name}" in (command.epilog or ""), name


def test_every_sitemap_setting_is_in_the_readme() -> None:
    names = [name for name in vars(default_settings) if name.startswith("SITEMAP_")]
    assert len(names) > 10
    missing = [name for name in names if f"`{name}`" not in README]
    assert missing == []


def test_readme_commands_exist() -> None:
    makefile = (Path(__file__).parent.parent / "Makefile").read_text()
    for target in re.findall(r"^\s*make (\w+)", README, flags=re.MULTILINE):
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), target


def test_every_option_has_its_environment_name_in_the_readme() -> None:
    from crawler.cli.parser import option_kinds
    from settings.environment import env_name

    missing = [env_name(dest) for dest in option_kinds() if f"`{env_name(dest)}`" not in README]
    assert missing == []


def test_the_readmes_compose_file_is_the_one_that_runs() -> None:
    """The README shows deploy/compose.yaml byte for byte: the file tests/test_container_shared.py runs."""
    block = README.split("```yaml\n", 1)[1].split("```", 1)[0]
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


def test_the_readme_shows_every_finding_kind_with_its_severity_and_fix() -> None:
    """One table of severities: the code's (crawler/audit/verdict.py) is the README's."""
    table = README[README.index("**Finding kinds**") :].split("\n\n")[1].splitlines()
    for kind in Kind:
        row = next((line for line in table if line.startswith(f"| `{kind.value}` |")), None)
        assert row is not None, kind
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert (cells[1], cells[3]) == (rule(kind.value).severity.value, rule(kind.value).fix), kind
