"""Debian's headless Chromium driven by Selenium, for the tests that open a report in it: no
download ever (Selenium Manager off), a profile of the test's own, the browser's console and
network logs kept for the test to read."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "DRIVER", "chromium", "need_chromium", "requested_urls", "wait_for"]

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")


def need_chromium() -> None:
    """Skip the calling module without the browser; in CI, fail: .ci/run installs it."""
    if CHROMIUM and DRIVER:
        return
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium and chromium-driver (.ci/run installs them)")
    pytest.skip("chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)",
                allow_module_level=True)  # fmt: skip


def chromium(profile: Path) -> Any:
    """A headless Chromium (a selenium ``webdriver.Chrome``); the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never download a driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1280,1400",
        f"--user-data-dir={profile}",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)  # fmt: skip
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(DRIVER)))
    driver.set_page_load_timeout(30)
    return driver


def wait_for(condition: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll *condition* until it is truthy (bounded: never waits forever)."""
    ends = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > ends:
            return value
        time.sleep(0.05)


def requested_urls(driver: Any) -> list[str]:
    """Every URL the page asked for since the log was last read (chrome:// and data: left out:
    the browser's own pages and inline data, never the network)."""
    import json

    urls = [
        json.loads(entry["message"])["message"]["params"]["request"]["url"]
        for entry in driver.get_log("performance")
        if json.loads(entry["message"])["message"]["method"] == "Network.requestWillBeSent"
    ]
    return [url for url in urls if not url.startswith(("chrome://", "data:"))]
