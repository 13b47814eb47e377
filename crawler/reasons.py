"""Why a URL is left out of the sitemap: stable reason codes (SPEC S3).

The codes are part of the report format (``crawl-report.jsonl``) and of the
Scrapy stats keys (``sitemap/dropped/<reason>``); never rename one. The
exceptions carry them through Scrapy's own channels: ``DropItem`` for an
item, ``IgnoreRequest`` for a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from scrapy.exceptions import DropItem, IgnoreRequest

__all__ = [
    "MEANINGS", "WARNINGS", "Excluded", "Limit", "OutOfScope", "Outcome", "Reason", "RobotsDisallowed",
    "host_pages_spent", "hosts_spent", "outcome_of", "pages_spent",
]  # fmt: skip


class Reason(StrEnum):
    REDIRECT = "redirect"
    STATUS = "status"
    FETCH_ERROR = "fetch-error"
    NOINDEX = "noindex"
    CANONICALISED = "canonicalised"
    CONTENT_TYPE = "content-type"
    ROBOTS = "robots"
    OUT_OF_SCOPE = "out-of-scope"
    EXCLUDED = "excluded"
    LIMIT = "limit"
    REMOVED = "removed"  # dropped by `update --remove`
    UNREADABLE = "unreadable"  # a body that could not be decoded or parsed
    DUPLICATE = "duplicate"  # the same content as a page already listed, named in the detail
    RENDER_FAILED = "render-failed"  # --render: the page's render failed, and no earlier facts to keep


#: What each reason means, in the order a URL meets the rules: the reference's table of reasons.
MEANINGS: dict[Reason, str] = {
    Reason.FETCH_ERROR: "no response after retries (DNS, refused, timeout); a body over DOWNLOAD_MAXSIZE "
    "(32 MiB), on the wire or once decompressed, says `body over N bytes`",
    Reason.ROBOTS: "robots.txt disallows it for the user agent (never requested)",
    Reason.OUT_OF_SCOPE: "another scheme, host or port than the start URL's (never requested)",
    Reason.LIMIT: "over a crawl limit (never requested); the detail says which: depth, url_length, "
    "query_variants or pages",
    Reason.REDIRECT: "a 3xx answer; `redirect_to` names the target; the last hop followed of a chain longer "
    "than --max-redirects says `chain too long`",
    Reason.UNREADABLE: "a 200 HTML page whose body could not be decoded or parsed",
    Reason.REMOVED: "dropped by `update --remove`",
    Reason.RENDER_FAILED: "with --render, a page whose render failed (timeout, crash, memory, requests): never "
    "judged on its unrendered HTML; with a state store that knows the page its previous facts stand instead",
    Reason.STATUS: "any status other than 200 (404, 410, 500 after retries, ...)",
    Reason.EXCLUDED: "matches --exclude, or matches no --include (the page is still crawled, its links followed)",
    Reason.CONTENT_TYPE: "not text/html or application/xhtml+xml, unless allowed by --allow-type",
    Reason.NOINDEX: '`noindex` or `none` in `<meta name="robots">`, in `<meta name="TOKEN">` for the '
    "crawler token (googlebot by default), or in an X-Robots-Tag header (plain or `TOKEN: noindex`)",
    Reason.CANONICALISED: '`<link rel="canonical">` or a `Link: <...>; rel="canonical"` header names another '
    "URL (compared after normalisation; the target is crawled); conflicting canonicals are ignored",
    Reason.DUPLICATE: "the same content as a page already listed (title and visible text with volatile parts "
    "blanked, images, links); the detail names the one kept; --keep-duplicates lists them all",
}

#: The codes of the report's ``"outcome": "warning"`` lines: findings that need the whole site or
#: say what a run could not read. Sent with the ``url_warning`` signal; never rename one.
WARNINGS: dict[str, str] = {
    "hreflang-not-reciprocal": "an hreflang alternate that does not link back",
    "hreflang-not-indexable": "an hreflang alternate that is not listed (see its own report line)",
    "hreflang-no-self": "a page with alternates that does not list itself, and no version names it",
    "entry-cut": "a `<url>` entry too big for one sitemap file lost its last images, videos or alternates",
    "entry-too-big": "a `<url>` entry too big for one sitemap file even when cut: left out, the rest published",
    "robots-truncated": "robots.txt over 500 KiB: only the first 500 KiB read, as Google does",
    "robots-not-text": "robots.txt answered with an HTML page (served as HTML, after any redirect): read as no "
    "robots.txt, as RFC 9309 reads a file without rules",
    "robots-unavailable": "robots.txt redirects off the site or too often (RFC 9309): read as no robots.txt",
    "sitemap-other-origin": "robots.txt names a sitemap on another origin: not read",
    "not-itemised": "one line counting the URLs never requested that got no line of their own (--max-not-requested)",
    "canonical-redirects-back": "a page whose canonical redirects back to it (a server adding the trailing "
    "slash the canonical lacks): listed as its own canonical, as search engines index it",
    "render-fetch": "a request of a rendered page refused (another origin, a method, a type) or failed",
    "list-invalid": "list mode (--urls): a line of the list that is no http(s) URL, with its number",
}


class Limit(StrEnum):
    """Which crawl limit stopped a request (``sitemap/limit/<kind>`` in the stats)."""

    DEPTH = "depth"
    URL_LENGTH = "url_length"
    QUERY_VARIANTS = "query_variants"
    PAGES = "pages"
    HOSTS = "hosts"
    HOST_PAGES = "host_pages"


def pages_spent(max_pages: int) -> str:
    """The detail of a page left out because the page budget is spent."""
    return f"max pages {max_pages} reached"


def hosts_spent(max_hosts: int) -> str:
    """The detail of a page left out because the crawl has taken in its most hosts."""
    return f"more than {max_hosts} hosts in the crawl"


def host_pages_spent(max_pages: int, host: str) -> str:
    """The detail of a page left out because its host's page budget is spent."""
    return f"max pages {max_pages} per host reached on {host}"


class Excluded(DropItem):
    """An expected exclusion: logged at DEBUG, recorded with its reason."""

    def __init__(self, reason: Reason, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else str(reason), log_level="DEBUG")
        self.reason = reason
        self.detail = detail


#: The reason of an item a pipeline dropped with a plain ``DropItem`` (or any other exception).
UNEXPECTED = "error"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one URL, decided once (:func:`outcome_of`) for every writer of it: the
    crawl report, the state store and the audit record."""

    reason: str | None  # None: listed; else the reason it was left out
    detail: str = ""

    @property
    def listed(self) -> bool:
        return self.reason is None

    @property
    def word(self) -> str:
        """The report's ``outcome``: ``listed`` or ``excluded``."""
        return "listed" if self.reason is None else "excluded"


def outcome_of(exception: BaseException | None) -> Outcome:
    """The outcome of an item scraped (no exception) or dropped (with its exception)."""
    if exception is None:
        return Outcome(None)
    if isinstance(exception, Excluded):
        return Outcome(str(exception.reason), exception.detail)
    return Outcome(UNEXPECTED, str(exception))


class RobotsDisallowed(IgnoreRequest):
    """robots.txt forbids the request for the configured user agent."""


class OutOfScope(IgnoreRequest):
    """The request is not on the crawl's origin (the scope guard's refusal)."""
