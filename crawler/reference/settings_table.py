"""The settings reference: every ``SITEMAP_*`` setting of the settings module, with its default,
range, the option that sets it and its meaning, and the Scrapy settings our options and ranges
touch. Meanings are the settings module's own comments (read with :mod:`tokenize`), else the
help of the option behind the setting."""

from __future__ import annotations

import inspect
import io
import re
import tokenize
from dataclasses import dataclass

import settings as defaults
from crawler.reference.commands import grouped_settings, long_name, shown
from crawler.reference.markdown import GENERATED, code, table
from settings.options import OPTION_SETTINGS, PROFILES
from settings.ranges import RANGES

__all__ = ["Setting", "settings_page", "sitemap_settings"]

_SCRAPY_DOCS = "https://docs.scrapy.org/en/latest/topics/settings.html#std-setting-"


@dataclass(frozen=True)
class Setting:
    name: str
    section: str  # the comment line heading its block in the settings module
    comment: str  # its trailing comment


def sitemap_settings() -> list[Setting]:
    """The ``SITEMAP_*`` settings in the settings module's order, with their comments."""
    source = inspect.getsource(defaults)
    found: list[Setting] = []
    section, pending = "", ""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.line.strip().startswith("#"):
            text = token.string.lstrip("#").strip().strip("-").strip()
            section = re.sub(r"\s*\(SPEC S\d+\)", "", text).rstrip(".") if text else section
        elif token.type == tokenize.NAME and token.start[1] == 0 and token.string.startswith("SITEMAP_"):
            pending = token.string
        elif token.type == tokenize.COMMENT and pending:
            found.append(Setting(pending, section, token.string.lstrip("#").strip()))
            pending = ""
        elif token.type == tokenize.NEWLINE and pending:
            found.append(Setting(pending, section, ""))
            pending = ""
    return found


def _options_of() -> dict[str, tuple[str, str]]:
    """Setting -> (its long option, the option's help)."""
    return {setting: (long_name(action), action.help or "") for action, setting in grouped_settings()}


def _meaning(setting: Setting, option: tuple[str, str] | None) -> str:
    """The settings module's comment, written about the setting; its option's help when the
    comment only gives the default (``# default: the root of the crawled site``) or is missing."""
    if option and (not setting.comment or setting.comment.startswith("default:")):
        return option[1]
    return setting.comment


def _kind(value: object) -> str:
    return {bool: "bool", int: "int", float: "float", str: "text", list: "list", dict: "table"}.get(type(value), "text")


def settings_page() -> str:
    options = _options_of()
    out = [GENERATED, "# Settings\n\n"]
    out.append(
        "Every `SITEMAP_*` setting, read once into a validated configuration (`settings/config.py`); a bad "
        "value stops the run with a message naming the setting. Defaults live in `settings/__init__.py`, "
        "the Scrapy settings module. Give one with its option, in a config file's `[settings]` table, "
        "with `--set NAME=VALUE`, or `-s NAME=VALUE` under `scrapy crawl site`.\n\n"
    )
    section = None
    rows: list[list[str]] = []
    for setting in sitemap_settings():
        if setting.section != section:
            if rows:
                out.append(table(["setting", "type", "default", "option", "meaning"], rows) + "\n")
                rows = []
            section = setting.section
            out.append(f"## {section}\n\n")
        value = getattr(defaults, setting.name)
        span = RANGES.get(setting.name)
        # A number unset by default (None) is still a number: its range says which kind.
        kind = ("int" if span.whole else "float") if value is None and span else _kind(value)
        kind += f", {span.describe()}" if span else ""
        option = options.get(setting.name)
        rows.append(
            [code(setting.name), kind, shown(value), code(option[0]) if option else "", _meaning(setting, option)]
        )
    if rows:
        out.append(table(["setting", "type", "default", "option", "meaning"], rows) + "\n")
    out.append("## Scrapy's settings\n\n")
    out.append("The Scrapy settings an option stands for or a range guards, with this project's defaults.\n\n")
    scrapy_names = sorted(
        {name for name in [*OPTION_SETTINGS.values(), *RANGES] if name.isupper() and not name.startswith("SITEMAP_")}
    )
    out.append(
        table(
            ["setting", "range", "default", "option"],
            (
                [
                    f"[`{name}`]({_SCRAPY_DOCS}{name})",
                    RANGES[name].describe() if name in RANGES else "",
                    shown(getattr(defaults, name, None)),
                    code(options[name][0]) if name in options else "",
                ]
                for name in scrapy_names
            ),
        )
        + "\n"
    )
    out.append("## Profiles\n\n")
    out.append(
        "`--profile NAME` (or `SITEMAP_CRAWLER_PROFILE`) starts from these values, over the defaults and "
        "under everything else; `crawl` and `update` start from `live`, `audit` from `audit`.\n\n"
    )
    out.append(
        table(
            ["profile", "settings"],
            (
                [code(name), ", ".join(code(f"{k} = {v!r}") for k, v in values.items())]
                for name, values in PROFILES.items()
            ),
        )
    )
    return "".join(out)
