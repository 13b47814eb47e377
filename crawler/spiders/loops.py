"""Canonicals that lead back to their page (pure, no Scrapy; SPEC S11).

A static site generator that canonicalises ``/docs/intro`` while writing
``docs/intro/index.html`` gets, behind a server that adds the trailing slash
(nginx's default, GitHub Pages), ``/docs/intro`` -> ``301`` -> ``/docs/intro/``
whose canonical is ``/docs/intro``. A search engine that follows the canonical
ends on the page it came from and indexes it; so the page is self-canonical,
not "canonicalised" to a URL that cannot be listed.

:class:`Leads` remembers where each redirect and each other-canonical page of
the crawl leads (one entry per such URL), and tells whether a canonical comes
back to the page within a number of hops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.items import PageFacts

__all__ = ["MAX_LEADS", "Leads", "loop_fix"]

#: Redirects and canonicals remembered (about 200 bytes each): past them, a loop is still found
#: through the redirects that led to the page itself.
MAX_LEADS = 200_000


class Leads:
    """URL -> the URL it leads to (its redirect target, or its canonical when that is another URL)."""

    def __init__(self) -> None:
        self._to: dict[str, str] = {}

    def record(self, url: str, target: str) -> None:
        if len(self._to) < MAX_LEADS:
            self._to[url] = target

    def settle(self, facts: PageFacts, max_hops: int) -> str | None:
        """Remember where *facts*' URL leads; when its canonical leads back to it, make it its own
        canonical and say what to fix on the site. Its hreflang alternates that lead back to it
        (a generator's slash-less URLs) are the page itself too."""
        if facts.redirect_to:
            self.record(facts.url, facts.redirect_to)
            return None
        url, chain = facts.url, facts.redirect_chain
        if facts.alternates and chain:
            facts.alternates = [(lang, url if href in chain else href) for lang, href in facts.alternates]
        canonical = facts.canonical
        if not canonical or canonical == url:
            return None
        if not self.loops_back(url, canonical, chain, max_hops):
            self.record(url, canonical)
            return None
        facts.canonical = url
        return loop_fix(url, canonical)

    def loops_back(self, url: str, canonical: str, came_through: Sequence[str], max_hops: int) -> bool:
        """Whether *canonical* (another URL than *url*) leads back to *url*: it is one of the
        redirects *url* was reached through, or its known redirects and canonicals, followed
        for at most *max_hops*, end on *url*."""
        if canonical in came_through:
            return True
        current = canonical
        for _ in range(max_hops):
            following = self._to.get(current)
            if following is None:
                return False
            if following == url:
                return True
            current = following
        return False


def loop_fix(url: str, canonical: str) -> str:
    """What to change on the site, in words (the report's warning detail)."""
    said = f"the canonical {canonical} leads back here through a redirect: listed as its own canonical"
    if url.rstrip("/") == canonical.rstrip("/"):
        if url.endswith("/"):
            why = "the server adds a trailing slash that the canonical lacks"
        else:
            why = "the server removes the trailing slash that the canonical has"
        return f"{said}; {why}: set the generator's trailing-slash option or the server's"
    return f"{said}; make the canonical name the URL that answers 200"
