"""Staging credentials, sent to the staging origins and nowhere else (SPEC S7).

The protection space of HTTP basic auth is one origin: scheme, host and
port (RFC 7617). Runs last before the download, so whatever built the
request (a redirect hop, a sitemap on a sister host), credentials are
added on the staging origins only (the start URL's, and each one
the user mapped to a production origin) and removed from every other request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from crawler.run.context import config_of
from crawler.urls import site_root

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

    from settings.staging import StagingAccess

__all__ = ["StagingAccessMiddleware"]


class StagingAccessMiddleware:
    def __init__(self, access: StagingAccess):
        self.access = access
        self.names = tuple({name for origin in access.origins for name, _ in access.headers_for(origin)})

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        access = config_of(crawler).audit.access
        if access is None:
            raise NotConfigured  # no message: Scrapy would log it as a warning
        return cls(access)

    def process_request(self, request: Request) -> None:
        origin = site_root(request.url)
        for name in self.names:
            request.headers.pop(name, None)
        for name, value in self.access.headers_for(origin):  # none off the staging origins
            request.headers[name] = value
