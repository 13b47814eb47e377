"""Sitemaps of other hosts listed by an index (cross-submission, pure).

An index may list sitemaps on other hosts (``--index-host`` writes one such):
search engines take them only when that host's robots.txt names the index in
a ``Sitemap:`` line, the proof that the other host's owner sent them there.
:class:`CrossHosts` keeps such entries apart while the top sitemaps are read,
says which robots.txt files to fetch (following their redirects as for the
site's own), and turns each answer into the entries to read (each on its own
origin, with a set context and robots.txt rules of its own) or a finding.

What a checked site says never sends the check elsewhere: only hosts of the
checked URL's own site (its registrable domain) are asked, at most
:data:`MAX_CROSS_HOSTS` of them; an entry on any other host stays a ``host``
finding, never fetched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protego import Protego

from crawler.check.findings import ServedFinding
from crawler.check.result import plural
from crawler.check.served import Headers, Undecodable, decode_content
from crawler.robots_rules import MAX_ROBOTS_REDIRECTS, parse_robots, redirect_followed, truncated
from crawler.scope import Scope
from crawler.urls import normalize_or_raw, origin_of, resolve_link
from crawler.validate.document import Entry, SetContext
from crawler.validate.findings import Finding

__all__ = ["MAX_CROSS_HOSTS", "CrossHosts"]

#: Other hosts whose robots.txt one check reads at most (a made-up index could name thousands).
MAX_CROSS_HOSTS = 100


@dataclass(slots=True)
class CrossHosts:
    target: str  # the checked URL: its site's hosts are the only others asked
    #: other origin -> (entry, the index listing it), waiting for that origin's robots.txt
    waiting: dict[str, list[tuple[Entry, str]]] = field(default_factory=dict)
    contexts: dict[str, SetContext] = field(default_factory=dict)  # a proven origin -> the context of its files
    rules: dict[str, Protego] = field(default_factory=dict)  # a proven origin -> its robots.txt
    taken: set[tuple[str, int, int]] = field(default_factory=set)  # where the entries kept are (file, line, col)
    site: Scope = field(init=False)

    def __post_init__(self) -> None:
        self.site = Scope(self.target)

    def offer(self, entry: Entry, index: str) -> None:
        """An entry of *index* on another host: kept for that host's robots.txt when the host is of
        the checked site and within the cap; else left to be a ``host`` finding (:meth:`offered`)."""
        origin = origin_of(entry.loc)
        known = origin in self.waiting or origin in self.contexts
        if self.site.same_site(entry.loc) and (known or len(self.waiting) + len(self.contexts) < MAX_CROSS_HOSTS):
            self.waiting.setdefault(origin, []).append((entry, index))
            self.taken.add((entry.file, entry.line, entry.col))

    def offered(self, finding: Finding) -> bool:
        """Whether *finding* (validate's ``host`` rule) is about an entry kept for its host's robots.txt."""
        return (finding.file, finding.line, finding.col) in self.taken

    def robots_urls(self) -> list[str]:
        """The robots.txt of each origin with entries waiting."""
        return [origin + "/robots.txt" for origin in sorted(self.waiting)]

    @staticmethod
    def redirected(origin: str, status: int, headers: Headers, hops: int) -> str | None:
        """Where a robots.txt redirect leads, when it is followed (as the site's own is), else ``None``."""
        if not 300 <= status < 400 or hops >= MAX_ROBOTS_REDIRECTS:
            return None
        target = resolve_link(origin + "/robots.txt", (headers.get("location") or [""])[0])
        return target if target and redirect_followed(origin, target) else None

    def proved(
        self, origin: str, status: int, headers: Headers, body: bytes
    ) -> tuple[list[tuple[Entry, str]], list[ServedFinding]]:
        """*origin*'s robots.txt answered *status* with *body*: the entries on it to read, those of
        the indexes it names; a finding for each index it does not."""
        entries = self.waiting.pop(origin, [])
        named: set[str] = set()
        rules: Protego | None = None
        if status == 200:
            try:
                body = decode_content(body, ", ".join(headers.get("content-encoding", [])))
            except Undecodable:
                body = b""  # read as an empty robots.txt
            rules = parse_robots(truncated(body))
            named = {normalize_or_raw(line) for line in rules.sitemaps}
        proven = [(entry, index) for entry, index in entries if normalize_or_raw(index) in named]
        if proven and rules is not None:
            self.contexts[origin], self.rules[origin] = SetContext(origin, True), rules
        findings = []
        for index in dict.fromkeys(index for _, index in entries if normalize_or_raw(index) not in named):
            listed = [entry for entry, each in entries if each == index]
            first = listed[0]
            answer = "" if status == 200 else f" (it answers HTTP {status})" if status else " (no answer)"
            message = (
                f"{index} lists {plural(len(listed), 'sitemap')} on {origin}, whose robots.txt does not name it"
                f"{answer}: search engines ignore {'it' if len(listed) == 1 else 'them'}; add 'Sitemap: {index}' to "
                f"{origin}/robots.txt"
            )
            findings.append(ServedFinding(first.file, first.line, first.col, "cross-host", message, first.loc))
        return proven, findings
