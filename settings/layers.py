"""Settings in layers, from the command line down (SPEC S8).

Lowest first: this package's defaults, then a TOML file (``--config``: keys
named like the long options, plus a ``[settings]`` table of raw settings),
then the command-line options, then ``--set NAME=VALUE``. A mistake raises
``ValueError`` naming the option or file, which the CLI reports in one line;
so does a name nothing reads (a ``SITEMAP_CRAWLER_*`` variable, a TOML key,
a ``--set`` or ``[settings]`` name), with the closest known one.
"""

from __future__ import annotations

import argparse
import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scrapy.settings import Settings

from crawler.failures import ConfigError
from settings.environment import check_variables, env_name, from_environment, typed, unknown
from settings.options import EXTENDING, OPTION_SETTINGS, PROFILES

__all__ = ["EXTENDING", "OPTION_SETTINGS", "PROFILES", "build_layers", "build_settings", "explain", "load_config_file"]


def load_config_file(path: str, kinds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Options from a TOML file: top-level keys named like the long options,
    each checked against the option's kind when *kinds* are given."""
    try:
        # Only a regular file: opening a FIFO waits for a writer, a device may never end.
        if not stat.S_ISREG(Path(path).stat().st_mode):
            raise ConfigError(f"config file {path} is not a regular file")
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path} is not valid TOML: {error}") from None
    options: dict[str, Any] = {}
    raw_settings = data.pop("settings", {})
    for key, value in data.items():
        dest = key.replace("-", "_")
        if dest not in OPTION_SETTINGS:
            names = [name.replace("_", "-") for name in OPTION_SETTINGS]
            raise ConfigError(f"config file {path}: {unknown('option', key, names)}")
        options[dest] = typed(value, kinds[dest], f"config file {path}: {key}") if kinds and dest in kinds else value
    if not isinstance(raw_settings, dict):
        raise ConfigError(f"config file {path}: [settings] must be a table")
    options["_settings"] = raw_settings
    return options


def _profile(args: argparse.Namespace, default: str | None, environ: Mapping[str, str]) -> str | None:
    name = getattr(args, "profile", None) or environ.get(env_name("profile")) or default
    if name is not None and name not in PROFILES:
        raise ConfigError(f"profile {name!r} is not one of {', '.join(PROFILES)}")
    return name


def build_layers(
    args: argparse.Namespace,
    profile: str | None = None,
    kinds: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Settings, dict[str, str]]:
    """Scrapy settings for a ``crawl``, ``update`` or ``audit`` command line, and
    the layer each setting given came from: defaults < profile < TOML file
    (``--config`` or ``$SITEMAP_CRAWLER_CONFIG``) < ``SITEMAP_CRAWLER_*`` < options < ``--set``."""
    environ = os.environ if environ is None else environ
    if kinds:
        check_variables(environ, (env_name(dest) for dest in kinds))
    origins: dict[str, str] = {}
    settings = Settings()
    settings.setmodule("settings", priority="project")
    # Scrapy's settings and this project's: a name outside them is a misspelling, never read.
    known = frozenset(settings.attributes)
    name = _profile(args, profile, environ)
    for setting, value in PROFILES.get(name or "", {}).items():
        settings.set(setting, value, priority="project")
        origins[setting] = f"profile {name}"
    settings.set("SITEMAP_PROGRESS", not args.quiet and args.verbose < 2, priority="cmdline")
    settings.set("LOG_LEVEL", ("WARNING", "INFO", "DEBUG")[min(args.verbose, 2)], priority="cmdline")
    settings.set("LOG_FORMAT", "%(levelname)s: %(message)s", priority="cmdline")
    if args.command == "update":
        settings.set("SITEMAP_UPDATE_ADD", args.add, priority="cmdline")
        settings.set("SITEMAP_UPDATE_REMOVE", args.remove, priority="cmdline")
    given: list[tuple[str, Any, str]] = []  # (option dest, value, layer), lowest layer first
    config = args.config or environ.get(env_name("config"))
    if config:
        file_options = load_config_file(config, kinds)
        for setting, value in file_options.pop("_settings").items():
            if str(setting) not in known:
                raise ConfigError(f"config file {config} [settings]: {_unknown_setting(str(setting), known)}")
            settings.set(str(setting), value, priority="cmdline")
            origins[str(setting)] = f"config file {config} [settings]"
        given += [
            (dest, value, f"config file {config}: {dest.replace('_', '-')}") for dest, value in file_options.items()
        ]
    if kinds:
        given += [(dest, value, variable) for dest, (value, variable) in from_environment(kinds, environ).items()]
    given += [
        (dest, value, "the URL argument" if dest == "url" else "--" + dest.replace("_", "-"))
        for dest, value in vars(args).items()
        if dest in OPTION_SETTINGS and value is not None
    ]
    for dest, value, layer in given:
        setting = OPTION_SETTINGS[dest]
        if dest in EXTENDING:
            value = [*settings.getlist(setting), *value]
        elif dest == "shard_section" and isinstance(value, list):
            value = _sections(value)
        settings.set(setting, value, priority="cmdline")
        origins[setting] = layer
    for item in args.set:
        setting, sep, value = item.partition("=")
        if not sep or not setting:
            raise ConfigError(f"--set expects NAME=VALUE, not {item!r}")
        if setting.strip() not in known:
            raise ConfigError(f"--set: {_unknown_setting(setting.strip(), known)}")
        settings.set(setting.strip(), value, priority="cmdline")
        origins[setting.strip()] = "--set"
    if not settings.get("SITEMAP_START_URL"):
        raise ConfigError(f"no start URL: give URL, or set {env_name('url')} or url in the config file")
    return settings, origins


def build_settings(
    args: argparse.Namespace, profile: str | None = None, kinds: Mapping[str, str] | None = None
) -> Settings:
    """:func:`build_layers` without the origins."""
    return build_layers(args, profile, kinds)[0]


def explain(error: ValueError, origins: Mapping[str, str]) -> str:
    """*error*'s message, with the layer its setting came from (when it names one)."""
    message = str(error)
    setting = message.split(" ", 1)[0].rstrip(":")
    layer = origins.get(setting)
    return f"{message} (from {layer})" if layer and layer not in message else message


def _unknown_setting(name: str, known: frozenset[str]) -> str:
    ours = name.upper().startswith("SITEMAP_")  # compared with ours without the prefix they all share
    return unknown("setting", name, known, "SITEMAP_" if ours else "")


def _sections(values: list[str]) -> dict[str, str]:
    sections = {}
    for value in values:
        name, sep, pattern = value.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--shard-section expects NAME=REGEX, not {value!r}")
        sections[name.strip()] = pattern
    return sections
