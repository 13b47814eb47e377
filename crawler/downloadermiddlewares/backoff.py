"""Tell the site's pace when the server says to slow down or struggles (SPEC S2): a
429 or 503 with ``Retry-After`` (seconds or an HTTP date), any 429 or 5xx, a
request that times out or is refused; and every good answer. What the pace
does with it (double the delay, hold the site, come back down) is decided by
:class:`crawler.extensions.politeness.Politeness`, the one owner of the
slots' delay. Scrapy's retry then asks again after the pause.
"""

from __future__ import annotations

import logging
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from scrapy.exceptions import (
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    NotConfigured,
    ResponseDataLossError,
)
from twisted.internet.error import ConnectError, ConnectionDone, ConnectionLost

from crawler.extensions.politeness import Politeness

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["ServerBackoffMiddleware", "retry_after_seconds"]

logger = logging.getLogger(__name__)

_TROUBLES = (
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ResponseDataLossError,
    ConnectError,
    ConnectionDone,
    ConnectionLost,
)


def retry_after_seconds(value: str, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or an HTTP date), or ``None``."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ServerBackoffMiddleware:
    def __init__(self, politeness: Politeness):
        self.politeness = politeness

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        politeness = crawler.get_extension(Politeness)
        if politeness is None:
            raise NotConfigured("the Politeness extension keeps the pace; without it there is none to tell")
        return cls(politeness)

    def process_response(self, request: Request, response: Response) -> Response:
        if response.status == 429 or response.status >= 500:
            header = response.headers.get(b"Retry-After")
            wait = retry_after_seconds(header.decode("latin-1")) if header and response.status in (429, 503) else None
            self.politeness.trouble(request, f"answered {response.status}", wait)
        else:
            self.politeness.answered(request)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        if _server_trouble(exception):
            self.politeness.trouble(request, type(exception).__name__, None)


def _server_trouble(exception: Exception) -> bool:
    """A timeout, or a refused, reset or cut connection: the server is struggling (not a DNS
    failure, and not our own refusals such as robots.txt or scope)."""
    return isinstance(exception, _TROUBLES)
