"""Findings about the crawled site itself: links, redirects, canonicals,
hreflang, soft 404s, depth, mixed content, duplicates (pure, from the audit record)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from crawler.audit.findings import Finding, Kind
from crawler.audit.record import Page
from crawler.audit.soft404 import says_not_found
from crawler.duplicates import kept_of

__all__ = ["NotFoundPage", "SiteFacts", "site_findings"]

_BROKEN = frozenset({404, 410})
_TEMPORARY = frozenset({302, 303, 307})


@dataclass(frozen=True, slots=True)
class NotFoundPage:
    """The site's own answer to a URL that cannot exist: its soft-404 fingerprint."""

    status: int
    digest: str | None
    title: str | None


@dataclass(slots=True)
class SiteFacts:
    pages: dict[str, Page]
    inlinks: dict[str, int]
    start_url: str
    deep_threshold: int
    not_found: NotFoundPage | None = None


def _why(page: Page | None) -> str:
    if page is None:
        return "not crawled"
    if page.reason is None:
        return "indexable"
    return f"{page.reason} (HTTP {page.status})" if page.status else str(page.reason)


def broken_links(db: sqlite3.Connection, facts: SiteFacts) -> Iterator[Finding]:
    for page in facts.pages.values():
        if page.status not in _BROKEN:
            continue
        sources = [row[0] for row in db.execute("SELECT DISTINCT source FROM links WHERE target = ?", (page.url,))]
        if sources:
            detail = f"HTTP {page.status}, linked from {len(sources)} page{'s' if len(sources) != 1 else ''}"
            yield Finding(Kind.BROKEN_LINKS, page.url, detail, sorted(sources))


def redirects(facts: SiteFacts) -> Iterator[Finding]:
    """Temporary hops, chains of two hops or more (from where they start) and
    loops (once per loop, wherever it is entered)."""
    pages = facts.pages
    targets = {page.redirect_to for page in pages.values() if page.redirect_to}
    loops: set[frozenset[str]] = set()
    for page in pages.values():
        if not page.redirect_to or page.status is None:
            continue
        if page.status in _TEMPORARY:
            yield Finding(Kind.TEMPORARY_REDIRECTS, page.url, f"HTTP {page.status} to {page.redirect_to}")
        if page.url in targets and not facts.inlinks.get(page.url):
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
            current = pages.get(following)
            hops.append(f"{current.status if current and current.status else '?'} {following}")
        else:
            if len(chain) > 2 and page.url not in targets:
                yield Finding(Kind.REDIRECT_CHAINS, page.url, f"{len(chain) - 1} hops: " + " -> ".join(hops), chain)


def canonicals(facts: SiteFacts) -> Iterator[Finding]:
    pages = facts.pages
    for page in pages.values():
        if not page.canonical or page.canonical == page.url or page.status != 200:
            continue
        target = pages.get(page.canonical)
        if target is not None and target.canonical and target.canonical != target.url:
            chain = [page.url, target.url, target.canonical]
            yield Finding(Kind.CANONICAL_CHAINS, page.url, " -> ".join(chain), chain)
        elif target is None or (target.reason is not None and target.reason != "canonicalised"):
            detail = f"canonical {page.canonical} is {_why(target)}"
            yield Finding(Kind.CANONICAL_NOT_INDEXABLE, page.url, detail, [page.canonical])


def hreflang(facts: SiteFacts) -> Iterator[Finding]:
    pages = facts.pages
    for page in pages.values():
        for note in page.notes:
            if note.startswith("invalid hreflang"):
                yield Finding(Kind.HREFLANG_ERRORS, page.url, note)
        if page.reason is not None:
            continue
        for tag, href in page.alternates:
            if href == page.url:
                continue
            target = pages.get(href)
            if target is None or target.reason is not None:
                yield Finding(Kind.HREFLANG_ERRORS, page.url, f"alternate {tag} {href} is {_why(target)}", [href])
            elif all(back != page.url for _, back in target.alternates):
                yield Finding(Kind.HREFLANG_ERRORS, page.url, f"alternate {tag} {href} does not link back", [href])


def soft_404s(facts: SiteFacts) -> Iterator[Finding]:
    own = facts.not_found
    for page in facts.pages.values():
        if page.status != 200 or not page.fetched_html:
            continue
        if own is not None and own.digest and page.digest == own.digest:
            yield Finding(Kind.SOFT_404, page.url, "HTTP 200 with the text of the site's own 404 page")
        elif page.title and says_not_found(page.title):
            yield Finding(Kind.SOFT_404, page.url, f"HTTP 200 with the title {page.title!r}")


def deep_pages(facts: SiteFacts) -> Iterator[Finding]:
    """Listed pages more clicks from the start than the threshold (click depth, see
    :mod:`crawler.audit.depth`; a page no click reaches is an orphan, not deep)."""
    for page in facts.pages.values():
        if page.reason is None and page.clicks is not None and page.clicks > facts.deep_threshold:
            yield Finding(
                Kind.DEEP_PAGES, page.url, f"{page.clicks} clicks from the start (over {facts.deep_threshold})"
            )


def mixed_content(db: sqlite3.Connection, facts: SiteFacts, hosts: tuple[str, ...]) -> Iterator[Finding]:
    """http:// links to the site's own hosts (staging or production) when the site is https."""
    if not hosts:
        return
    found: dict[str, list[str]] = {}
    for source, target in db.execute("SELECT source, target FROM links WHERE target LIKE 'http://%'"):
        if (urlsplit(target).hostname or "") in hosts:
            found.setdefault(source, []).append(target)
    for source, targets in sorted(found.items()):
        yield Finding(Kind.MIXED_CONTENT, source, f"{len(targets)} http:// link(s) to the https site", sorted(targets))


def duplicates(facts: SiteFacts) -> Iterator[Finding]:
    """Pages left out as the same content as a listed one (the crawl decided: reason ``duplicate``)."""
    for page in facts.pages.values():
        kept = kept_of(page.detail) if page.reason == "duplicate" else None
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
