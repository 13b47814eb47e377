"""``sitemap-crawler audit`` with a probe spider in place of the site spider, for tests.

Scope keeps the audit's own requests on the staging origin, so a test cannot
see the credentials stripped from a request that leaves unless one is made to
leave. This runs the real ``audit`` command (its settings, its downloader
middleware chain, its preflight and report) with :class:`ProbeSpider`, which
asks staging for ``/probe`` and then sends a copy of that request, credentials
and all, to ``$PROBE_OTHER_URL``: a redirect hop as Scrapy's own redirect
middleware would build it. Usage: ``python -m tests.credential_probe audit URL ...``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy import Request
from scrapy.http import Response

import crawler.spiders.site
from crawler.cli import main


class ProbeSpider(crawler.spiders.site.SiteSpider):
    async def start(self) -> AsyncIterator[Any]:
        yield Request(self.config.start_url + "probe", callback=self.leave, dont_filter=True)

    def leave(self, response: Response) -> Iterator[Request]:
        # The request as it was downloaded: the staging middleware put the credentials on it.
        yield response.request.replace(url=os.environ["PROBE_OTHER_URL"], callback=self.done, dont_filter=True)

    def done(self, response: Response) -> Iterator[Request]:
        yield from ()


if __name__ == "__main__":
    crawler.spiders.site.SiteSpider = ProbeSpider  # type: ignore[misc]  # what the audit's crawl runs
    sys.exit(main(sys.argv[1:]))
