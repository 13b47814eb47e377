"""The audit's HTML report in a real headless Chromium (Debian's chromium and
chromium-driver, driven with Selenium): the summary renders, a filter
narrows a table, a row opens its detail, no JavaScript error, no network
request, no planted script runs. A screenshot is kept in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.chromium import need_chromium, requested_urls, wait_for
from tests.staging_site import EVIL_TITLE, StagingServer, StagingSite
from tests.test_audit import audit

ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).parent.parent / "test-artifacts"))

need_chromium()

from selenium import webdriver  # noqa: E402 - only once chromium is known to be there
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


def test_the_report_works_in_chromium(
    browser: webdriver.Chrome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = StagingServer(password=False).start()
    server = StagingServer(StagingSite(None, other.server_address[1]).routes()).start()
    try:
        assert audit(server, tmp_path / "audit", monkeypatch).returncode == 0
    finally:
        server.stop()
        other.stop()
    report = tmp_path / "audit" / "report.html"
    data = json.loads((tmp_path / "audit" / "report.json").read_text())
    browser.get_log("performance")  # what the browser did on its own at start-up (its new-tab page)
    browser.get(report.as_uri())
    rows = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#urls tbody tr"))
    assert len(rows) == min(100, data["summary"]["urls"])
    assert browser.find_element(By.ID, "summary-urls").text == str(data["summary"]["urls"])
    for kind, count in data["summary"]["findings"].items():
        assert browser.find_element(By.CSS_SELECTOR, f'[data-kind="{kind}"]').text == str(count)
    assert browser.find_elements(By.CSS_SELECTOR, "#chart rect")
    # The verdict first, in red for a site that is not ready; every kind with its severity badge, zeros too.
    verdict = browser.find_element(By.ID, "verdict")
    assert verdict.text == data["verdict"] and verdict.text.startswith("Not ready: ")
    assert verdict.location["y"] < browser.find_element(By.TAG_NAME, "h1").location["y"]
    assert browser.find_element(By.ID, "blocker-line").text == "No staging blocker found"
    for entry in data["kinds"]:
        row = browser.find_element(By.ID, f"kind-{entry['kind']}")
        assert row.find_element(By.CSS_SELECTOR, ".badge").text == entry["severity"]
        assert entry["fix"] in row.text and row.find_element(By.CSS_SELECTOR, "[data-kind]").text == str(entry["count"])
    badge = browser.find_element(By.CSS_SELECTOR, "#findings tbody td .badge.critical")
    assert badge.text == "critical" and badge.value_of_css_property("background-color") == "rgba(192, 38, 45, 1)"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "audit-report-summary.png"))
    # A filter narrows the table; the count says so.
    deep = sum("/deep/" in row["url"] for row in data["urls"])
    browser.find_element(By.ID, "urls-filter").send_keys("/deep/")
    assert wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#urls tbody tr")) == deep)
    assert browser.find_element(By.ID, "urls-count").text == f"{deep} of {data['summary']['urls']}"
    kind = browser.find_element(By.ID, "findings-kind")
    kind.send_keys("broken-links")
    broken = data["summary"]["findings"]["broken-links"]
    assert wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#findings tbody tr")) == broken)
    # The home page's title is planted HTML: it shows as text, and nothing of it ran.
    browser.find_element(By.ID, "urls-filter").send_keys(Keys.CONTROL, "a", Keys.DELETE)
    assert wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#urls tbody tr")) == len(rows))
    home = browser.find_element(By.CSS_SELECTOR, "#urls tbody tr")
    assert EVIL_TITLE in home.text
    home.click()
    detail = wait_for(lambda: browser.find_element(By.ID, "detail").is_displayed())
    assert detail and EVIL_TITLE in browser.find_element(By.ID, "detail").text
    panel = browser.find_element(By.ID, "detail").text
    fixes = {entry["kind"]: entry["fix"] for entry in data["kinds"]}
    assert "warning mixed-content: " in panel and fixes["mixed-content"] in panel  # the how-to-fix beside it
    home_row = next(row for row in data["urls"] if row["title"] == EVIL_TITLE)
    assert f"{home_row['response_ms']} ms" in panel  # the per-URL facts: response time, size
    assert f"{home_row['bytes']}" in panel
    assert browser.title.startswith("Staging audit of ") and "pwned" not in browser.title
    assert browser.execute_script("return document.querySelectorAll('script').length") == 2
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    browser.save_screenshot(str(ARTIFACTS / "audit-report-detail.png"))
    # No JavaScript error (a CSP violation would be one), no request but the file itself.
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    requests = requested_urls(browser)
    assert requests == [report.as_uri()], requests
