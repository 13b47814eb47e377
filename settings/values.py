"""Typed reading of one setting, with a message naming the key when it is wrong."""

from __future__ import annotations

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

__all__ = ["number", "strings", "whole_number"]


def strings(settings: BaseSettings, key: str) -> list[str]:
    value = settings.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    try:
        return [str(v) for v in value]
    except TypeError:
        raise ValueError(f"{key} must be a list of strings, not {value!r}") from None


def whole_number(settings: BaseSettings, key: str, low: int, high: int | None = None) -> int:
    try:
        value = int(settings.get(key))
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a whole number, not {settings.get(key)!r}") from None
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{key} must be {bounds}, not {value}")
    return value


def number(settings: BaseSettings, key: str, low: float) -> float:
    try:
        value = float(settings.get(key))
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, not {settings.get(key)!r}") from None
    if value < low:
        raise ValueError(f"{key} must be at least {low}, not {value}")
    return value


def adapts(settings: BaseSettings) -> bool:
    """Whether the delay follows the server (AutoThrottle): on, and no delay chosen by the user
    (a delay above the project's defaults: an option, a config file, the environment, --set)."""
    chosen = (settings.getpriority("DOWNLOAD_DELAY") or 0) > SETTINGS_PRIORITIES["project"]
    return settings.getbool("AUTOTHROTTLE_ENABLED") and not chosen
