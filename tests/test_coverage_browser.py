"""The coverage report in a real headless Chromium: the crawlers' table and the three charts
render from the same figures as --json, a parameter name that is markup shows as text and
nothing of it runs, no JavaScript error, no request but the file itself."""

from __future__ import annotations

from tests.chromium import need_chromium, requested_urls
from tests.test_coverage import PLANTED, Coverage, covered  # noqa: F401 - the fixture, run for this module too

need_chromium()

from selenium import webdriver  # noqa: E402 - only once chromium is known to be there
from selenium.webdriver.common.by import By  # noqa: E402


def test_the_coverage_report_works_in_chromium(browser: webdriver.Chrome, covered: Coverage) -> None:  # noqa: F811
    browser.get_log("performance")  # what the browser did on its own at start-up
    browser.get(covered.html.as_uri())
    document = covered.document
    for name, figures in document["crawlers"].items():
        cells = browser.find_element(By.CSS_SELECTOR, f'#crawlers tr[data-crawler="{name}"]').text.split()
        assert cells[:4] == [
            name,
            str(figures["fetches"]),
            str(figures["listed_fetched"]),
            str(figures["listed_not_fetched"]),
        ]
    days = sum(len(figures["per_day"]) for figures in document["crawlers"].values())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#per-day rect")) >= days  # a bar per crawler and day
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sections rect")) == 1  # the one section of the set
    reasons = {reason for figures in document["crawlers"].values() for reason in figures["not_listed"]}
    assert len(browser.find_elements(By.CSS_SELECTOR, "#wasted rect")) == len(reasons)
    names = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#parameters tbody tr td:first-child")]
    assert PLANTED in names  # as the URL spells it, shown as text
    assert browser.title.startswith("Crawler coverage of ") and "pwned" not in browser.title
    assert browser.execute_script("return document.querySelectorAll('script').length") == 0
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
    assert requested_urls(browser) == [covered.html.as_uri()]
