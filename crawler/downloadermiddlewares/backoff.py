"""Back off when the server says so or struggles (SPEC S2): a 429 or 503 with
``Retry-After`` makes that the delay before the next request to the host,
and nothing lowers it until that time is over (not the throttle, whatever
answers come meanwhile); any 429 or 5xx, or a request
that times out or is refused, doubles the delay between requests. Scrapy's
retry then asks again after the pause. Success brings the delay back down:
AutoThrottle does it when it is on; with a fixed delay this middleware
halves the extra delay on each good answer, never below the configured one
or the robots.txt ``Crawl-delay``.
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
    ResponseDataLossError,
)
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import ConnectError, ConnectionDone, ConnectionLost

from crawler.stats import Stat
from settings.values import adapts

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["ServerBackoffMiddleware", "held", "holds_of", "retry_after_seconds"]

logger = logging.getLogger(__name__)

#: The first step of a backoff, when the delay was 0.
MIN_BACKOFF = 0.25
_TROUBLES = (
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ResponseDataLossError,
    ConnectError,
    ConnectionDone,
    ConnectionLost,
)


def holds_of(crawler: Crawler) -> dict[str, float]:
    """Host -> the monotonic time before which nothing is sent to it (a Retry-After), per crawler."""
    holds: dict[str, float] | None = getattr(crawler, "_sitemap_holds", None)
    if holds is None:
        holds = {}
        crawler._sitemap_holds = holds  # type: ignore[attr-defined]
    return holds


def held(crawler: Crawler, message: Request | Response) -> bool:
    """Whether the host of a request or response is inside a Retry-After: its delay may only go up meanwhile."""
    return holds_of(crawler).get(urlparse_cached(message).netloc, 0.0) > time.monotonic()


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
    def __init__(self, crawler: Crawler, max_delay: float, base_delay: float, recover: bool):
        self.crawler = crawler
        self.max_delay = max_delay
        self.base_delay = base_delay
        self.recover = recover  # a fixed delay: nothing else brings the delay back down
        self.holds = holds_of(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        max_delay = settings.getfloat("SITEMAP_MAX_CRAWL_DELAY") or settings.getfloat("AUTOTHROTTLE_MAX_DELAY")
        return cls(crawler, max_delay, settings.getfloat("DOWNLOAD_DELAY"), recover=not adapts(settings))

    def process_response(self, request: Request, response: Response) -> Response:
        slot = self._slot(request)
        if slot is None:
            return response
        if response.status == 429 or response.status >= 500:
            header = response.headers.get(b"Retry-After")
            wait = retry_after_seconds(header.decode("latin-1")) if header and response.status in (429, 503) else None
            self._back_off(slot, request, f"answered {response.status}", wait)
        elif self.recover and slot.delay > self._floor() and not held(self.crawler, request):
            slot.delay = max(self._floor(), slot.delay / 2)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        slot = self._slot(request)
        if slot is not None and _server_trouble(exception):
            self._back_off(slot, request, type(exception).__name__, None)

    def _slot(self, request: Request) -> Slot | None:
        key = request.meta.get("download_slot")
        return None if key is None else self.crawler.engine.downloader.slots.get(key)

    def _floor(self) -> float:
        stats = self.crawler.stats
        return max(self.base_delay, float(stats.get_value(Stat.CRAWL_DELAY, 0.0)) if stats else 0.0)

    def _back_off(self, slot: Slot, request: Request, why: str, wait: float | None) -> None:
        stats = self.crawler.stats
        doubled = max(slot.delay * 2, MIN_BACKOFF)
        if wait:
            wait = min(wait, self.max_delay)
            host = urlparse_cached(request).netloc
            self.holds[host] = max(self.holds.get(host, 0.0), time.monotonic() + wait)
            slot.jitter = 0.0  # a randomised delay could come back early; the server named the time
            logger.info("%s %s with Retry-After: nothing sent to %s for %.0f s", request.url, why, host, wait)
        delay = min(self.max_delay, max(doubled, wait or 0.0))
        if delay > slot.delay:
            slot.delay = delay
            logger.info("%s %s: %.2f s between requests from now on", request.url, why, delay)
        if stats:
            stats.inc_value(Stat.BACKOFF)


def _server_trouble(exception: Exception) -> bool:
    """A timeout, or a refused, reset or cut connection: the server is struggling (not a DNS
    failure, and not our own refusals such as robots.txt or scope)."""
    return isinstance(exception, _TROUBLES)
