"""Honest lastmod (SPEC S6): the time a page's listing digest last changed (pure).

The listing digest covers what a search engine would see change: the
content digest of the page (text and title, volatile parts blanked), the
canonical, the robots directives and the extension data written for the
URL. On the first sight of a page its own modification date (or a
trustworthy ``Last-Modified``) stands in; when there is none, lastmod is
left out rather than guessed.

The whole decision lives here: what date a fetched page claims
(:func:`page_date`, called by the response reader) and what a listing
rests on from run to run (:func:`listing_for`, called by the lastmod
pipeline, which records it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from crawler.page.digest import SCHEME
from crawler.protocol import w3c_instant
from crawler.state.store import Listing, PageState

__all__ = ["listing_digest", "listing_for", "made_another_way", "not_after", "page_date"]


def listing_digest(
    content: str,
    canonical: str | None,
    *,
    robots: Iterable[str],
    images: list[str],
    videos: list[dict[str, Any]],
    alternates: Iterable[tuple[str, str]],
) -> str:
    """SHA-256 over everything the URL's listing depends on; *content* is the
    page's content digest (or its media type when it has none). Prefixed with how content
    digests are made (:data:`crawler.page.digest.SCHEME`): one made another way says nothing."""
    meaningful = [content, canonical, sorted(robots), images, videos, [list(pair) for pair in alternates]]
    return f"{SCHEME}:{hashlib.sha256(json.dumps(meaningful, sort_keys=True).encode()).hexdigest()}"


def made_another_way(digest: str | None) -> bool:
    """Whether a stored listing digest was made by an earlier version, with content digests made
    another way: comparing it with this run's says nothing about a change."""
    return digest is not None and not digest.startswith(SCHEME + ":")


def _changed_at(hint: str | None, last_seen: str, now: str) -> str:
    """When content changed between two visits: the page's own date if it
    falls in that window (compared as moments, whatever their offsets), else
    the time this run noticed."""
    moment, since, until = w3c_instant(hint or ""), w3c_instant(last_seen), w3c_instant(now)
    if moment and since and until and since < moment <= until:
        return hint or now
    return now


def not_after(value: str | None, now: str) -> str | None:
    """*value*, or *now* when *value* is later than *now* (a page dated in the future was not
    changed then: search engines distrust such a lastmod, and validators flag it)."""
    moment, until = w3c_instant(value or ""), w3c_instant(now)
    if value and moment and until and moment > until:
        return now
    return value


def page_date(hint: str | None, header_date: str | None, now: str) -> tuple[str | None, str | None]:
    """The date a fetched page claims for its last change, and a note when it is not taken as it
    is: the page's own date (JSON-LD, Open Graph) beats the ``Last-Modified`` header, which servers
    often stamp on every response; a date later than this fetch (*now*) is no change date, so the
    fetch time stands in (SPEC S6)."""
    claimed = hint or header_date
    date = not_after(claimed, now)
    note = f"lastmod {claimed} is later than the fetch: the fetch time is listed" if date != claimed else None
    return date, note


def listing_for(
    previous: PageState | None,
    digest: str,
    *,
    modified_hint: str | None,
    first_sight: str | None,
    now: str,
    resumed: bool,
) -> Listing:
    """What a listed URL's lastmod rests on after this visit.

    *modified_hint* is the page's own modification date, *first_sight* the
    date to use when the URL is new (that hint, or a trustworthy
    ``Last-Modified``). A *resumed* URL was already counted before the
    interruption: its lastmod stays and it is not a change of this run.
    A stored digest made another way (an earlier version) is replaced, but
    says nothing about a change: lastmod stays.
    """
    changed = previous is None or previous.listing_digest != digest
    if changed and previous is not None and made_another_way(previous.listing_digest):
        return Listing(digest=digest, lastmod=previous.lastmod, last_changed=previous.last_changed, changed=False)
    # Back in the set (it was noindex, 404, ...): a change of the set, for IndexNow and the delta,
    # though not of the content, so its lastmod stays.
    relisted = previous is not None and previous.outcome != "listed"
    if previous is not None and (not changed or resumed):
        lastmod = previous.lastmod
    elif previous is not None and previous.listing_digest is not None:
        lastmod = _changed_at(modified_hint, previous.last_seen, now)
    else:
        lastmod = first_sight
    last_changed = lastmod if changed else previous.last_changed if previous else None
    return Listing(
        digest=digest, lastmod=lastmod, last_changed=last_changed, changed=(changed or relisted) and not resumed
    )
