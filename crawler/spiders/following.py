"""The spider's part that follows links: which URL a page leads to is requested, and which
becomes a fact saying why not (out of scope, robots.txt, a limit).

Every decision on a page's links, the page budget's included, is made before the first of
their requests leaves the spider. Otherwise the first links of the home page are fetched and
parsed while the spider is still yielding the rest, and their own links (one level deeper)
take the budget first: under ``--max-pages 2000`` on a site of 316 sections, 67 of them were
listed and the rest lost to pages of the first few. Decided first and built after, a page's
admitted links cost a tuple each until their request is made.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import TYPE_CHECKING, NamedTuple

from scrapy import Request, Spider

from crawler.items import PageFacts
from crawler.reasons import Limit, Reason
from crawler.run.robots import VOUCH, SiteRules
from crawler.spiders.page_request import PageRequest
from crawler.stats import limit
from crawler.urls import normalize_url

if TYPE_CHECKING:
    from scrapy.robotstxt import RobotParser
    from twisted.python.failure import Failure

    from crawler.run.context import CrawlContext
    from crawler.scope import Scope
    from crawler.spiders.frontier import Frontier
    from crawler.urls import UrlSet
    from settings.config import SitemapConfig

__all__ = ["Admitted", "Following"]


class Admitted(NamedTuple):
    """A URL the rules let through, its budget reserved: its request is still to be built."""

    url: str
    depth: int
    referrer: str | None
    chain: list[str] | None
    vouch: str | None  # robots.txt's match of this URL, for the middleware (SiteRules.mark)


class Following(Spider):
    config: SitemapConfig
    context: CrawlContext
    scope: Scope
    robots_agent: str
    seen: UrlSet  # raw and normalised spellings of every URL already handled
    held: dict[str, PageFacts]
    frontier: Frontier
    robots: dict[str, RobotParser]  # origin -> its rules, once its robots.txt is read
    own_files: tuple[str, ...]  # paths under the base folder: our staging folders and manifest

    if TYPE_CHECKING:

        def may_hold(self) -> bool: ...  # SitemapSeeds'

        def failed(self, failure: Failure) -> Iterator[PageFacts]: ...  # SiteSpider's

    def follow_url(
        self,
        raw_url: str,
        *,
        depth: int,
        referrer: str | None,
        encoding: str = "utf-8",
        chain: list[str] | None = None,
        listed_by_site: bool = False,
    ) -> Iterator[Request | PageFacts]:
        """A Request for a URL not seen before, or a fact saying why it is not requested."""
        admitted = self.admit(
            raw_url, depth=depth, referrer=referrer, encoding=encoding, chain=chain, listed_by_site=listed_by_site
        )
        if admitted is not None:
            yield self.page_request(admitted) if isinstance(admitted, Admitted) else admitted

    def admit(
        self,
        raw_url: str,
        *,
        depth: int,
        referrer: str | None,
        encoding: str = "utf-8",
        chain: list[str] | None = None,
        listed_by_site: bool = False,
    ) -> Admitted | PageFacts | None:
        """The URL to request (its budget reserved), a fact saying why it is not requested, or
        nothing (seen before, or only counted).

        Nothing is admitted past the page budget, and past a number of report
        lines per reason a URL that is not requested is only counted (and not
        remembered), so a page of 10,000 links into a trap costs little.
        """
        seen = self.seen
        if raw_url in seen and not (listed_by_site and self.held):
            return None
        frontier = self.frontier
        if frontier.counting_only:
            frontier.count_past_budget()
            return None
        try:
            url = normalize_url(raw_url, encoding, self.config.strip_params)
        except ValueError:
            seen.add(raw_url)
            return None  # not http(s), or a broken URL: nothing a sitemap could list
        if url in seen:
            if not (listed_by_site and self.held.pop(url, None) is not None):
                seen.add(raw_url)
                return None
            self.crawler.stats.inc_value(limit(Limit.QUERY_VARIANTS), -1)  # held, then vouched for
        error, detail, over = None, "", None
        if not self.scope.contains(url):
            error = Reason.OUT_OF_SCOPE
        elif url.startswith(self.own_files, url.find("/", 8)):
            error, detail = Reason.EXCLUDED, "a file of sitemap-crawler's own (staging or manifest)"
        elif (rules := self.robots.get(url[: url.find("/", 8)])) is not None and not rules.allowed(
            url, self.robots_agent
        ):
            error, detail = Reason.ROBOTS, "disallowed by robots.txt"
        elif over := frontier.over(url, depth, listed_by_site=listed_by_site):
            self.crawler.stats.inc_value(limit(over[0]))
            error, detail = Reason.LIMIT, over[1]
        if error is not None and not frontier.itemise(error):
            return None
        seen.add(raw_url)
        seen.add(url)
        if error is not None:
            facts = PageFacts(
                url=url, error=error, detail=detail, depth=depth, referrer=referrer, redirect_chain=chain or []
            )
            if over and over[0] is Limit.QUERY_VARIANTS and self.may_hold():
                self.held[url] = facts  # a seed sitemap still to read may list it
                return None
            return facts
        frontier.reserve(url)
        if (flying := self.context.in_flight) is not None:
            flying.add(url)
        # Matched above: the robots middleware need not match it again.
        vouch = rules.mark(url) if isinstance(rules, SiteRules) else None
        return Admitted(url, depth, referrer, chain, vouch)

    def page_request(self, admitted: Admitted) -> Request:
        url, depth, referrer, chain, vouch = admitted
        meta = {"depth": depth, "referrer": referrer, "redirect_chain": chain or [], "page": True}
        if vouch is not None:
            meta[VOUCH] = vouch
        # Breadth first: the scheduler serves the lowest depth first.
        return PageRequest(url, callback=self.parse, errback=self.failed, meta=meta, priority=-depth)

    def leads(self, facts: PageFacts) -> tuple[list[str], int]:
        """What a page leads to, and at which depth: its redirect target, or
        its canonical and its links (unless it says nofollow)."""
        if facts.redirect_to:
            # One hop at a time: every URL of a chain is reported, up to the cap.
            if len(facts.redirect_chain) >= self.config.max_redirects:
                return [], facts.depth
            return [facts.redirect_to], facts.depth
        urls = [facts.canonical] if facts.canonical and facts.canonical != facts.url else []
        if "nofollow" not in facts.robots or self.config.follow_nofollow:
            urls += facts.links
        return urls, facts.depth + 1

    def targets(self, facts: PageFacts, known: Container[str] = frozenset()) -> list[tuple[str, int]]:
        """(URL, depth) of what a page leads to, leaving out the *known* ones
        first, since on most pages nearly all links are."""
        urls, depth = self.leads(facts)
        return [(url, depth) for url in urls if url not in known]

    def follow_targets(self, facts: PageFacts, referrer: str) -> Iterator[Request | PageFacts]:
        if not self.config.follows_links:
            return  # an update, or list mode, fetches the URLs it was given, nothing else
        if self.frontier.counting_only:
            # Past the budget a link costs a count: one set lookup (a known URL is not counted),
            # no normalisation, no check, no call per link.
            urls, _ = self.leads(facts)
            self.frontier.count_past_budget(len(urls) - sum(map(self.seen.__contains__, urls)))
            return
        chain = [*facts.redirect_chain, facts.url] if facts.redirect_to else None
        admitted = [
            each
            for target, depth in self.targets(facts, self.seen)
            if (each := self.admit(target, depth=depth, referrer=referrer, encoding=facts.encoding, chain=chain))
            is not None
        ]  # every decision first (see the module's docstring), then the requests one by one
        for each in admitted:
            yield self.page_request(each) if isinstance(each, Admitted) else each
