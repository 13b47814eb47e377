"""Sitemaps of other hosts listed by an index (cross-submission, pure).

An index may list sitemaps on other hosts (``--index-host`` writes one such):
search engines take them only when that host's robots.txt names the index in
a ``Sitemap:`` line, the proof that the other host's owner sent them there.
:class:`CrossHosts` keeps such entries apart while the top sitemaps are read,
says which robots.txt files to fetch, and turns each answer into the entries
to read (each on its own origin, with a set context of its own) or a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.check.findings import ServedFinding
from crawler.check.result import plural
from crawler.robots_rules import parse_robots, truncated
from crawler.urls import normalize_or_raw
from crawler.validate.document import Entry, SetContext

__all__ = ["CrossHosts"]


@dataclass(slots=True)
class CrossHosts:
    #: other origin -> (entry, the index listing it), waiting for that origin's robots.txt
    waiting: dict[str, list[tuple[Entry, str]]] = field(default_factory=dict)
    contexts: dict[str, SetContext] = field(default_factory=dict)  # a proven origin -> the context of its files

    def offer(self, origin: str, entry: Entry, index: str) -> None:
        self.waiting.setdefault(origin, []).append((entry, index))

    def robots_urls(self) -> list[str]:
        """The robots.txt of each origin with entries waiting."""
        return [origin + "/robots.txt" for origin in sorted(self.waiting)]

    def proved(self, origin: str, status: int, body: bytes) -> tuple[list[tuple[Entry, str]], list[ServedFinding]]:
        """*origin*'s robots.txt answered *status* with *body* (its Content-Encoding undone): the
        entries on it to read, those of the indexes it names; a finding for each index it does not."""
        entries = self.waiting.pop(origin, [])
        named = set()
        if status == 200:
            named = {normalize_or_raw(line) for line in parse_robots(truncated(body)).sitemaps}
        proven = [(entry, index) for entry, index in entries if normalize_or_raw(index) in named]
        if proven:
            self.contexts[origin] = SetContext(origin, True)
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
