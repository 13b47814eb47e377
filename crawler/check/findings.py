"""What ``check`` finds on a published set, one severity per rule (pure).

The rules of the files themselves are validate's (:mod:`crawler.validate.findings`),
reported under their own names; these are the rules of serving them: what a search
engine sees over HTTP before it reads a byte of XML, and what it finds behind the locs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crawler.validate.findings import RULES, Finding, Severity

__all__ = ["CHECK_RULES", "ServedFinding", "severity_of"]

_E, _W = Severity.ERROR, Severity.WARNING

#: Every rule of serving a set, with its severity (validate's rules keep theirs).
CHECK_RULES: dict[str, Severity] = {
    # robots.txt
    "robots": _E,  # robots.txt answered 5xx or not at all: a search engine reads the site as disallowed
    "robots-sitemap": _W,  # no Sitemap: line names the index (it can still be submitted by hand)
    "robots-blocked": _E,  # robots.txt disallows a sitemap file for our user agent
    "other-sitemap": _W,  # with --expect: robots.txt names another tool's sitemap beside ours
    "cross-host": _E,  # an index lists sitemaps on another host whose robots.txt does not name the index
    # serving the files
    "status": _E,  # a sitemap file not answered 200 (a 404 shard, a redirect, no answer)
    "content-type": _E,  # neither application/xml nor text/xml (gzip: application/gzip or x-gzip)
    "content-encoding": _E,  # a Content-Encoding the client did not ask for, or broken encoded data
    "double-gzip": _E,  # a .gz file gzipped once more by the server: decoded, it is still gzip
    "stale": _E,  # the served bytes differ from the published folder's (a cache serving an old copy)
    # the sample of listed URLs
    "sample-status": _E,  # a listed URL not answered 200
    "sample-redirect": _E,  # a listed URL redirects: the sitemap should list the target
    "sample-noindex": _E,  # a listed URL says noindex (meta or X-Robots-Tag)
    "sample-canonical": _E,  # a listed URL names another URL as canonical
    "sample-robots": _E,  # robots.txt disallows a listed URL
    "sample-cut": _W,  # robots.txt's Crawl-delay leaves time for part of the sample only
    # the run itself
    "deadline": _E,  # the total deadline ran out: not everything was checked
}


def severity_of(rule: str) -> Severity:
    return CHECK_RULES[rule] if rule in CHECK_RULES else RULES[rule]


@dataclass(slots=True, frozen=True)
class ServedFinding(Finding):
    """validate's finding, ``FILE:LINE:COL: severity: rule: message``, with FILE a URL and the
    rules of serving a set besides validate's."""

    @classmethod
    def at(cls, url: str, rule: str, message: str, loc: str | None = None) -> ServedFinding:
        return cls(url, 1, 1, rule, message, loc)

    @classmethod
    def of(cls, finding: Finding) -> ServedFinding:
        return cls(finding.file, finding.line, finding.col, finding.rule, finding.message, finding.loc)

    @property
    def severity(self) -> Severity:
        return severity_of(self.rule)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "severity": self.severity.value,
            "rule": self.rule,
            "message": self.message,
            "loc": self.loc,
        }
