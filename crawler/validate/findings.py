"""What validation finds, with a severity fixed per rule (pure).

An *error* breaks the sitemaps.org protocol, its official schemas or the
Google extension rules: a search engine may reject the file or the entry.
A *warning* is a best-practice finding: the file is accepted, but something
in it is probably not what its author meant. Every rule has one severity,
so a reader can trust the word without reading the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["RULES", "Finding", "Severity"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


_E, _W = Severity.ERROR, Severity.WARNING

#: Every rule validation can report, with its severity.
RULES: dict[str, Severity] = {
    # reading the file
    "read": _E,  # missing, unreachable, HTTP error, not a regular file
    "gzip": _E,  # named .gz but not gzip, or broken gzip data
    "size": _E,  # over 50 MiB uncompressed
    "doctype": _E,  # a DTD or entity declaration (refused, never expanded)
    "encoding": _E,  # not UTF-8
    "xml": _E,  # not well-formed
    # the sitemaps.org schema
    "namespace": _E,  # root not in the sitemaps.org 0.9 namespace
    "root": _E,  # root neither urlset nor sitemapindex
    "element": _E,  # an element the schema does not allow where it stands
    "order": _E,  # schema order broken, or an element repeated
    "loc": _E,  # missing, relative, too short or long, not percent-encoded
    "lastmod": _E,  # not a W3C datetime the schema also accepts
    "changefreq": _E,
    "priority": _E,
    "count": _E,  # more than 50,000 entries
    # across a set
    "host": _E,  # a loc on another origin than the set's
    "missing": _E,  # an index entry with no file, or not fetched
    "nested-index": _E,  # an index listing an index
    "no-sitemaps": _E,  # a folder with no sitemap in it
    # the Google extensions
    "image": _E,
    "image-count": _E,  # more than 1,000 images in one url
    "video": _E,
    "news": _E,
    "news-count": _E,  # more than 1,000 news entries in one file
    "hreflang": _E,
    # best practice
    "duplicate": _W,  # a loc listed twice (news and video entries count apart)
    "empty": _W,  # a urlset or index without entries
    "unknown-namespace": _W,  # extension data nobody checks (legacy or unknown)
    "ignored": _W,  # allowed by the schema, read by nobody
    "outside-folder": _W,  # a loc outside the folder the sitemap is served from (sitemaps.org)
    "deprecated": _W,  # deprecated codes and elements, with the replacement
    "dev-host": _W,  # locs on localhost or another development host
    "same-lastmod": _W,  # most URLs of a file (90%) with one lastmod: a build time, not a change
    "future-lastmod": _W,  # lastmod more than a day ahead
}


@dataclass(slots=True, frozen=True)
class Finding:
    """One finding at a real position (1-based line and column); *loc* is the
    entry's URL when the finding is about one page (a lastmod in the future),
    so a report can name the page, not the file."""

    file: str
    line: int
    col: int
    rule: str
    message: str
    loc: str | None = None

    @property
    def severity(self) -> Severity:
        return RULES[self.rule]

    @property
    def is_error(self) -> bool:
        return RULES[self.rule] is Severity.ERROR

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.severity}: {self.rule}: {self.message}"
