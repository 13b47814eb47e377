"""Unit tests: the honest-lastmod rule (pure, no store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.protocol import SITEMAP_NS, is_schema_datetime, to_w3c, w3c_instant
from crawler.run.state import now_w3c
from crawler.state.lastmod import listing_digest, listing_for, made_another_way, not_after
from crawler.state.store import PageState
from crawler.validate.document import check_document

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
    dated = listing_for(
        _previous(_digest("old")), _digest("new"), modified_hint=plausible, first_sight=None, now=NOW, resumed=False
    )
    assert (dated.lastmod, dated.last_changed, dated.changed) == (plausible, plausible, True)
    stale = listing_for(
        _previous(_digest("old")), _digest("new"), modified_hint="2026-01-01", first_sight=None, now=NOW, resumed=False
    )
    assert stale.lastmod == NOW  # a date before the last visit cannot date this change


def test_a_resumed_url_is_not_a_change_of_this_run() -> None:
    resumed = listing_for(
        _previous(_digest("old")), _digest("new"), modified_hint=None, first_sight=None, now=NOW, resumed=True
    )
    assert (resumed.lastmod, resumed.changed) == ("2026-11-01", False)


def test_dates_are_compared_as_moments_whatever_their_offsets() -> None:
    # 08:00 at UTC-5 is 13:00Z, after NOW (10:00Z): not a date this change can have, though it sorts before.
    old, new = _previous(_digest("old")), _digest("new")
    future = listing_for(old, new, modified_hint="2026-11-30T08:00:00-05:00", first_sight=None, now=NOW, resumed=False)
    assert future.lastmod == NOW
    # 11:00 at UTC+2 is 09:00Z, in the window, though it sorts after NOW.
    inside = "2026-11-30T11:00:00+02:00"
    dated = listing_for(
        _previous(_digest("old")), _digest("new"), modified_hint=inside, first_sight=None, now=NOW, resumed=False
    )
    assert dated.lastmod == inside


def test_a_date_later_than_the_fetch_becomes_the_fetch_time() -> None:
    assert not_after("2099-01-01", NOW) == NOW
    assert not_after("2026-11-30T12:00:00+05:00", NOW) == "2026-11-30T12:00:00+05:00"  # 07:00Z
    assert not_after(None, NOW) is None


_OFFSETS = st.integers(min_value=-12 * 60, max_value=14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))


@st.composite
def _w3c(draw: st.DrawFn, around: datetime) -> str:
    """A W3C datetime within three days of *around*, in one of the forms pages and headers use."""
    moment = around + timedelta(seconds=draw(st.integers(min_value=-3 * 86400, max_value=3 * 86400)))
    local = moment.astimezone(draw(_OFFSETS))
    form = draw(st.sampled_from(["date", "seconds", "minutes", "zulu"]))
    if form == "date":
        return local.date().isoformat()
    if form == "zulu":
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return local.isoformat(timespec=form)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), change=st.sampled_from(["new", "changed", "unchanged"]))
def test_the_lastmod_we_list_always_passes_strict_validation(data: st.DataObject, change: str) -> None:
    """Whatever dates a page and its server give, the lastmod we list is a schema datetime no later than
    the fetch, and the sitemap holding it passes ``validate --strict``."""
    now = now_w3c()
    moment = datetime.now(UTC)
    # As the spider reads them: a page's own date, and the server's Last-Modified, each through to_w3c.
    hint = to_w3c(data.draw(st.none() | _w3c(moment)))
    header = to_w3c(data.draw(st.none() | _w3c(moment)))
    previous = None
    if change != "new":
        previous = _previous(_digest("old" if change == "changed" else "same"), lastmod="2026-11-01")
        previous.last_seen = (moment - timedelta(days=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
    first = not_after(hint or header, now)
    listing = listing_for(previous, _digest("same"), modified_hint=hint, first_sight=first, now=now, resumed=False)
    if listing.lastmod is None:
        return
    assert is_schema_datetime(listing.lastmod), listing.lastmod
    instant = w3c_instant(listing.lastmod)
    assert instant is not None and instant <= moment + timedelta(seconds=1), (listing.lastmod, now)
    xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}"><url>'
           f"<loc>https://www.example.com/p</loc><lastmod>{listing.lastmod}</lastmod></url></urlset>")  # fmt: skip
    checked = check_document(xml.encode(), "sitemap.xml", "https://www.example.com")
    assert checked.findings == [], checked.findings


def test_a_digest_of_an_earlier_version_says_nothing_about_a_change() -> None:
    """Stores of versions that made content digests another way (the whole body, before SPEC S11):
    the new digest is stored, lastmod stays, and the run does not call the page changed."""
    earlier = _previous("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
    relearnt = listing_for(earlier, _digest("text"), modified_hint=None, first_sight=None, now=NOW, resumed=False)
    assert (relearnt.digest, relearnt.lastmod, relearnt.changed) == (_digest("text"), "2026-11-01", False)
    assert made_another_way(earlier.listing_digest) and not made_another_way(_digest("text"))
