"""Signals of sitemap-crawler, beside Scrapy's own."""

from __future__ import annotations

__all__ = ["site_held", "sitemaps_published", "url_warning"]

#: Something about a listed URL found only when the whole site is known
#: (an hreflang annotation that does not hold, ...). Arguments: ``url``,
#: ``code`` (a stable code such as ``hreflang-not-reciprocal``), ``detail``.
url_warning = object()

#: The site asked for a pause (a 429 or 503 with ``Retry-After``, capped), and this process
#: holds it. Arguments: ``seconds``, how long from now; ``url``, the request's (its origin is
#: the site held). A shared crawl holds the site for every worker (crawler/downloadhandlers/sharedpace.py).
site_held = object()

#: A sitemap set was published. Argument: ``result``, the
#: :class:`crawler.results.ExportResult`, which receivers may complete.
sitemaps_published = object()
