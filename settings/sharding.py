"""How URLs are grouped into shard families (``SITEMAP_SHARD_*``), read into a strategy."""

from __future__ import annotations

import re

from scrapy.settings import BaseSettings

from crawler.failures import ConfigError
from crawler.sitemaps.naming import RESERVED_GROUPS
from crawler.state.placement import ShardStrategy
from settings.values import whole_number

__all__ = ["read_shard_strategy"]


def read_shard_strategy(settings: BaseSettings, kind: str) -> ShardStrategy:
    """The *kind* of strategy (already checked), with its sections, ID pattern and ID range."""
    return ShardStrategy(
        kind, _sections(settings), _id_pattern(settings), whole_number(settings, "SITEMAP_SHARD_ID_RANGE")
    )


def _sections(settings: BaseSettings) -> tuple[tuple[str, re.Pattern[str]], ...]:
    raw = settings.get("SITEMAP_SHARD_SECTIONS") or {}
    if isinstance(raw, str):
        raw = dict(part.split("=", 1) for part in raw.split(",") if "=" in part)
    if not isinstance(raw, dict):
        raise ConfigError("SITEMAP_SHARD_SECTIONS must map section names to URL patterns")
    sections = []
    for name, pattern in raw.items():
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", str(name)) or name in RESERVED_GROUPS:
            raise ConfigError(
                f"SITEMAP_SHARD_SECTIONS: section name {name!r} must be lower-case letters, digits, '-'"
                f" and not {' or '.join(sorted(RESERVED_GROUPS))}"
            )
        try:
            sections.append((str(name), re.compile(str(pattern))))
        except re.error as error:
            raise ConfigError(f"SITEMAP_SHARD_SECTIONS: bad regular expression for {name!r}: {error}") from None
    return tuple(sections)


def _id_pattern(settings: BaseSettings) -> re.Pattern[str] | None:
    raw = settings.get("SITEMAP_SHARD_ID_PATTERN")
    if not raw:
        if str(settings.get("SITEMAP_SHARD_STRATEGY")).lower() == "id":
            raise ConfigError("SITEMAP_SHARD_STRATEGY 'id' needs SITEMAP_SHARD_ID_PATTERN (a regex with one group)")
        return None
    try:
        pattern = re.compile(str(raw))
    except re.error as error:
        raise ConfigError(f"SITEMAP_SHARD_ID_PATTERN: bad regular expression: {error}") from None
    if pattern.groups < 1:
        raise ConfigError("SITEMAP_SHARD_ID_PATTERN needs one group that captures the numeric ID")
    return pattern
