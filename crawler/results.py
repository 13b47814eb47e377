"""What a crawl did, as typed results rather than stats.

Each component fills in its own part of the :class:`CrawlResult` kept on the
crawler: the run state the run, the report its path and the start URL's
outcome, the export what it published (or why it did not), the notifier
what IndexNow was told. Whoever ran the crawl (the CLI, a test, a Scrapy
user) reads that one object; stats stay counters for people.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from crawler.modes import RunMode
from crawler.sitemaps.site import MediaCounts

if TYPE_CHECKING:
    from pathlib import Path

    from crawler.check.result import CheckResult
    from crawler.sitemaps.publish import PublishResult
    from crawler.sitemaps.remote import RemotePublish
    from crawler.state.changes import ChangeCounts

__all__ = ["CrawlResult", "ExportResult", "NotPublished", "Notification", "OriginCounts", "StartOutcome"]


class NotPublished(StrEnum):
    """Why a run published nothing (the previous set then stays in place)."""

    #: The crawl did not finish (interrupted, killed, closed by an error).
    INTERRUPTED = "interrupted"
    #: No URL passed the listing rules.
    NOTHING_LISTED = "nothing-listed"
    #: Writing or publishing the files failed (disk full, a <url> too big, ...).
    EXPORT_FAILED = "export-failed"
    #: The set would lose more of its URLs than --max-shrink allows.
    SHRINK = "shrink"


@dataclass(slots=True)
class Notification:
    """What IndexNow was told after a published run."""

    urls: int = 0  # added, changed or removed by this run
    submitted: int = 0
    batches: int = 0
    error: str | None = None  # why they were not (all) sent
    skipped: str | None = None  # why nothing was tried
    path: Path | None = None  # OUT.indexnow.json


@dataclass(slots=True)
class ExportResult:
    """What the export step did with the listed URLs."""

    publish: PublishResult | None = None  # in a crawl of several hosts, the start host's set (or the first)
    sets: dict[str, PublishResult] = field(default_factory=dict)  # a crawl of several hosts: host -> its set
    withdrawn: list[str] = field(default_factory=list)  # hosts whose set was removed: no URL of theirs listed
    kept: dict[str, str] = field(default_factory=dict)  # hosts whose earlier set was left as it was, and why
    hosts_index: str | None = None  # --index-host: the URL of the index of every host's sitemaps
    hosts_index_missing: str = ""  # --index-host: why no such index was written
    not_published: NotPublished | None = None
    detail: str = ""  # the reason behind not_published, in words
    news_urls: int = 0
    removed_urls: int = 0  # listed by the last published run, not by this one
    removals_path: Path | None = None
    carried: int = 0  # kept from the last published run by an update
    delta_urls: int = 0
    notification: Notification | None = None
    changes: ChangeCounts | None = None  # what this run changed in the listed set (with a state store)
    changes_path: Path | None = None
    added: list[str] = field(default_factory=list)  # the first URLs this run added (for the check)
    media: MediaCounts = field(default_factory=lambda: MediaCounts(0, 0, 0, 0))

    @property
    def published(self) -> bool:
        return self.publish is not None

    @property
    def all_sets(self) -> list[PublishResult]:
        """Every set published: one per host in a crawl of several, else the one."""
        return list(self.sets.values()) or ([self.publish] if self.publish is not None else [])


@dataclass(slots=True, frozen=True)
class StartOutcome:
    """How the start URL fared: ``reason`` ``None`` means it was listed."""

    reason: str | None
    detail: str


@dataclass(slots=True)
class OriginCounts:
    """What became of one host's URLs, in a crawl of several hosts."""

    listed: int = 0
    left_out: int = 0
    answered: bool = False  # one of its URLs got an answer under 500: the host is up

    def add(self, *, listed: bool, answered: bool = True) -> None:
        self.answered = self.answered or answered
        if listed:
            self.listed += 1
        else:
            self.left_out += 1


@dataclass(slots=True)
class CrawlResult:
    mode: RunMode = RunMode.CRAWL
    run: int | None = None  # the run's number in the state store
    start: StartOutcome | None = None
    robots_unavailable: str | None = None  # "HOST answered 503": nothing could be crawled
    #: Every origin (``scheme://host[:port]``) whose robots.txt could not be read, and why.
    unreadable_robots: dict[str, str] = field(default_factory=dict)
    report_path: Path | None = None
    #: The out-of-scope origin of the same site that links pointed to most, and how many URLs.
    sister_origin: tuple[str, int] | None = None
    export: ExportResult = field(default_factory=ExportResult)
    #: Files beside the sitemap set that could not be written (the set itself is fine).
    side_errors: list[str] = field(default_factory=list)
    #: The signal (SIGTERM, SIGINT) that stopped the run, if one did.
    stopped_by: int | None = None
    #: What --publish s3://... did after the set was published into the output folder.
    remote: RemotePublish | None = None
    #: What --check-published found on the public copy, once the set was published.
    public_check: CheckResult | None = None
    #: The sitemaps robots.txt names for the start origin (another tool's set, or ours).
    robots_sitemaps: list[str] = field(default_factory=list)
    #: The sitemap files read for seeds (robots.txt's, the conventional locations, the user's).
    seed_sitemaps: list[str] = field(default_factory=list)
    #: A crawl of several hosts: each host's root (``scheme://host[:port]/``) and its counts.
    origins: dict[str, OriginCounts] = field(default_factory=dict)
    #: Each query parameter of the URLs met: URLs, values, listed, why the others were left out.
    parameters: list[dict[str, Any]] = field(default_factory=list)

    @property
    def published(self) -> bool:
        return self.export.published

    def outages(self) -> dict[str, str]:
        """The origins (``scheme://host[:port]``) that were out of reach, and why: their robots.txt
        could not be read, or none of their URLs got an answer under 500 (a host down is no removal)."""
        down = {root.rstrip("/"): "none of its pages answered" for root, c in self.origins.items() if not c.answered}
        return {**down, **self.unreadable_robots}
