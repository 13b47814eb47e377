"""A page as the browser left it, joined to the page as the server sent it (pure).

Links are the raw page's plus those only the rendered DOM has (a link a
script removed was still in the HTML a search engine fetched); everything
else, title, meta robots, canonical, alternates, media and the content
digest, is read from the rendered DOM, which is what a rendering search
engine indexes.
"""

from __future__ import annotations

from crawler.page.html import PageHtml

__all__ = ["with_rendered"]


def with_rendered(raw: PageHtml, shown: PageHtml) -> tuple[PageHtml, int]:
    """*shown* with the links of both, raw ones first, and how many links rendering added."""
    known = set(raw.links)
    added = [link for link in shown.links if link not in known]
    shown.links = raw.links + added
    shown.anchors = {**shown.anchors, **raw.anchors}
    return shown, len(added)
