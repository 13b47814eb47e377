"""A URL's outcome, decided once (crawler/reasons.py: outcome_of) for the crawl report, the state
store and the audit record."""

from __future__ import annotations

from scrapy.exceptions import DropItem

from crawler.reasons import Excluded, Outcome, Reason, outcome_of


def test_an_item_scraped_is_listed() -> None:
    assert outcome_of(None) == Outcome(None) and outcome_of(None).listed and outcome_of(None).word == "listed"


def test_an_item_excluded_carries_its_reason_and_detail() -> None:
    outcome = outcome_of(Excluded(Reason.NOINDEX, "noindex, nofollow"))
    assert (outcome.word, outcome.reason, outcome.detail) == ("excluded", "noindex", "noindex, nofollow")


def test_any_other_drop_is_an_error_with_its_words() -> None:
    outcome = outcome_of(DropItem("a pipeline refused it"))
    assert (outcome.word, outcome.reason, outcome.detail) == ("excluded", "error", "a pipeline refused it")
