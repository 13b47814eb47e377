"""The report detail of a request that got no usable response (the spider's errback)."""

from __future__ import annotations

from scrapy.exceptions import DownloadCancelledError
from twisted.internet.defer import CancelledError

from crawler.failures import failure_text

__all__ = ["fetch_error"]


def fetch_error(error: BaseException, max_size: int) -> str:
    """The report detail of a request that got no usable response; a body
    cut at the size cap (on the wire or while decompressing) says so."""
    text = failure_text(error)
    cut = isinstance(error, (DownloadCancelledError, CancelledError)) or "DOWNLOAD_MAXSIZE" in str(error)
    if max_size and cut:
        return f"body over {max_size} bytes"
    return text
