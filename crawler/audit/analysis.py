"""Findings about the crawled site itself: links, redirects, canonicals,
hreflang, soft 404s, depth, mixed content, duplicates (pure, from the audit record).

Each finder asks the record for the pages it is about (a ``where`` clause)
and looks the others up one by one, so memory stays flat however big the site.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from itertools import groupby
from operator import itemgetter
from urllib.parse import urlsplit

from crawler.audit.facts import SiteFacts
from crawler.audit.findings import Finding, Kind
from crawler.audit.record import Page
from crawler.audit.soft404 import says_not_found
from crawler.duplicates import kept_of

__all__ = ["site_findings"]

_BROKEN = frozenset({404, 410})
_TEMPORARY = frozenset({302, 303, 307})


def _why(page: Page | None) -> str:
    if page is None:
        return "not crawled"
    if page.reason is None:
        return "indexable"
    return f"{page.reason} (HTTP {page.status})" if page.status else str(page.reason)


def broken_links(db: sqlite3.Connection, facts: SiteFacts) -> Iterator[Finding]:
    for page in facts.pages(f"status IN ({', '.join(map(str, sorted(_BROKEN)))})"):
        sources = [row[0] for row in db.execute("SELECT DISTINCT source FROM links WHERE target = ?", (page.url,))]
        if sources:
            detail = f"HTTP {page.status}, linked from {len(sources)} page{'s' if len(sources) != 1 else ''}"
            yield Finding(Kind.BROKEN_LINKS, page.url, detail, sorted(sources))


def redirects(facts: SiteFacts) -> Iterator[Finding]:
    """Temporary hops, chains of two hops or more (from where they start) and
    loops (once per loop, wherever it is entered)."""
    loops: set[frozenset[str]] = set()
    for page in facts.pages("redirect_to IS NOT NULL AND status IS NOT NULL"):
        assert page.redirect_to is not None
        targeted = facts.is_redirect_target(page.url)
        if page.status in _TEMPORARY:
            yield Finding(Kind.TEMPORARY_REDIRECTS, page.url, f"HTTP {page.status} to {page.redirect_to}")
        if targeted and not facts.inlinks(page.url):
            continue  # inside a chain, and not linked: reported from where the chain starts
        chain, hops = [page.url], [f"{page.status} {page.url}"]
        current: Page | None = page
        while current is not None and current.redirect_to:
            following = current.redirect_to
            if following in chain:
                cycle = frozenset(chain[chain.index(following) :])
                if cycle not in loops:
                    loops.add(cycle)
                    hops.append(f"back to {following}")
                    yield Finding(Kind.REDIRECT_LOOPS, page.url, " -> ".join(hops), chain)
                break
            chain.append(following)
            current = facts.get(following)
            hops.append(f"{current.status if current and current.status else '?'} {following}")
        else:
            if len(chain) > 2 and not targeted:
                yield Finding(Kind.REDIRECT_CHAINS, page.url, f"{len(chain) - 1} hops: " + " -> ".join(hops), chain)


def canonicals(facts: SiteFacts) -> Iterator[Finding]:
    for page in facts.pages("canonical IS NOT NULL AND canonical != url AND status = 200"):
        assert page.canonical is not None
        target = facts.get(page.canonical)
        if target is not None and target.canonical and target.canonical != target.url:
            chain = [page.url, target.url, target.canonical]
            yield Finding(Kind.CANONICAL_CHAINS, page.url, " -> ".join(chain), chain)
        elif target is None or (target.reason is not None and target.reason != "canonicalised"):
            detail = f"canonical {page.canonical} is {_why(target)}"
            yield Finding(Kind.CANONICAL_NOT_INDEXABLE, page.url, detail, [page.canonical])


def hreflang(facts: SiteFacts) -> Iterator[Finding]:
    for page in facts.pages("alternates IS NOT NULL OR notes LIKE '%invalid hreflang%'"):
        for note in page.notes:
            if note.startswith("invalid hreflang"):
                yield Finding(Kind.HREFLANG_ERRORS, page.url, note)
        if page.reason is not None:
            continue
        for tag, href in page.alternates:
            if href == page.url:
                continue
            target = facts.get(href)
            if target is None or target.reason is not None:
                yield Finding(Kind.HREFLANG_ERRORS, page.url, f"alternate {tag} {href} is {_why(target)}", [href])
            elif all(back != page.url for _, back in target.alternates):
                yield Finding(Kind.HREFLANG_ERRORS, page.url, f"alternate {tag} {href} does not link back", [href])


def soft_404s(facts: SiteFacts) -> Iterator[Finding]:
    """Pages answering 200 with their own host's 404 text (hosts run different software, so
    each is compared with its own), or with a title that says "not found"."""
    for page in facts.pages("status = 200 AND digest IS NOT NULL"):
        if facts.is_own_404(page):
            yield Finding(Kind.SOFT_404, page.url, "HTTP 200 with the text of the site's own 404 page")
        elif page.title and says_not_found(page.title):
            yield Finding(Kind.SOFT_404, page.url, f"HTTP 200 with the title {page.title!r}")


def deep_pages(facts: SiteFacts) -> Iterator[Finding]:
    """Listed pages more clicks from the start than the threshold (click depth, see
    :mod:`crawler.audit.depth`; a page no click reaches is an orphan, not deep)."""
    for page in facts.pages("reason IS NULL AND clicks > ?", (facts.deep_threshold,)):
        if page.clicks is not None:
            yield Finding(
                Kind.DEEP_PAGES, page.url, f"{page.clicks} clicks from the start (over {facts.deep_threshold})"
            )


def mixed_content(db: sqlite3.Connection, facts: SiteFacts, hosts: tuple[str, ...]) -> Iterator[Finding]:
    """http:// links to the site's own hosts (staging or production) when the site is https."""
    if not hosts:
        return
    query = "SELECT source, target FROM links WHERE target LIKE 'http://%' ORDER BY source, target"
    for source, links in groupby(db.execute(query), key=itemgetter(0)):
        targets = [target for _, target in links if (urlsplit(target).hostname or "") in hosts]
        if targets:
            yield Finding(Kind.MIXED_CONTENT, source, f"{len(targets)} http:// link(s) to the https site", targets)


def duplicates(facts: SiteFacts) -> Iterator[Finding]:
    """Pages left out as the same content as a listed one (the crawl decided: reason ``duplicate``)."""
    for page in facts.pages("reason = 'duplicate'"):
        kept = kept_of(page.detail)
        if kept is not None:
            yield Finding(Kind.DUPLICATE_CONTENT, page.url, f"the same content as {kept}, which is listed", [kept])


def recorded(db: sqlite3.Connection, code: str, kind: Kind) -> Iterator[Finding]:
    """The crawl's own warnings of *code* (its ``url_warning`` signal), as findings of *kind*."""
    for url, detail in db.execute("SELECT url, detail FROM warnings WHERE code = ? ORDER BY url", (code,)):
        yield Finding(kind, url, detail)


def site_findings(db: sqlite3.Connection, facts: SiteFacts, hosts: tuple[str, ...]) -> Iterator[Finding]:
    yield from broken_links(db, facts)
    yield from recorded(db, "canonical-redirects-back", Kind.CANONICAL_REDIRECTS_BACK)
    yield from redirects(facts)
    yield from canonicals(facts)
    yield from hreflang(facts)
    yield from soft_404s(facts)
    yield from deep_pages(facts)
    yield from mixed_content(db, facts, hosts)
    yield from duplicates(facts)
