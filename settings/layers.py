"""Settings in layers, from the command line down (SPEC S8).

Lowest first: this package's defaults, then a TOML file (``--config``: keys
named like the long options, plus a ``[settings]`` table of raw settings),
then the command-line options, then ``--set NAME=VALUE``. A mistake raises
``ValueError`` naming the option or file, which the CLI reports in one line.
"""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Mapping
from typing import Any

from scrapy.settings import Settings

from settings.environment import env_name, from_environment, typed

__all__ = ["EXTENDING", "OPTION_SETTINGS", "PROFILES", "build_layers", "build_settings", "explain", "load_config_file"]

# Options that map one-to-one onto a setting: option dest -> setting name.
OPTION_SETTINGS = {
    "out": "SITEMAP_OUTPUT_DIR",
    "base_url": "SITEMAP_BASE_URL",
    "report": "SITEMAP_REPORT_PATH",
    "basename": "SITEMAP_BASENAME",
    "gzip": "SITEMAP_GZIP",
    "max_pages": "SITEMAP_MAX_PAGES",
    "max_depth": "SITEMAP_MAX_DEPTH",
    "max_url_length": "SITEMAP_MAX_URL_LENGTH",
    "max_query_variants": "SITEMAP_MAX_QUERY_VARIANTS",
    "max_redirects": "SITEMAP_MAX_REDIRECTS",
    "max_not_requested": "SITEMAP_MAX_NOT_REQUESTED",
    "max_urls_per_file": "SITEMAP_MAX_URLS_PER_FILE",
    "max_bytes_per_file": "SITEMAP_MAX_BYTES_PER_FILE",
    "user_agent": "USER_AGENT",
    "robots_token": "SITEMAP_ROBOTS_TOKEN",
    "concurrency": "CONCURRENT_REQUESTS_PER_DOMAIN",
    "delay": "DOWNLOAD_DELAY",
    "timeout": "DOWNLOAD_TIMEOUT",
    "retries": "RETRY_TIMES",
    "include": "SITEMAP_INCLUDE",
    "exclude": "SITEMAP_EXCLUDE",
    "allow_type": "SITEMAP_ALLOWED_CONTENT_TYPES",
    "strip_param": "SITEMAP_STRIP_QUERY_PARAMS",
    "follow_nofollow": "SITEMAP_FOLLOW_NOFOLLOW",
    "images": "SITEMAP_IMAGES",
    "videos": "SITEMAP_VIDEOS",
    "hreflang": "SITEMAP_HREFLANG",
    "max_images_per_url": "SITEMAP_MAX_IMAGES_PER_URL",
    "image_max_pages": "SITEMAP_IMAGE_MAX_PAGES",
    "news_name": "SITEMAP_NEWS_NAME",
    "news_language": "SITEMAP_NEWS_LANGUAGE",
    "news_pattern": "SITEMAP_NEWS_PATTERNS",
    "state": "SITEMAP_STATE_PATH",
    "use_state": "SITEMAP_STATE",
    "resume": "SITEMAP_RESUME",
    "fingerprint_ignore": "SITEMAP_FINGERPRINT_IGNORE",
    "shard_strategy": "SITEMAP_SHARD_STRATEGY",
    "shard_section": "SITEMAP_SHARD_SECTIONS",
    "shard_id_pattern": "SITEMAP_SHARD_ID_PATTERN",
    "shard_id_range": "SITEMAP_SHARD_ID_RANGE",
    "compact": "SITEMAP_COMPACT",
    "delta": "SITEMAP_DELTA",
    "delta_rotate": "SITEMAP_DELTA_ROTATE",
    "removals": "SITEMAP_REMOVALS_PATH",
    "overwrite_foreign": "SITEMAP_OVERWRITE_FOREIGN",
    "indexnow_endpoint": "SITEMAP_INDEXNOW_ENDPOINT",
    "indexnow_key": "SITEMAP_INDEXNOW_KEY",
    "indexnow_key_location": "SITEMAP_INDEXNOW_KEY_LOCATION",
    "production_url": "SITEMAP_PRODUCTION_URL",
    "user": "SITEMAP_STAGING_USER",
    "password": "SITEMAP_STAGING_PASSWORD",
    "password_env": "SITEMAP_STAGING_PASSWORD_ENV",
    "header": "SITEMAP_STAGING_HEADERS",
    "cookie": "SITEMAP_STAGING_COOKIES",
    "url": "SITEMAP_START_URL",
    "log_format": "SITEMAP_LOG_FORMAT",
    "distributed": "SITEMAP_DISTRIBUTED",
    "workers": "SITEMAP_WORKERS",
}
#: Settings a command starts from, over the defaults and under everything the user gives.
PROFILES: dict[str, dict[str, Any]] = {
    # A site crawled on a schedule (the defaults): a state store for honest lastmod.
    "live": {"SITEMAP_STATE": True},
    # A container: everything under the /data volume, JSON logs, no terminal progress line.
    "container": {
        "SITEMAP_OUTPUT_DIR": "/data/sitemaps",
        "SITEMAP_LOG_FORMAT": "json",
    },
    # A one-off audit of a staging site: no state store (nothing to compare with next
    # time), every URL never requested still written to the report, a little faster.
    "audit": {"SITEMAP_STATE": False, "SITEMAP_MAX_NOT_REQUESTED": 1_000_000, "DOWNLOAD_DELAY": 0.1},
}
# List options that add to the default list instead of replacing it.
EXTENDING = {"allow_type", "strip_param"}


def load_config_file(path: str, kinds: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Options from a TOML file: top-level keys named like the long options,
    each checked against the option's kind when *kinds* are given."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ValueError(f"cannot read config file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"config file {path} is not valid TOML: {error}") from None
    options: dict[str, Any] = {}
    raw_settings = data.pop("settings", {})
    for key, value in data.items():
        dest = key.replace("-", "_")
        if dest not in OPTION_SETTINGS:
            raise ValueError(f"config file {path}: unknown option {key!r}")
        options[dest] = typed(value, kinds[dest], f"config file {path}: {key}") if kinds and dest in kinds else value
    if not isinstance(raw_settings, dict):
        raise ValueError(f"config file {path}: [settings] must be a table")  # noqa: TRY004 - a user mistake
    options["_settings"] = raw_settings
    return options


def _profile(args: argparse.Namespace, default: str | None, environ: Mapping[str, str]) -> str | None:
    name = getattr(args, "profile", None) or environ.get(env_name("profile")) or default
    if name is not None and name not in PROFILES:
        raise ValueError(f"profile {name!r} is not one of {', '.join(PROFILES)}")
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
    origins: dict[str, str] = {}
    settings = Settings()
    settings.setmodule("settings", priority="project")
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
            settings.set(str(setting), value, priority="cmdline")
            origins[str(setting)] = f"config file {config} [settings]"
        given += [(dest, value, f"config file {config}") for dest, value in file_options.items()]
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
            raise ValueError(f"--set expects NAME=VALUE, not {item!r}")
        settings.set(setting.strip(), value, priority="cmdline")
        origins[setting.strip()] = "--set"
    if not settings.get("SITEMAP_START_URL"):
        raise ValueError(f"no start URL: give URL, or set {env_name('url')} or url in the config file")
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


def _sections(values: list[str]) -> dict[str, str]:
    sections = {}
    for value in values:
        name, sep, pattern = value.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--shard-section expects NAME=REGEX, not {value!r}")
        sections[name.strip()] = pattern
    return sections
