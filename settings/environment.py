"""Options from environment variables and TOML files, typed like the command line (SPEC S8).

Every long option ``--max-pages`` has an environment variable
``SITEMAP_CRAWLER_MAX_PAGES``; lists are comma-separated, flags are
``true``/``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``). A value
that is not of the option's kind stops with one line naming the variable
(or the file and key) and the value; a ``SITEMAP_CRAWLER_*`` variable that
nothing reads (a misspelling) stops too, with the closest known name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from crawler.failures import ConfigError

__all__ = [
    "ENV_PREFIX",
    "KINDS",
    "OTHER_VARIABLES",
    "VARIABLES",
    "check_variables",
    "env_name",
    "from_environment",
    "typed",
    "unknown",
]

ENV_PREFIX = "SITEMAP_CRAWLER_"
#: Variables read besides ``SITEMAP_CRAWLER_<OPTION>``, and what they hold (the reference lists them).
VARIABLES = {
    ENV_PREFIX + "CONFIG": "the TOML file of `--config`",
    ENV_PREFIX + "PROFILE": "the profile of `--profile`",
    ENV_PREFIX + "SHARED_SECRET": "the shared crawl's secret, on the coordinator and every worker; never a "
    "setting, never in Redis",
    ENV_PREFIX + "STAGING_ACCESS": "a local worker's copy of its coordinator's staging credentials, set by "
    "`crawl --workers N`; never a setting, never in Redis",
    "SITEMAP_STAGING_USER": "`audit`, a crawl with `--production-url` and its workers: the staging site's "
    "basic-auth user, when `--user` is not given",
    "SITEMAP_STAGING_PASSWORD": "the same: its password, when neither `--password` nor `--password-env` is given",
    "SITEMAP_STAGING_COOKIE": "the same: one more `NAME=VALUE` cookie for the staging origins",
    "SITEMAP_WEBHOOK_TOKEN": "`serve`: the webhook's shared secret, when `--token` is not given",
}
#: ``SITEMAP_CRAWLER_*`` variables that are not options with a setting.
OTHER_VARIABLES = frozenset(name for name in VARIABLES if name.startswith(ENV_PREFIX))
#: The kinds an option value can be, as the command line parses them.
KINDS = ("bool", "int", "float", "list", "str")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def env_name(dest: str) -> str:
    """``max_pages`` -> ``SITEMAP_CRAWLER_MAX_PAGES``."""
    return ENV_PREFIX + dest.upper()


def _from_text(text: str, kind: str, where: str) -> Any:
    value = text.strip()
    if kind == "bool":
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise ConfigError(f"{where}: not true or false: {text!r}")
    if kind == "int":
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"{where}: not an integer: {text!r}") from None
    if kind == "float":
        try:
            return float(value)
        except ValueError:
            raise ConfigError(f"{where}: not a number: {text!r}") from None
    if kind == "list":
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def typed(value: Any, kind: str, where: str) -> Any:
    """A TOML value checked against the option's kind (a string is read as the environment's would be)."""
    if isinstance(value, str):
        return _from_text(value, kind, where)
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "list" and isinstance(value, list) and all(isinstance(item, str | int | float) for item in value):
        return [str(item) for item in value]
    expected = {"bool": "true or false", "int": "an integer", "float": "a number", "list": "a list", "str": "a string"}
    raise ConfigError(f"{where}: not {expected[kind]}: {value!r}")


def unknown(what: str, name: str, known: Iterable[str], prefix: str = "") -> str:
    """``unknown WHAT 'NAME' (did you mean 'OTHER'?)``, with the closest known name when one is
    close. Names are compared without *prefix*, which would make any two look alike."""
    tails = {other.removeprefix(prefix): other for other in known if other.startswith(prefix)}
    tail = name.upper().removeprefix(prefix)
    close = difflib.get_close_matches(tail, sorted(tails), n=1) or difflib.get_close_matches(name, sorted(tails), n=1)
    return f"unknown {what} {name!r}" + (f" (did you mean {tails[close[0]]!r}?)" if close else "")


def check_variables(environ: Mapping[str, str], known: Iterable[str]) -> None:
    """Refuse a ``SITEMAP_CRAWLER_*`` variable nobody reads: a misspelt one would be ignored
    without a word, and the run would not be the one asked for."""
    names = frozenset(known) | OTHER_VARIABLES
    for name in sorted(environ):
        if name.startswith(ENV_PREFIX) and name not in names:
            raise ConfigError(unknown("environment variable", name, names, ENV_PREFIX) + ": nothing reads it")


def from_environment(kinds: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    """{option dest: (typed value, variable name)} for every ``SITEMAP_CRAWLER_*`` variable set."""
    found = {}
    for dest, kind in kinds.items():
        name = env_name(dest)
        if name in environ:
            found[dest] = (_from_text(environ[name], kind, name), name)
    return found
