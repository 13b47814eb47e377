"""Settings of rendering (SPEC S9): which pages go to the browser, and which browser.

Read and checked before the crawl, so a missing browser is a usage error
before anything is fetched; Playwright itself is imported only once a page
is rendered (a plain crawl never loads it).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from crawler.failures import ConfigError
from crawler.urls import normalize_url, site_root
from settings.options import RENDER_MODES
from settings.values import number, strings, whole_number

__all__ = ["RENDER_MODES", "Render", "read_render"]

#: Debian's package of Chromium for programs (bookworm and later): no window, a smaller binary.
CHROMIUM_BINARY = "chromium-headless-shell"


@dataclass(frozen=True, slots=True)
class Render:
    mode: str  # never, auto or always
    pages: int  # responses in or waiting for the browser at once
    wait_budget: float  # seconds of virtual time a page may run its timers
    allow_origins: tuple[str, ...]  # origins besides the site's whose scripts and data may be fetched
    max_requests: int  # fetches one page may ask for
    max_memory: int  # bytes one renderer process may use
    chromium: str  # the browser binary, absolute

    @property
    def enabled(self) -> bool:
        return self.mode != "never"


def read_render(settings: BaseSettings, start_url: str) -> Render:
    mode = str(settings.get("SITEMAP_RENDER") or "never").strip().lower()
    if mode not in RENDER_MODES:
        raise ConfigError(f"SITEMAP_RENDER must be one of {', '.join(RENDER_MODES)}, not {mode!r}")
    origins = []
    for origin in strings(settings, "SITEMAP_RENDER_ALLOW_ORIGINS"):
        if "@" in urlsplit(origin).netloc:
            raise ConfigError("SITEMAP_RENDER_ALLOW_ORIGINS: an origin with credentials (user:password@) is refused")
        try:
            root = site_root(normalize_url(origin))
        except ValueError:
            root = ""
        if not root or urlsplit(origin).path.strip("/") or urlsplit(origin).query:
            raise ConfigError(f"SITEMAP_RENDER_ALLOW_ORIGINS: {origin!r} is not an origin (scheme://host[:port])")
        origins.append(root)
    chromium = str(settings.get("SITEMAP_CHROMIUM") or "")
    return Render(
        mode=mode,
        pages=whole_number(settings, "SITEMAP_RENDER_PAGES"),
        wait_budget=number(settings, "SITEMAP_RENDER_WAIT_BUDGET"),
        max_requests=whole_number(settings, "SITEMAP_RENDER_MAX_REQUESTS"),
        max_memory=whole_number(settings, "SITEMAP_RENDER_MAX_MEMORY") * 1024 * 1024,
        allow_origins=tuple(o for o in dict.fromkeys(origins) if o != site_root(start_url)),
        chromium=_browser(chromium) if mode != "never" else chromium,
    )


def _browser(given: str) -> str:
    """The Chromium to drive: *given*, else Debian's headless shell on PATH; ``ValueError`` saying
    how to get one (Playwright's own browser download is never used)."""
    if given:
        path = Path(given)
        found = given if path.is_absolute() or os.sep in given else shutil.which(given)
        if not found or not Path(found).is_file() or not os.access(found, os.X_OK):
            raise ConfigError(f"--chromium {given}: no executable file there")
        return str(Path(found).resolve())
    found = shutil.which(CHROMIUM_BINARY)
    if found is None:
        raise ConfigError(
            f"--render needs Chromium: install Debian's {CHROMIUM_BINARY} package "
            f"(apt-get install {CHROMIUM_BINARY}), give --chromium PATH, or run the image built with"
            " --build-arg RENDER=1"
        )
    return found
