"""HTTP downloads that end by a moment their request names (``check``'s total deadline).

A request's ``deadline`` meta (a ``time.monotonic()`` moment) caps its download timeout
as its transfer starts: a download in flight at the deadline ends there, cancelled by
Scrapy's own timeout, and one that would start after it is refused without a connection.
The timeout runs a little past the moment (:data:`LATE`), so that whoever keeps the
deadline hears of it before the download's own failure does.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler

from crawler.failures import DeadlineReached

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response

__all__ = ["LATE", "DeadlineHandler"]

#: Seconds a download may outlive its deadline.
LATE = 0.5


class DeadlineHandler(HTTP11DownloadHandler):
    async def download_request(self, request: Request) -> Response:
        deadline = request.meta.get("deadline")
        if isinstance(deadline, float):
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlineReached(f"the deadline came before {request.url} was fetched")
            timeout = request.meta.get("download_timeout") or left + LATE
            request.meta["download_timeout"] = min(float(timeout), left + LATE)
        return await super().download_request(request)
