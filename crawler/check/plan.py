"""The steps of a check, as a search engine takes them (pure): robots.txt, the top
sitemaps, every shard they list, then a sample of the listed URLs.

The HTTP client (a Scrapy spider) asks :meth:`SetCheck.start` for the first
fetches and hands each answer to :meth:`SetCheck.answered` (or a failure to
:meth:`SetCheck.failed`), which returns the next fetches. The top sitemaps are
all read before any shard (so the shards' shares of the sample are known),
the shards before the sample. Nothing of a shard is kept but its sample
candidates and what validate's set context keeps (hashes of the locs seen).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from protego import Protego

from crawler.check.cross import CrossHosts
from crawler.check.expected import beside, foreign_top, stale
from crawler.check.findings import ServedFinding
from crawler.check.result import CheckResult, plural
from crawler.check.sample import Listed, Sampler
from crawler.check.served import Headers, Undecodable, decode_content, judge_page, read_served
from crawler.protocol import MAX_BYTES
from crawler.robots_rules import MAX_ROBOTS_REDIRECTS, parse_robots, redirect_followed, truncated
from crawler.urls import normalize_or_raw, origin_of, resolve_link
from crawler.validate.document import DocumentCheck, Entry, SetContext
from crawler.validate.findings import Finding

__all__ = ["Fetch", "SetCheck", "is_site_root", "origin_of"]

#: The most of a sampled page's body that is read (its head says noindex and canonical).
PAGE_BYTES = 10 * 1024 * 1024


def is_site_root(url: str) -> bool:
    parts = urlsplit(url)
    return parts.path in ("", "/") and not parts.query


@dataclass(frozen=True, slots=True)
class Fetch:
    """One request: *role* robots, top (a sitemap named by robots.txt or the user), proof (another
    host's robots.txt, for an index listing its sitemaps), shard, page."""

    url: str
    role: str
    hops: int = 0  # robots.txt redirects followed so far
    shard: int = 0  # the shard's place in the set (the sample's order)
    entry: Entry | None = None  # the index entry that lists a shard
    listed: Listed | None = None  # the sampled URL's entry
    base: str = ""  # the folder URL of the top sitemap (--expect's root)
    foreign: bool = False  # another tool's set that robots.txt names beside ours (--expect has no such file)
    expect: Path | None = None  # the folder it was published from, when not --expect's (another host's)


class SetCheck:
    def __init__(
        self,
        target: str,
        *,
        user_agent: str,
        robots_agent: str = "googlebot",
        sample: int = 50,
        extra_urls: tuple[str, ...] = (),
        expect: Path | None = None,
    ) -> None:
        self.target = target
        self.user_agent = user_agent
        self.token = robots_agent
        self.extra_urls = extra_urls
        self.expect = expect
        self.origin = origin_of(target)
        self.robots: Protego | None = None
        self.robots_url = self.origin + "/robots.txt"
        self.robots_failed = False
        self.result = CheckResult(target)
        self._context = SetContext(self.origin, True)
        self._sampler = Sampler(sample, 1)
        self._pending = 0
        self._phase = "robots"
        self._shards: list[Fetch] = []
        self._seen: set[str] = set()
        self._cross = CrossHosts(target)  # an index's sitemaps on other hosts, read once their robots.txt names it
        #: How many of the sample's requests fit in the time left (the client's pace knows): all by default.
        self.fits: Callable[[int], int] = lambda wanted: wanted

    # -- the client's side ---------------------------------------------------------

    def start(self) -> list[Fetch]:
        return self._issue([Fetch(self.robots_url, "robots")])

    def answered(self, fetch: Fetch, status: int, headers: Headers, body: bytes) -> list[Fetch]:
        self._pending -= 1
        if self._phase == "over":
            return []
        if fetch.role == "robots":
            return self._robots(fetch, status, headers, body)
        if fetch.role == "proof":
            return [*self._proof(fetch, status, headers, body), *self._next()]
        if fetch.role == "page":
            self._page(fetch, status, headers, body)
        elif status != 200:
            self._sitemap_failed(fetch, f"answers HTTP {status}", headers)
        else:
            self._sitemap(fetch, headers, body)
        return self._next()

    def failed(self, fetch: Fetch, message: str, *, oversized: bool = False) -> list[Fetch]:
        """No answer (*message* says why); *oversized*: the body was larger than the client reads."""
        self._pending -= 1
        if self._phase == "over":
            return []  # cancelled at the deadline, reported by it
        if fetch.role == "robots":
            return self._robots(fetch, 0, {}, b"", message)
        if fetch.role == "proof":
            return [*self._proof(fetch, 0, {}, b""), *self._next()]
        if fetch.role == "page":
            assert fetch.listed is not None
            why = f"larger than {PAGE_BYTES:,} bytes, not read" if oversized else f"no answer ({message.rstrip('.')})"
            self._add(fetch.listed, "sample-status", f"{fetch.url}: {why}")
        elif oversized:
            self._finding(ServedFinding.at(fetch.url, "size", f"larger than {MAX_BYTES} bytes as served"))
        else:
            self._sitemap_failed(fetch, f"no answer ({message.rstrip('.')})", {})
        return self._next()

    def interrupted(self, seconds: float) -> None:
        """The total deadline ran out (the client stopped): say what was left unchecked."""
        if self._phase in ("done", "over"):
            return
        left = (
            plural(self._pending, "request")
            + " unanswered"
            + (", the sample not fetched" if self._phase != "pages" else "")
        )
        message = f"the deadline of {seconds:g} s ran out with the check unfinished: {left}"
        self._finding(ServedFinding.at(self.target, "deadline", message))
        self._phase = "over"

    @property
    def crawl_delay(self) -> float:
        """The Crawl-delay robots.txt asks of this client, 0 without one (or before robots.txt is read)."""
        asked = self.robots.crawl_delay(self.user_agent) if self.robots is not None else None
        return float(asked) if asked and asked > 0 else 0.0

    def finish(self, elapsed: float) -> CheckResult:
        self.result.elapsed = elapsed
        self.result.findings.sort(key=lambda finding: (finding.file, finding.line, finding.col))
        return self.result

    # -- the steps -----------------------------------------------------------------

    def _issue(self, fetches: list[Fetch]) -> list[Fetch]:
        self._pending += len(fetches)
        return fetches

    def _finding(self, finding: ServedFinding) -> None:
        self.result.findings.append(finding)

    def _robots(self, fetch: Fetch, status: int, headers: Headers, body: bytes, failure: str = "") -> list[Fetch]:
        if 300 <= status < 400 and fetch.hops < MAX_ROBOTS_REDIRECTS:
            target = resolve_link(fetch.url, (headers.get("location") or [""])[0])
            if target and redirect_followed(self.origin, target):
                return self._issue([Fetch(target, "robots", hops=fetch.hops + 1)])
        lines: list[str] = []
        if status == 200:
            try:
                body = decode_content(body, ", ".join(headers.get("content-encoding", [])))
            except Undecodable:
                body = b""  # read as an empty robots.txt
            self.robots = parse_robots(truncated(body))
            lines = [normalize_or_raw(line) for line in self.robots.sitemaps]
        elif status >= 500 or not status:
            self.robots_failed = True
            why = f"answers HTTP {status}" if status else f"no answer ({failure.rstrip('.')})"
            message = f"robots.txt {why}; a search engine reads the whole site as disallowed until it answers"
            self._finding(ServedFinding.at(self.robots_url, "robots", message))
        tops = self._tops(lines, status)
        self.result.sitemaps = tops
        self._phase = "tops"
        fetches = [
            Fetch(url, "top", shard=number - len(tops), base=url.rsplit("/", 1)[0] + "/", foreign=self._foreign(url))
            for number, url in enumerate(tops)
        ]
        return self._issue([self._sitemap_fetch(fetch) for fetch in fetches])

    def _tops(self, lines: list[str], status: int) -> list[str]:
        """The top sitemaps to read, and whether robots.txt names them."""
        own = [line for line in dict.fromkeys(lines) if origin_of(line) == self.origin]
        why = "" if status == 200 else f" (robots.txt answers HTTP {status})" if status else ""
        if is_site_root(self.target):
            if own or self.robots_failed:  # a robots.txt that failed is reported already
                return own or [self.origin + "/sitemap.xml"]
            fallback = self.origin + "/sitemap.xml"
            message = f"no Sitemap: line on {self.origin}{why}: search engines must be told of {fallback} by hand"
            self._finding(ServedFinding.at(self.robots_url, "robots-sitemap", message))
            return [fallback]
        target = normalize_or_raw(self.target)
        if target not in lines and not self.robots_failed:
            named = f" (it names {', '.join(own[:3])})" if own else ""
            message = f"no Sitemap: line names {self.target}{why}{named}: add 'Sitemap: {self.target}'"
            self._finding(ServedFinding.at(self.robots_url, "robots-sitemap", message))
        return [self.target]

    def _foreign(self, top: str) -> bool:
        """Whether *top*, named by robots.txt, is another tool's sitemap (crawler/check/expected.py)."""
        if self.expect is None or top == normalize_or_raw(self.target):
            return False
        message = foreign_top(self.expect, top)
        if message is not None:
            self._finding(ServedFinding.at(self.robots_url, "other-sitemap", message))
        return message is not None

    def _sitemap_fetch(self, fetch: Fetch) -> Fetch:
        """*fetch*, after noting whether robots.txt (its host's) lets a search engine read it."""
        robots = self.robots if origin_of(fetch.url) == self.origin else self._cross.rules.get(origin_of(fetch.url))
        if robots is not None and not robots.can_fetch(fetch.url, self.user_agent):
            entry = fetch.entry
            where = (entry.file, entry.line, entry.col) if entry else (self.robots_url, 1, 1)
            message = f"robots.txt disallows {fetch.url} for {self.user_agent}"
            self._finding(ServedFinding(*where, "robots-blocked", message, fetch.url))
        return fetch

    def _sitemap_failed(self, fetch: Fetch, why: str, headers: Headers) -> None:
        location = headers.get("location")
        message = f"{fetch.url} {why}" + (f" to {location[0]}" if location else "")
        entry = fetch.entry
        where = (entry.file, entry.line, entry.col) if entry else (fetch.url, 1, 1)
        self._finding(ServedFinding(*where, "status", message, fetch.url))

    def _sitemap(self, fetch: Fetch, headers: Headers, body: bytes) -> None:
        self.result.files += 1
        served = read_served(fetch.url, headers, body)
        del body
        for rule, message in served.problems:
            self._finding(ServedFinding.at(fetch.url, rule, message))
        if served.document is None:
            return
        if (fetch.expect or self.expect) is not None and not fetch.foreign:
            self._compare(fetch, served.document)
        check = DocumentCheck(fetch.url, self._cross.contexts.get(origin_of(fetch.url), self._context))
        children: list[Entry] = []
        held: list[Finding] = []  # a top index's entries on other hosts: their robots.txt may vouch for them
        for item in check.run(served.document):
            if isinstance(item, Finding) and item.rule == "host" and check.kind == "sitemapindex":
                held.append(item)
            elif not isinstance(item, Entry):
                self._finding(ServedFinding.of(item))
            elif item.kind == "url":
                self.result.urls += 1
                if origin_of(item.loc) == self.origin:  # another origin's loc is a host finding, never fetched
                    self._sampler.offer(fetch.shard, Listed(item.loc, item.file, item.line, item.col))
            elif fetch.role == "top":
                children.append(item)
        if check.kind == "sitemapindex" and fetch.role == "shard":
            assert fetch.entry is not None
            message = f"{fetch.url} is an index: an index may not list another index"
            entry = fetch.entry
            self._finding(ServedFinding(entry.file, entry.line, entry.col, "nested-index", message, fetch.url))
        for entry in children:
            if origin_of(entry.loc) != self.origin:
                self._cross.offer(entry, fetch.url)  # judged by its host's robots.txt, if it is the site's
            elif entry.loc not in self._seen:
                self._seen.add(entry.loc)
                self._shards.append(Fetch(entry.loc, "shard", entry=entry, base=fetch.base, foreign=fetch.foreign))
        self.result.findings += [ServedFinding.of(finding) for finding in held if not self._cross.offered(finding)]

    def _proof(self, fetch: Fetch, status: int, headers: Headers, body: bytes) -> list[Fetch]:
        """Another host's robots.txt, read for the Sitemap: line that lets an index here list its
        sitemaps; --expect OUT/HOST compares such a file with OUT/ITS-HOST, when there is one."""
        origin = fetch.base or origin_of(fetch.url)  # a redirect's target keeps the host it is for
        if target := self._cross.redirected(origin, status, headers, fetch.hops):
            return self._issue([Fetch(target, "proof", hops=fetch.hops + 1, base=origin)])
        proven, findings = self._cross.proved(origin, status, headers, body)
        self.result.findings += findings
        for entry in (entry for entry, _ in proven if entry.loc not in self._seen):
            self._seen.add(entry.loc)
            expect, base = beside(self.expect, entry.loc), entry.loc.rsplit("/", 1)[0] + "/"
            self._shards.append(Fetch(entry.loc, "shard", entry=entry, base=base, foreign=not expect, expect=expect))
        return []

    def _compare(self, fetch: Fetch, document: bytes) -> None:
        expect = fetch.expect or self.expect
        assert expect is not None
        if fetch.url.startswith(fetch.base) and (message := stale(expect, fetch.url, fetch.base, document)):
            self._finding(ServedFinding.at(fetch.url, "stale", message))

    def _next(self) -> list[Fetch]:
        if self._pending or self._phase in ("done", "over", "pages"):
            if self._phase == "pages" and not self._pending:
                self._phase = "done"
            return []
        if self._phase == "tops" and self._cross.waiting:
            self._phase = "proofs"
            return self._issue([Fetch(url, "proof") for url in self._cross.robots_urls()])
        if self._phase in ("tops", "proofs"):
            self._phase = "shards"
            shards = self._shards
            self._shards = []
            self._sampler.shards = max(len(shards), 1)
            placed = [replace(f, shard=number + 1) for number, f in enumerate(shards)]
            fetches = [self._sitemap_fetch(fetch) for fetch in placed]
            if fetches:
                return self._issue(fetches)
        self._phase = "pages"
        fetches = self._pages()
        if not fetches:
            self._phase = "done"
        return self._issue(fetches)

    def _pages(self) -> list[Fetch]:
        chosen = self._sampler.chosen()
        known = {listed.loc for listed in chosen}
        extra = (url for url in dict.fromkeys(self.extra_urls) if url not in known and origin_of(url) == self.origin)
        chosen += [Listed(url, url, 1, 1) for url in extra]
        fetches: list[Fetch] = []
        for listed in chosen:
            if self.robots is not None and not self.robots.can_fetch(listed.loc, self.user_agent):
                self.result.sampled += 1
                self._add(listed, "sample-robots", f"robots.txt disallows {listed.loc} for {self.user_agent}")
            else:
                fetches.append(Fetch(listed.loc, "page", listed=listed))
        if (room := max(0, self.fits(len(fetches)))) < len(fetches):
            message = (
                f"robots.txt's Crawl-delay of {self.crawl_delay:g} s leaves time for {room} of the {len(fetches)} "
                "sampled URLs before the deadline; the rest were not fetched (raise --deadline or lower --sample)"
            )
            self._finding(ServedFinding.at(self.robots_url, "sample-cut", message))
            fetches = [fetches[n * len(fetches) // room] for n in range(room)]  # spread over the shards
        self.result.sampled += len(fetches)
        return fetches

    def _page(self, fetch: Fetch, status: int, headers: Headers, body: bytes) -> None:
        assert fetch.listed is not None
        try:
            body = decode_content(body, ", ".join(headers.get("content-encoding", [])), PAGE_BYTES)
        except Undecodable:
            body = b""  # its status and headers still say what they say
        for rule, message in judge_page(fetch.url, status, headers, body, self.token):
            self._add(fetch.listed, rule, message)

    def _add(self, listed: Listed, rule: str, message: str) -> None:
        self._finding(ServedFinding(listed.file, listed.line, listed.col, rule, message, listed.loc))
