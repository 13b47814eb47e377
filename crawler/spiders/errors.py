"""Why a request got no usable response, and the report detail (the spider's errback); what a page
whose render failed is judged on."""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import DownloadCancelledError
from twisted.internet.defer import CancelledError

from crawler.failures import failure_text
from crawler.items import PageFacts
from crawler.modes import Replay
from crawler.reasons import OutOfScope, Reason, RobotsDisallowed

__all__ = ["failure_reason", "fetch_error", "render_failed"]


def fetch_error(error: BaseException, max_size: int) -> str:
    """The report detail of a request that got no usable response; a body
    cut at the size cap (on the wire or while decompressing) says so."""
    text = failure_text(error)
    cut = isinstance(error, (DownloadCancelledError, CancelledError)) or "DOWNLOAD_MAXSIZE" in str(error)
    if max_size and cut:
        return f"body over {max_size} bytes"
    return text


def failure_reason(error: BaseException | None, max_size: int) -> tuple[Reason, str]:
    """The reason and detail of a request that failed: robots, scope, or a network error."""
    if isinstance(error, RobotsDisallowed):
        return Reason.ROBOTS, str(error)
    if isinstance(error, OutOfScope):
        return Reason.OUT_OF_SCOPE, str(error)
    return Reason.FETCH_ERROR, fetch_error(error, max_size) if error else "no response"


def render_failed(facts: PageFacts, stored: dict[str, Any] | None) -> PageFacts:
    """A page whose render failed is never judged on its unrendered HTML (an app shell says nothing
    of the page): what the state store last saw stands (*stored*, as on a 304), else it is left out
    with ``render-failed``. Its raw links are still followed (they were in the HTML served); stored
    facts that were themselves an error are not kept."""
    render = facts.render or {}
    detail = f"render failed ({render.get('failed')}): {render.get('detail')}"
    if stored is None or stored.get("error"):  # nothing listable to keep
        facts.error, facts.detail = Reason.RENDER_FAILED, detail
        # No validators: the next run fetches the whole page and renders it again, not a 304 replaying this.
        facts.etag = facts.header_last_modified = None
        return facts
    kept = PageFacts.from_dict(stored)
    kept.replayed = Replay.RENDER_FAILED
    kept.render = {**render, "kept": "the facts of its last visit"}
    kept.links = list(dict.fromkeys([*kept.links, *facts.links]))
    return kept
