"""Why a request got no usable response, and the report detail (the spider's errback)."""

from __future__ import annotations

from scrapy.exceptions import DownloadCancelledError
from twisted.internet.defer import CancelledError

from crawler.failures import failure_text
from crawler.reasons import OutOfScope, Reason, RobotsDisallowed

__all__ = ["failure_reason", "fetch_error"]


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
