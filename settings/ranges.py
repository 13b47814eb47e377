"""The one table of ranges: every number a setting or option may take (no Scrapy import).

A number out of its range, or not finite (``nan``, ``inf``), stops the run
before anything is fetched or written: a delay of ``1e308`` seconds is a
crawl that never ends, a timeout of ``nan`` fails every request in words no
user could act on. The generated reference (crawler/reference) shows the same
ranges (tests/test_config_checks.py holds them to it).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

from crawler.failures import ConfigError
from crawler.protocol import MAX_BYTES, MAX_IMAGES_PER_URL, MAX_LOC_LENGTH, MAX_URLS

__all__ = ["RANGES", "Range", "checked", "option_type"]


@dataclass(frozen=True, slots=True)
class Range:
    low: float
    high: float
    unit: str
    whole: bool = True  # an integer, not a float

    def describe(self) -> str:
        """``0 to 600 seconds``: as the reference and the error messages say it."""
        return f"{_figure(self.low)} to {_figure(self.high)}" + (f" {self.unit}" if self.unit else "")


def _figure(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


_PAGES = 1_000_000_000
#: Setting (or an option with no setting behind it: "--option", "COMMAND --option") -> its range.
RANGES: dict[str, Range] = {
    # The crawl's limits.
    "SITEMAP_MAX_PAGES": Range(0, _PAGES, "pages"),
    "SITEMAP_MAX_DEPTH": Range(0, 10_000, "clicks"),
    "SITEMAP_MAX_URL_LENGTH": Range(32, MAX_LOC_LENGTH, "characters"),
    "SITEMAP_MAX_QUERY_VARIANTS": Range(0, 1_000_000, "variants"),
    "SITEMAP_MAX_REDIRECTS": Range(1, 100, "hops"),
    "SITEMAP_MAX_NOT_REQUESTED": Range(0, 100_000_000, "lines"),
    "SITEMAP_MAX_CRAWL_DELAY": Range(0, 3600, "seconds", whole=False),
    "SITEMAP_MAX_HOSTS": Range(1, 10_000, "hosts"),
    "SITEMAP_MAX_PAGES_PER_HOST": Range(0, _PAGES, "pages"),
    # The sitemap set (sitemaps.org: 50,000 URLs and 50 MiB per file; Google: 1,000 images per URL).
    "SITEMAP_GZIP_LEVEL": Range(1, 9, ""),
    "SITEMAP_MAX_URLS_PER_FILE": Range(1, MAX_URLS, "URLs"),
    "SITEMAP_MAX_BYTES_PER_FILE": Range(1024, MAX_BYTES, "bytes"),
    "SITEMAP_MAX_IMAGES_PER_URL": Range(0, MAX_IMAGES_PER_URL, "images"),
    "SITEMAP_IMAGE_MAX_PAGES": Range(0, _PAGES, "pages"),
    "SITEMAP_SHARD_ID_RANGE": Range(1, 1_000_000_000_000, "IDs"),
    "SITEMAP_DELTA_ROTATE": Range(1, 1000, "runs"),
    "SITEMAP_INDEXNOW_BATCH": Range(1, 10_000, "URLs"),
    "SITEMAP_INDEXNOW_TIMEOUT": Range(0.1, 600, "seconds", whole=False),
    # A shared crawl.
    "SITEMAP_WORKERS": Range(0, 64, "processes"),  # more only fight over the cores and the site
    "SITEMAP_LEASE_SECONDS": Range(1, 3600, "seconds", whole=False),
    "SITEMAP_IDLE_GRACE": Range(0.1, 600, "seconds", whole=False),
    "SITEMAP_SHARED_DELAY": Range(0, 600, "seconds", whole=False),
    "SITEMAP_SHARED_MAX_PAGES": Range(0, _PAGES, "pages"),
    # Rendering: pages in the browser at once (each a Chromium renderer, ~50-100 MB), virtual time.
    "SITEMAP_RENDER_PAGES": Range(1, 32, "pages"),
    "SITEMAP_RENDER_MAX_REQUESTS": Range(1, 100_000, "requests"),
    "SITEMAP_RENDER_MAX_MEMORY": Range(64, 65_536, "MB"),
    "SITEMAP_MAX_SHRINK": Range(0, 100, "percent", whole=False),
    "SITEMAP_CHECK_WAIT": Range(0, 600, "seconds", whole=False),
    "SITEMAP_RENDER_WAIT_BUDGET": Range(0.1, 120, "seconds", whole=False),
    # The staging audit.
    "SITEMAP_AUDIT_DEEP_THRESHOLD": Range(0, 10_000, "clicks"),
    "SITEMAP_SAME_LASTMOD_SHARE": Range(50, 100, "percent"),  # a majority, or it is no pattern
    # Scrapy's, behind --concurrency, --delay, --timeout and --retries, and the speed's.
    "CONCURRENT_REQUESTS": Range(1, 1000, "requests"),
    "CONCURRENT_REQUESTS_PER_DOMAIN": Range(1, 1000, "requests"),
    "DOWNLOAD_DELAY": Range(0, 600, "seconds", whole=False),
    "DOWNLOAD_TIMEOUT": Range(0.001, 3600, "seconds", whole=False),
    "DOWNLOAD_MAXSIZE": Range(0, 4 * 1024**3, "bytes"),
    "DOWNLOAD_WARNSIZE": Range(0, 4 * 1024**3, "bytes"),
    "RETRY_TIMES": Range(0, 20, "retries"),
    "AUTOTHROTTLE_START_DELAY": Range(0, 600, "seconds", whole=False),
    "AUTOTHROTTLE_MAX_DELAY": Range(0, 3600, "seconds", whole=False),
    "AUTOTHROTTLE_TARGET_CONCURRENCY": Range(0.1, 1000, "requests", whole=False),
    # Options with no setting behind them.
    "validate --timeout": Range(0.1, 600, "seconds", whole=False),
    "check --sample": Range(0, 100_000, "URLs"),
    "check --timeout": Range(0.1, 600, "seconds", whole=False),
    "check --deadline": Range(1, 86_400, "seconds", whole=False),
    "serve --update-timeout": Range(1, 86_400, "seconds", whole=False),
    "worker --wait": Range(0, 86_400, "seconds", whole=False),
    "coverage --days": Range(1, 3660, "days"),
    "coverage --jobs": Range(1, 256, "processes"),
}


def checked(name: str, value: object) -> float:
    """*value* as the number *name* takes (an ``int`` for a whole number), or ``ValueError``
    naming *name* and its range. Text is read as the command line would read it."""
    span = RANGES[name]
    kind = "a whole number" if span.whole else "a number"
    number = _parse(value, span.whole)
    if number is None:
        raise ConfigError(f"{name} must be {kind} ({span.describe()}), not {_shown(value)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError(f"{name} must be a finite number ({span.describe()}), not {number}")
    if number < span.low:
        raise ConfigError(f"{name} must be at least {_figure(span.low)} ({span.describe()}), not {_shown(number)}")
    if number > span.high:
        raise ConfigError(f"{name} must be at most {_figure(span.high)} ({span.describe()}), not {_shown(number)}")
    return number


def _shown(value: object) -> str:
    """*value* for a one-line message: a pasted megabyte stays a few words."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def option_type(name: str) -> Callable[[str], float]:
    """An argparse ``type`` for the option *name* of the table: its error reads
    ``argument --timeout: must be a finite number (0.1 to 600 seconds), not nan``."""

    def read(text: str) -> float:
        try:
            return checked(name, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix(name + " ")) from None

    return read


def _parse(value: object, whole: bool) -> float | None:
    if isinstance(value, bool):  # True is an int to Python, not a count to anyone
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text) if whole else float(text)
        except ValueError:
            return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if whole and math.isfinite(value) and not value.is_integer():
            return None
        return int(value) if whole and math.isfinite(value) else value
    return None
