"""The item the spider yields: facts about one URL, no decisions."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from crawler.modes import Replay
from crawler.page.news import NewsArticle
from crawler.page.videos import Video
from crawler.state.store import UNKNOWN, Unknown

if TYPE_CHECKING:
    from crawler.state.store import PageState

__all__ = ["PageFacts"]


@dataclass(slots=True)
class PageFacts:
    """One URL the crawl met, with what the pipelines need to judge it.

    ``url`` is the normalised URL that was requested (redirects are not
    followed transparently, so it is also the URL that answered). A URL that
    was never fetched carries ``error`` (a :class:`crawler.reasons.Reason`
    value) and ``detail`` instead of a status.
    """

    url: str
    status: int | None = None
    content_type: str | None = None
    redirect_to: str | None = None
    redirect_chain: list[str] = field(default_factory=list)
    robots: frozenset[str] = frozenset()
    canonical: str | None = None
    depth: int = 0
    referrer: str | None = None
    error: str | None = None
    detail: str = ""
    last_modified: str | None = None
    lang: str | None = None
    # Sitemap extensions: candidates found on the page, judged by the media rules pipeline.
    images: list[str] = field(default_factory=list)
    videos: list[Video] = field(default_factory=list)
    alternates: list[tuple[str, str]] = field(default_factory=list)  # (hreflang, URL)
    news: NewsArticle | None = None
    # For the staging audit only (SPEC S7): what a report shows and blockers are told by.
    title: str | None = None
    header_robots: list[str] = field(default_factory=list)  # raw X-Robots-Tag values
    meta_robots: list[str] = field(default_factory=list)  # raw <meta name="robots"> contents
    anchors: dict[str, str] = field(default_factory=dict)  # link clicked to -> its anchor text (not <link>s)
    response_ms: int | None = None  # Scrapy's download_latency: until the response headers arrived
    body_bytes: int | None = None  # the body, decompressed; Content-Length when it was not downloaded
    #: With --render: whether the page was rendered, why, and what rendering changed (SPEC S9).
    render: dict[str, Any] | None = None
    #: Things worth knowing about a listed URL (a video left out, ...).
    notes: list[str] = field(default_factory=list)
    # For scheduled runs (SPEC S6): what changed, and how to ask again cheaply.
    links: list[str] = field(default_factory=list)  # absolute, as found; followed on replay
    encoding: str = "utf-8"  # of the page, for the query strings of its links
    content_digest: str | None = None
    own_chars: int | None = None  # of the content's text outside links: duplicates tell link pages by their links
    modified_hint: str | None = None  # dateModified / article:modified_time, W3C
    etag: str | None = None
    header_last_modified: str | None = None  # the raw Last-Modified header
    replayed: Replay | None = None  # set when the facts come from the state store
    shard_group: str = ""  # set by the lastmod pipeline, by shard strategy
    #: What the state store held for the URL when it was requested (``None``:
    #: nothing), so the pipelines need not look it up again. Not a fact: never stored.
    stored: PageState | Unknown | None = field(default=UNKNOWN, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; shallow (no deep copy of the link list, unlike asdict)."""
        data = {name: getattr(self, name) for name in _FACT_FIELDS}
        data["robots"] = sorted(self.robots)
        data["videos"] = [video.to_dict() for video in self.videos]
        data["news"] = self.news.to_dict() if self.news else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageFacts:
        values = {k: v for k, v in data.items() if k in _KNOWN_FACTS}
        values["robots"] = frozenset(values.get("robots") or ())
        values["videos"] = [Video.from_dict(v) for v in values.get("videos") or []]
        values["alternates"] = [tuple(pair) for pair in values.get("alternates") or []]
        news = values.get("news")
        values["news"] = NewsArticle(**news) if news else None
        replayed = values.get("replayed")
        values["replayed"] = Replay(replayed) if replayed else None
        return cls(**values)


#: The fields that are facts (all but ``stored``), in order; worked out once,
#: since ``fields()`` builds a new tuple on each call.
_FACT_FIELDS = tuple(f.name for f in fields(PageFacts) if f.name != "stored")
_KNOWN_FACTS = frozenset(_FACT_FIELDS)
