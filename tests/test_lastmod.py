"""Unit tests: the honest-lastmod rule (pure, no store)."""

from __future__ import annotations

from crawler.state.lastmod import listing_digest, listing_for
from crawler.state.store import PageState

EARLIER, NOW = "2026-11-20T08:00:00Z", "2026-11-30T10:00:00Z"


def _digest(text: str, **changes: object) -> str:
    values: dict[str, object] = {"robots": (), "images": [], "videos": [], "alternates": [], **changes}
    return listing_digest(text, None, **values)  # type: ignore[arg-type]


def _previous(digest: str | None, lastmod: str | None = "2026-11-01") -> PageState:
    return PageState(
        url="https://e.com/p",
        first_seen="2026-11-01T00:00:00Z",
        last_seen=EARLIER,
        last_run=1,
        status=200,
        outcome="listed",
        reason=None,
        listing_digest=digest,
        last_changed=lastmod,
        lastmod=lastmod,
        etag=None,
        last_modified=None,
        listed_run=1,
        shard_group="",
        shard=1,
    )


def test_digest_covers_what_a_search_engine_sees() -> None:
    base = _digest("text")
    assert _digest("text") == base
    assert _digest("other text") != base
    assert _digest("text", robots=("noindex",)) != base
    assert _digest("text", images=["https://cdn.e.com/a.jpg"]) != base
    assert _digest("text", alternates=[("de", "https://e.com/de/p")]) != base
    assert listing_digest("text", "https://e.com/q", robots=(), images=[], videos=[], alternates=[]) != base


def test_first_sight_takes_the_page_date_or_nothing() -> None:
    new = listing_for(None, "d", modified_hint=None, first_sight="2026-10-05", now=NOW, resumed=False)
    assert (new.lastmod, new.last_changed, new.changed) == ("2026-10-05", "2026-10-05", True)
    unknown = listing_for(None, "d", modified_hint=None, first_sight=None, now=NOW, resumed=False)
    assert unknown.lastmod is None  # no guess


def test_unchanged_content_keeps_lastmod() -> None:
    same = listing_for(_previous("d"), "d", modified_hint=None, first_sight="2026-11-29", now=NOW, resumed=False)
    assert (same.lastmod, same.changed) == ("2026-11-01", False)


def test_a_change_is_dated_by_the_page_if_plausible_else_by_this_visit() -> None:
    plausible = "2026-11-25T12:00:00Z"
    dated = listing_for(_previous("old"), "new", modified_hint=plausible, first_sight=None, now=NOW, resumed=False)
    assert (dated.lastmod, dated.last_changed, dated.changed) == (plausible, plausible, True)
    stale = listing_for(_previous("old"), "new", modified_hint="2026-01-01", first_sight=None, now=NOW, resumed=False)
    assert stale.lastmod == NOW  # a date before the last visit cannot date this change


def test_a_resumed_url_is_not_a_change_of_this_run() -> None:
    resumed = listing_for(_previous("old"), "new", modified_hint=None, first_sight=None, now=NOW, resumed=True)
    assert (resumed.lastmod, resumed.changed) == ("2026-11-01", False)
