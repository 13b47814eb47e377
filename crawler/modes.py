"""What kind of run a crawl is, and why an item's facts were replayed."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Replay", "RunMode"]


class RunMode(StrEnum):
    """How a run finds its URLs."""

    #: Follow links from the start URL (and the robots.txt sitemaps).
    CRAWL = "crawl"
    #: `sitemap-crawler update`: fetch only the --add URLs, drop the --remove
    #: ones, carry every other URL of the last published run forward.
    UPDATE = "update"
    #: `--resume`: continue the interrupted last run; URLs it handled are
    #: replayed from the state store, the rest of the frontier is fetched.
    RESUME = "resume"


class Replay(StrEnum):
    """Why an item's facts come from the state store rather than a body.

    The values are stored with the facts; never rename one.
    """

    #: The server answered 304 to a conditional request.
    NOT_MODIFIED = "304"
    #: A resumed run already handled the URL before the interruption.
    RESUMED = "resume"
    #: The page's render failed (--render): what the store last saw stands.
    RENDER_FAILED = "render-failed"
