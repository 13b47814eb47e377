"""Settings of a crawl shared through Redis (SPEC S8).

The Redis URL may carry a password: it is kept in :class:`Distributed`,
whose ``repr`` masks it, and never logged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from scrapy.settings import BaseSettings, Settings

from settings.values import adapts, number, whole_number

__all__ = ["MAX_LOCAL_WORKERS", "Distributed", "masked_url", "read_distributed", "worker_settings"]

#: More local processes than this only fight over the cores and the site.
MAX_LOCAL_WORKERS = 64


def masked_url(url: str) -> str:
    """*url* with its password as ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True, slots=True)
class Distributed:
    url: str = field(repr=False)
    crawl: str  # the keys' namespace in Redis: one per crawl
    lease_seconds: float
    grace: float  # how long every worker must have been idle before the crawl ends
    workers: int = 0  # local worker processes the coordinator starts (0: it crawls in-process)

    def __repr__(self) -> str:
        return f"Distributed(url={masked_url(self.url)!r}, crawl={self.crawl!r})"


def read_distributed(settings: BaseSettings, start_url: str, output_dir: str) -> Distributed | None:
    url = settings.get("SITEMAP_DISTRIBUTED")
    workers = whole_number(settings, "SITEMAP_WORKERS", 0, MAX_LOCAL_WORKERS)
    if not url:
        return None
    url = str(url)
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"SITEMAP_DISTRIBUTED {masked_url(url)!r} is not a redis:// URL")
    crawl = str(settings.get("SITEMAP_CRAWL_ID") or "")
    if not crawl:
        crawl = hashlib.sha256(f"{start_url} {output_dir}".encode()).hexdigest()[:16]
    return Distributed(
        url,
        crawl,
        number(settings, "SITEMAP_LEASE_SECONDS", 1.0),
        number(settings, "SITEMAP_IDLE_GRACE", 0.1),
        workers,
    )


#: What only the exporter does: the report, IndexNow, the audit record, the progress line.
_EXPORTER_ONLY = (
    "crawler.extensions.report.CrawlReport",
    "crawler.extensions.notify.IndexNowNotifier",
    "crawler.extensions.audit.AuditRecorder",
    "crawler.extensions.progress.Progress",
)


def worker_settings(settings: Settings) -> Settings:
    """*settings* for a worker: the shared scheduler, no pipelines (the facts go
    to the exporter unjudged), no state store, none of the exporter's extensions."""
    worker = settings.copy()
    worker.set("SCHEDULER", "crawler.extensions.worker.RedisScheduler", priority="cmdline")
    worker.set("ITEM_PIPELINES", {}, priority="cmdline")
    # The state store is the exporter's; the pages a worker reads carry the digest it compares.
    worker.set("SITEMAP_SHARED_STATE", settings.getbool("SITEMAP_STATE"), priority="cmdline")
    worker.set("SITEMAP_STATE", False, priority="cmdline")
    worker.set("SITEMAP_ROLE", "worker", priority="cmdline")
    # A fixed delay holds for the site as a whole (SharedPaceMiddleware), not per worker; an
    # adaptive one follows the latency each worker sees, under the site-wide concurrency limit.
    if not adapts(settings):
        worker.set("SITEMAP_SHARED_DELAY", settings.getfloat("DOWNLOAD_DELAY"), priority="cmdline")
        worker.set("DOWNLOAD_DELAY", 0, priority="cmdline")
    # The page budget too is counted for all workers at once (in Redis, as pages are offered).
    worker.set("SITEMAP_SHARED_MAX_PAGES", settings.getint("SITEMAP_MAX_PAGES"), priority="cmdline")
    worker.set("SITEMAP_MAX_PAGES", 0, priority="cmdline")
    extensions = dict(settings.getdict("EXTENSIONS"))
    extensions.update(dict.fromkeys(_EXPORTER_ONLY))
    worker.set("EXTENSIONS", extensions, priority="cmdline")
    return worker
