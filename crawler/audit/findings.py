"""What a staging audit can find, by kind (the names ``--fail-on`` takes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Finding", "Kind"]


class Kind(StrEnum):
    STAGING_BLOCKER = "staging-blocker"  # site-wide noindex (header or meta) or robots.txt Disallow: /
    LISTED_NOT_INDEXABLE = "listed-not-indexable"  # in the site's sitemaps, but not indexable (and why)
    INDEXABLE_NOT_LISTED = "indexable-not-listed"  # indexable, but missing from the site's sitemaps
    ORPHANS = "orphans"  # in the site's sitemaps, linked from no crawled page
    LISTED_TWICE = "listed-twice"  # more than once in the site's sitemaps
    FUTURE_LASTMOD = "future-lastmod"  # a lastmod in the site's sitemaps more than a day ahead
    SAME_LASTMOD = "same-lastmod"  # one lastmod on most entries of a sitemap file (SITEMAP_SAME_LASTMOD_SHARE)
    SITEMAP_ERRORS = "sitemap-errors"  # the site's sitemaps break the protocol (validate's errors)
    SITEMAP_WARNINGS = "sitemap-warnings"  # validate's other warnings: readable, but worth a look
    BROKEN_LINKS = "broken-links"  # internal links answered 404 or 410, with every page linking there
    REDIRECT_CHAINS = "redirect-chains"  # two hops or more
    REDIRECT_LOOPS = "redirect-loops"
    TEMPORARY_REDIRECTS = "temporary-redirects"  # 302, 303 or 307 where a permanent one is expected
    CANONICAL_CHAINS = "canonical-chains"  # A -> B -> C
    CANONICAL_NOT_INDEXABLE = "canonical-not-indexable"  # a canonical pointing at a 404, noindex or redirect
    CANONICAL_REDIRECTS_BACK = "canonical-redirects-back"  # a canonical that redirects back to the page
    HREFLANG_ERRORS = "hreflang-errors"  # a missing return link, a target not indexable, an invalid code
    SOFT_404 = "soft-404"  # 200 with a not-found title, or the site's own 404 page
    DEEP_PAGES = "deep-pages"  # more clicks from the start than --deep-threshold
    MIXED_CONTENT = "mixed-content"  # http:// links to the https site
    DUPLICATE_CONTENT = "duplicate-content"  # the same content as a listed page: only that one is listed


@dataclass(slots=True)
class Finding:
    """One finding about one URL; *related* names the other URLs involved
    (the pages linking to a broken link, the hops of a chain, ...)."""

    kind: Kind
    url: str
    detail: str
    related: list[str] = field(default_factory=list)
    #: On a staging blocker's finding: the findings it causes, by kind, not listed one per URL.
    grouped: dict[str, list[str]] = field(default_factory=dict)
    change: str | None = None  # with --compare: "new" or "still there"
    seq: int | None = None  # its place in a FindingStore, once stored
