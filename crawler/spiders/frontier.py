"""What the crawl may still request: the page budget and the per-URL limits (SPEC S2).

The spider asks before it builds a Request, so the frontier never holds
more requests than the remaining page budget, whatever a page links to.
Links met once the budget is fully reserved are not queued and, past a
number of report lines per reason, not even remembered: they are counted,
and the report gives one summary line for them (pure, no Scrapy).
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import unquote_plus, urlsplit

from crawler.reasons import Limit, Reason, host_pages_spent, hosts_spent, pages_spent

__all__ = ["PATH_VARIANTS_FACTOR", "Frontier", "variant_key"]


#: A path may have this many times the variants of one parameter set in all (a wiki's
#: ``Special:`` pages and faceted navigation combine parameters into many sets).
PATH_VARIANTS_FACTOR = 10


def variant_key(url: str) -> tuple[str, str] | None:
    """``(host/path, kind)`` of a URL with a query string or path parameters
    (``;jsessionid=...``), the parts that make endless variants of one page; the kind is
    the set of parameter names (``?p=`` and ``?cat=`` are different kinds of page, in the
    query string of a CMS with plain permalinks); ``None`` for a URL with neither."""
    if "?" not in url and ";" not in url:
        return None
    parts = urlsplit(url)
    if not parts.query and ";" not in parts.path:
        return None
    segments = [segment.split(";", 1) for segment in parts.path.split("/")]
    path = "/".join(segment[0] for segment in segments)
    names = {unquote_plus(pair.partition("=")[0]) for pair in parts.query.split("&") if pair}  # ?%61= is ?a=
    names.update(";" + segment[1].partition("=")[0] for segment in segments if len(segment) > 1)
    return f"{parts.netloc}{path}", ",".join(sorted(names))


class Frontier:
    """Page budget (*max_pages*, 0 = none), depth, URL length and variant caps,
    and how many URLs that are never requested get a report line of their own
    (*max_lines* per reason)."""

    def __init__(
        self,
        max_pages: int,
        max_depth: int,
        max_url_length: int,
        max_variants: int,
        max_lines: int,
        *,
        max_hosts: int = 0,
        max_pages_per_host: int = 0,
    ):
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.max_url_length = max_url_length
        self.max_variants = max_variants
        self.max_lines = max_lines
        self.reserved = 0  # page requests built that may still use the budget
        self.spent = False  # the budget is used up by others too (the workers of a shared crawl)
        # Query variants by path and parameter names, and by path: kept as hashes (these grow with
        # the paths of a site that puts its content in the query string).
        self.variants: Counter[int] = Counter()
        self.path_variants: Counter[int] = Counter()
        self.lines: Counter[str] = Counter()  # report lines given, by reason
        self.not_itemised: Counter[str] = Counter()  # URLs only counted, by reason
        self.past_budget = 0  # of those, links met once the page budget was spent
        self.max_hosts = max_hosts  # a crawl of several hosts takes in this many at most (0: one host)
        self.hosts: set[str] = set()
        self.max_pages_per_host = max_pages_per_host  # each host's share of the page budget (0: none)
        self.host_reserved: Counter[str] = Counter()  # page requests built, by host (at most max_hosts)

    @property
    def full(self) -> bool:
        """The page budget is fully reserved: no new page may be queued."""
        return self.spent or (bool(self.max_pages) and self.reserved >= self.max_pages)

    @property
    def counting_only(self) -> bool:
        """Past the page budget, with every ``limit`` report line given: a new
        link can only be counted, so it is neither normalised nor checked."""
        return self.full and self.saturated(Reason.LIMIT)

    def count(self, reason: str, urls: int = 1) -> None:
        """*urls* left out for *reason* without a line of their own (the summary counts them)."""
        self.not_itemised[reason] += urls

    def count_past_budget(self, urls: int = 1) -> None:
        """*urls* met once the page budget was spent: only counted (the summary names the budget)."""
        self.count(Reason.LIMIT, urls)
        self.past_budget += urls

    def over(self, url: str, depth: int, *, listed_by_site: bool = False) -> tuple[Limit, str] | None:
        """The limit *url* at *depth* is over, with a detail for the report, or ``None``.

        A URL the site's own sitemap lists is not a trap's variant: it is not counted
        against the query-variant cap (a blog's ``/?p=ID`` posts, past any cap)."""
        if self.max_depth and depth > self.max_depth:
            return Limit.DEPTH, f"depth {depth} > max depth {self.max_depth}"
        if len(url) > self.max_url_length:
            return Limit.URL_LENGTH, f"URL length {len(url)} > {self.max_url_length}"
        if self.max_variants and not listed_by_site and (over := self._too_many_variants(url)):
            return Limit.QUERY_VARIANTS, over
        host = url[: url.find("/", 8)]  # scheme://host[:port]
        if self.max_hosts and host not in self.hosts:
            if len(self.hosts) >= self.max_hosts:
                return Limit.HOSTS, hosts_spent(self.max_hosts)
            self.hosts.add(host)
        if self.max_pages_per_host and self.host_reserved[host] >= self.max_pages_per_host:
            return Limit.HOST_PAGES, host_pages_spent(self.max_pages_per_host, host)
        if self.full:
            return Limit.PAGES, pages_spent(self.max_pages)
        return None

    def _too_many_variants(self, url: str) -> str | None:
        """Counts *url* as a variant of its path and parameter set; why it is one too many, if it is."""
        key = variant_key(url)
        if key is None:
            return None
        path, kind = key
        by_names, by_path = hash(key), hash(path)
        self.variants[by_names] += 1
        self.path_variants[by_path] += 1
        shown = path[path.find("/") :] if "/" in path else "/"
        if self.variants[by_names] > self.max_variants:
            named = f" with parameters {kind}" if kind else ""
            return f"more than {self.max_variants} query variants of {shown}{named}"
        if self.path_variants[by_path] > self.max_variants * PATH_VARIANTS_FACTOR:
            return f"more than {self.max_variants * PATH_VARIANTS_FACTOR} query variants of {shown} (all parameters)"
        return None

    def spend(self, max_pages: int) -> None:
        """The shared budget of *max_pages* is used up: no page is queued from now on."""
        self.max_pages = max_pages
        self.spent = True

    def reserve(self, url: str) -> None:
        self.reserved += 1
        if self.max_pages_per_host:
            self.host_reserved[url[: url.find("/", 8)]] += 1

    def release(self, url: str) -> None:
        """A queued page was never requested (robots.txt, scope): its budget is free again."""
        self.reserved -= 1
        if self.max_pages_per_host:
            self.host_reserved[url[: url.find("/", 8)]] -= 1

    def itemise(self, reason: str) -> bool:
        """Whether a URL left out for *reason* without a request gets a report line;
        if not, it is counted for the summary."""
        if self.lines[reason] < self.max_lines:
            self.lines[reason] += 1
            return True
        self.count(reason)
        return False

    def not_itemised_detail(self) -> str | None:
        """The report's one line for the URLs only counted, if there are any."""
        if not self.not_itemised:
            return None
        parts = ", ".join(f"{count} {kind}" for kind, count in sorted(self.not_itemised.items()))
        return (
            f"links to URLs never requested, counted but without a line of their own: {parts}"
            f" (after {self.max_lines} lines per reason; see --max-not-requested)"
        )

    def saturated(self, reason: str) -> bool:
        """No more report lines for *reason*: new URLs of that kind are only counted."""
        return self.lines[reason] >= self.max_lines
