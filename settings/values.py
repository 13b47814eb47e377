"""Typed reading of one setting, with a message naming the key (and its range) when it is wrong."""

from __future__ import annotations

import re
from typing import NoReturn

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from crawler.failures import ConfigError
from settings.ranges import RANGES, checked

__all__ = ["adapts", "check_numbers", "credentials_refused", "no_credentials", "number", "strings", "whole_number"]


def strings(settings: BaseSettings, key: str) -> list[str]:
    value = settings.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise ConfigError(f"{key} must be a list of strings, not {value!r}") from None


def whole_number(settings: BaseSettings, key: str) -> int:
    """*key*'s value, a whole number within its range (:data:`settings.ranges.RANGES`)."""
    return int(checked(key, settings.get(key)))


def number(settings: BaseSettings, key: str) -> float:
    """*key*'s value, a finite number within its range (:data:`settings.ranges.RANGES`)."""
    return float(checked(key, settings.get(key)))


def check_numbers(settings: BaseSettings) -> None:
    """Every number of the table that *settings* holds, each within its range."""
    for key in RANGES:
        if not key.startswith("-") and settings.get(key) is not None:  # "serve --update-timeout" is an option
            checked(key, settings.get(key))


def no_credentials(key: str, url: str) -> None:
    """Refuse a URL with a user or password in it (RFC 3986 userinfo, ``user:pw@host``): it
    would be echoed in messages and kept in the report and the state store, and it is not
    how the staging site's basic auth is given. The message never repeats the URL."""
    authority = url.split("://", 1)[1] if "://" in url else url.lstrip("/")
    if "@" in re.split(r"[/?#]", authority, maxsplit=1)[0]:
        credentials_refused(key)


def credentials_refused(key: str) -> NoReturn:
    """The refusal of a value with a user name or password in it, which it never repeats."""
    raise ConfigError(
        f"{key}: a URL may not hold a user name or password (user:password@host); "
        "for the staging site's HTTP basic auth give --user NAME with --password-env VAR"
    )


def adapts(settings: BaseSettings) -> bool:
    """Whether the delay follows the server (AutoThrottle): on, and no delay chosen by the user
    (a delay above the project's defaults: an option, a config file, the environment, --set)."""
    chosen = (settings.getpriority("DOWNLOAD_DELAY") or 0) > SETTINGS_PRIORITIES["project"]
    return settings.getbool("AUTOTHROTTLE_ENABLED") and not chosen
