"""The README is a contract: every option and setting is documented there."""

from __future__ import annotations

import re
from pathlib import Path

import settings as default_settings
from crawler.cli import build_parser

README = (Path(__file__).parent.parent / "README.md").read_text("utf-8")


def crawl_options() -> list[str]:
    parser = build_parser()
    crawl = parser._subparsers._group_actions[0].choices["crawl"]  # type: ignore[union-attr]
    return [
        opt for action in crawl._actions for opt in action.option_strings if opt.startswith("--") and opt != "--help"
    ]


def test_every_crawl_option_is_in_the_readme() -> None:
    missing = [opt for opt in crawl_options() if f"`{opt}" not in README]
    assert missing == []


def test_every_sitemap_setting_is_in_the_readme() -> None:
    names = [name for name in vars(default_settings) if name.startswith("SITEMAP_")]
    assert len(names) > 10
    missing = [name for name in names if f"`{name}`" not in README]
    assert missing == []


def test_readme_commands_exist() -> None:
    makefile = (Path(__file__).parent.parent / "Makefile").read_text()
    for target in re.findall(r"^\s*make (\w+)", README, flags=re.MULTILINE):
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), target
