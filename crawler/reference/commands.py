"""The command-line reference: every command, its options, their values, ranges and defaults,
and the environment variables and config-file keys that stand for them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import settings as defaults
from crawler.cli.parser import add_audit_options, add_crawl_options, build_parser
from crawler.cli.publishing import add_publishing_options
from crawler.reference.markdown import GENERATED, code, prose, table
from settings.environment import ENV_PREFIX, VARIABLES, env_name
from settings.options import OPTION_SETTINGS, PROFILES
from settings.ranges import RANGES

__all__ = ["commands_page", "environment_page", "grouped_settings", "long_name", "option_groups", "subcommands"]

#: The option groups several commands share, each documented once: (title, anchor, builder).
GROUPS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None]], ...] = (
    ("Crawl options", "crawl-options", add_crawl_options),
    ("Publishing options", "publishing-options", add_publishing_options),
    ("Audit options", "audit-options", add_audit_options),
)


def _commands_action() -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The parser's subcommands (argparse has no public way to list them)."""
    return next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))


def subcommands() -> dict[str, argparse.ArgumentParser]:
    return dict(_commands_action().choices)


def _synopsis(name: str, parser: argparse.ArgumentParser) -> str:
    """``sitemap-crawler crawl [URL] [options]``: the positionals, the options summed up."""
    words = []
    for action in _actions(parser):
        if not action.option_strings:
            shown_name = action.metavar or (action.dest.upper() if not action.choices else "|".join(action.choices))
            words.append(f"[{shown_name}]" if action.nargs == "?" else str(shown_name))
    return " ".join(["sitemap-crawler", name, *words, "[options]"])


def _summaries() -> dict[str, str]:
    """Command -> its one-line help, as ``sitemap-crawler --help`` lists it."""
    return {choice.dest: choice.help or "" for choice in _commands_action()._choices_actions}


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def option_groups() -> dict[str, set[str]]:
    """Group anchor -> the dests of its options."""
    groups = {}
    for _, anchor, build in GROUPS:
        probe = argparse.ArgumentParser(add_help=False)
        build(probe)
        groups[anchor] = {a.dest for a in _actions(probe)}
    return groups


def long_name(action: argparse.Action) -> str:
    """``--max-pages``; ``URL`` for the start URL, the one positional of the groups."""
    return next((name for name in action.option_strings if name.startswith("--")), "URL")


def grouped_settings() -> list[tuple[argparse.Action, str]]:
    """Every option of the shared groups that stands for a setting, with that setting."""
    probe = argparse.ArgumentParser(add_help=False)
    for _, _, build in GROUPS:
        build(probe)
    return [(a, OPTION_SETTINGS[a.dest]) for a in _actions(probe) if a.dest in OPTION_SETTINGS]


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(action.metavar or action.dest.upper())
    return ", ".join(code(name) for name in action.option_strings)


def _setting(action: argparse.Action, grouped: bool) -> str | None:
    """The setting behind *action*: only the shared groups' options stand for settings (a
    command's own ``--timeout`` is not DOWNLOAD_TIMEOUT)."""
    return OPTION_SETTINGS.get(action.dest) if grouped else None


def _range_of(command: str, action: argparse.Action, grouped: bool) -> str:
    long = long_name(action)
    for key in (_setting(action, grouped), f"{command} {long}", long):
        if key and key in RANGES:
            return RANGES[key].describe()
    return ""


def _takes(command: str, action: argparse.Action, grouped: bool) -> str:
    if action.nargs == 0 or isinstance(action, argparse._CountAction):
        words = ["flag"]
    elif action.choices:
        words = [", ".join(code(choice) for choice in action.choices)]
    else:
        words = [code(action.metavar or action.dest.upper())]
    span = _range_of(command, action, grouped)
    if span:
        words.append(span)
    if isinstance(action, argparse._AppendAction):
        words.append("repeatable")
    return "; ".join(words)


def shown(value: object) -> str:
    """A default as a user writes it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list | tuple):
        return ", ".join(code(item) for item in value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(code(f"{key}={item}") for key, item in value.items()) if value else "none"
    if value == "":
        return "none"
    return code(value)


def _profiled(setting: str) -> str:
    """The profiles that change *setting*'s default, as ``(profile live: 50.0)``."""
    changed = [f"{name}: {shown(values[setting])}" for name, values in PROFILES.items() if setting in values]
    return f" (profile {'; '.join(changed)})" if changed else ""


def _default(action: argparse.Action, grouped: bool) -> str:
    if isinstance(action, argparse._StoreFalseAction | argparse._StoreTrueAction | argparse._CountAction):
        return "off"  # a flag not given (what it stands for: its meaning, and the setting's default)
    setting = _setting(action, grouped)
    if setting == "DOWNLOAD_DELAY" and defaults.AUTOTHROTTLE_ENABLED:
        # No fixed delay: the pace adapts to the server, from AUTOTHROTTLE_START_DELAY.
        return f"adaptive, from {defaults.AUTOTHROTTLE_START_DELAY:g} s" + _profiled(setting)
    if setting is not None:
        return shown(getattr(defaults, setting, None)) + _profiled(setting)
    if action.required:
        return "required"
    if action.default in (None, argparse.SUPPRESS) or action.default == []:
        return "none"
    return shown(action.default)


def _option_table(command: str, actions: list[argparse.Action], grouped: bool = False) -> str:
    rows = ([_names(a), _takes(command, a, grouped), _default(a, grouped), a.help or ""] for a in actions)
    return table(["option", "takes", "default", "meaning"], rows)


def commands_page() -> str:
    commands = subcommands()
    groups = option_groups()
    out = [GENERATED, "# Commands and options\n\n"]
    out.append(
        "Every command, as `sitemap-crawler COMMAND --help` prints it, with each option's values, range and "
        "default. An option that stands for a setting can also be given as an environment variable or a "
        "config-file key ([](environment.md)); the settings behind them are in [](settings.md). A default "
        "is the package's; `crawl` and `update` start from the `live` profile and `audit` from `audit`, "
        "noted where a profile changes it.\n\n"
    )
    out.append("| command | what it does |\n|---|---|\n")
    for name, summary in _summaries().items():
        out.append(f"| [`{name}`](#sitemap-crawler-{name}) | {summary} |\n")
    out.append("\n")
    for name, parser in commands.items():
        out.append(f"## `sitemap-crawler {name}`\n\n")
        out.append(f"```text\n{_synopsis(name, parser)}\n```\n\n")
        if parser.description:
            out.append(prose(parser.description) + "\n\n")
        dests = {a.dest for a in _actions(parser)}
        shared = [(title, anchor) for title, anchor, _ in GROUPS if groups[anchor] <= dests]
        taken = set().union(*(groups[anchor] for _, anchor in shared)) if shared else set()
        own = [a for a in _actions(parser) if a.dest not in taken]
        if shared:
            links = [f"[{title.split()[0].lower()}](#{anchor})" for title, anchor in shared]
            listed = links[0] if len(links) == 1 else ", ".join(links[:-1]) + " and " + links[-1]
            out.append(f"Takes the options of {listed}" + (", and:\n\n" if own else ".\n\n"))
        if own:
            out.append(_option_table(name, own) + "\n")
        if parser.epilog:
            out.append("```text\n" + parser.epilog.strip() + "\n```\n\n")
    for title, anchor, build in GROUPS:
        group = argparse.ArgumentParser(add_help=False)
        build(group)
        users = [name for name, parser in commands.items() if groups[anchor] <= {a.dest for a in _actions(parser)}]
        out.append(f"## {title}\n\n")
        out.append(f"Taken by {', '.join(code(user) for user in users)}.\n\n")
        out.append(_option_table(users[0], _actions(group), grouped=True) + "\n")
    return "".join(out)


def environment_page() -> str:
    # A config-file key is the option's dest, hyphenated (settings.layers reads it back so).
    rows = [
        [code(long_name(action)), code(env_name(action.dest)), code(action.dest.replace("_", "-")), code(setting)]
        for action, setting in grouped_settings()
    ]
    out = [GENERATED, "# Environment variables and config-file keys\n\n"]
    out.append(
        "Every option that stands for a setting is read, lowest first, from the package defaults, the "
        "profile, a TOML file (`--config FILE`, keys as below, any setting in a `[settings]` table), the "
        f"environment (`{ENV_PREFIX}<OPTION>`), the command line and `--set NAME=VALUE`. Lists are "
        "comma-separated in the environment; flags are `true`/`false` (or `1`/`0`, `yes`/`no`, "
        "`on`/`off`). A `SITEMAP_CRAWLER_*` variable, config-file key or `--set` name that nothing "
        "reads stops the run, with the closest known one (a setting's own name, `SITEMAP_MAX_PAGES`, is not "
        "an environment variable: `SITEMAP_CRAWLER_MAX_PAGES` is).\n\n"
    )
    out.append(table(["option", "environment", "config-file key", "setting"], rows) + "\n")
    out.append("## Other variables\n\n")
    out.append(table(["variable", "what it holds"], ([code(name), meaning] for name, meaning in VARIABLES.items())))
    return "".join(out)
