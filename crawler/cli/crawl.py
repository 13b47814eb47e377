"""``sitemap-crawler crawl`` and ``update``: run the crawl, then say what it did.

The crawl's :class:`~crawler.results.CrawlResult` decides the exit status
and the messages; Scrapy's stats only give the counts in the summary.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import time
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from scrapy.crawler import Crawler, CrawlerProcess
from scrapy.settings import Settings

from crawler import reactor_runs
from crawler.cli.crawl_summary import crawl_failure, notification_line, plural, summarize, summary_event
from crawler.cli.exits import (
    EXIT_FAILED,
    EXIT_PUBLIC_COPY_WRONG,
    EXIT_RENDER_FAILED,
    EXIT_SHRINK,
    EXIT_SIGNAL,
    EXIT_UPLOAD_FAILED,
)
from crawler.cli.parser import UsageError, option_kinds
from crawler.cli.published_check import check_public_copy
from crawler.cli.publishing import mirror_published, preflight, remote_line
from crawler.cli.shared import (
    LocalWorkers,
    SharedCrawlError,
    check_shared,
    private_redis,
    publish,
    shared_outcome,
    stop_with_own_worker,
)
from crawler.logs import JsonFormatter, SecretsFilter
from crawler.results import CrawlResult, NotPublished
from crawler.run.context import context_of
from crawler.run.state import RunState
from crawler.sitemaps.publish import ForeignFiles
from crawler.state.lock import Locked
from crawler.urls import normalize_or_raw, site_root
from pipelines.export import output_lock, publisher
from settings.config import SitemapConfig
from settings.distributed import worker_settings
from settings.layers import build_layers, explain

__all__ = ["effective_config", "run_crawl_command"]


def effective_config(settings: Settings, origins: dict[str, str]) -> SitemapConfig:
    """The validated configuration; a bad value names the layer it came from."""
    try:
        return SitemapConfig.from_settings(settings)
    except ValueError as error:
        raise UsageError(explain(error, origins)) from None


def check_writable(folder: Path, what: str) -> None:
    """Fail early, before crawling, if *folder* cannot receive files."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".sitemap-crawler-probe-{time.monotonic_ns()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise UsageError(f"{what} {folder} is not writable: {error.strerror or error}") from None


class _NoTracebacks(logging.Filter):
    """Scrapy logs some network failures with a traceback; a CLI user needs one
    line (``-vv`` keeps them, for someone debugging)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            record.msg = f"{record.getMessage()} ({record.exc_info[1]!r})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def log_filters(verbose: int) -> list[logging.Filter]:
    """Filters for the crawl's log handler: tracebacks folded into one line, except at ``-vv``."""
    return [] if verbose >= 2 else [_NoTracebacks()]


def run_crawl(settings: Settings, filters: list[logging.Filter]) -> tuple[CrawlResult, dict[str, Any]]:
    """Run one crawl in this process; its result and its stats. With
    ``SITEMAP_LOG_FORMAT=json`` every log line is a JSON object; known
    secrets (the shared crawl's among them) are masked in every line."""
    config = SitemapConfig.from_settings(settings)
    secret = config.distributed.secret if config.distributed else None
    known = [*(config.audit.access.secrets if config.audit.access else ()), *([secret.decode()] if secret else [])]
    secrets = SecretsFilter(known)
    own: logging.Handler | None = None
    if config.log_format == "json":
        # Our handler from the first line on (Scrapy's start-up lines too), in place of Scrapy's.
        own = logging.StreamHandler(sys.stderr)
        own.setFormatter(JsonFormatter())
        own.setLevel(settings.get("LOG_LEVEL"))
        logging.getLogger().addHandler(own)
    if own is not None:
        settings.set("LOG_INSTALL_ROOT_HANDLER", False, priority="cmdline")
    worker_only = settings.get("SITEMAP_ROLE") == "worker"
    with ExitStack() as workers:  # local workers end with this run, however it ends
        if config.distributed is not None and not worker_only:
            assert secret is not None, "a shared crawl's coordinator signs its configuration"
            run = publish(settings, config.distributed, secret)
            settings.set("SITEMAP_RUN", run, priority="cmdline")  # this process seals and checks under it too
            shared = replace(config.distributed, run=run)
            config = replace(config, distributed=shared)
            if shared.workers:
                local = LocalWorkers(shared, config.log_format, secret, pinned=config.hosts.pinned,
                                     access=config.audit.access)  # fmt: skip
                workers.enter_context(local)
        result, stats = _run_process(settings, config, worker_only, [*filters, secrets], own)
    if config.distributed is not None and not worker_only:
        origin = site_root(config.start_url).rstrip("/")
        counts, robots_unavailable = shared_outcome(config.distributed, origin, result.export.publish is not None)
        stats.update(counts)  # what the workers fetched
        result.robots_unavailable = result.robots_unavailable or robots_unavailable
    return result, stats


def _run_process(
    settings: Settings, config: SitemapConfig, worker_only: bool, filters: list[logging.Filter],
    own: logging.Handler | None,
) -> tuple[CrawlResult, dict[str, Any]]:  # fmt: skip
    """The crawl's Scrapy process, run to its end: its result and its stats."""
    from crawler.spiders.site import SiteSpider  # noqa: PLC0415 - keeps --help fast

    if worker_only:
        settings = worker_settings(settings)
    process = CrawlerProcess(settings)
    if worker_only:
        crawler = process.create_crawler(SiteSpider)
        process.crawl(crawler)
    elif config.distributed is None:
        crawler = process.create_crawler(SiteSpider)
        process.crawl(crawler, config=config)  # installs the crawl's log handler before returning (text logs)
    else:
        from crawler.spiders.export import ExportSpider  # noqa: PLC0415 - a distributed crawl only

        # The exporter holds the result (report, state store, publishing); a worker here crawls from
        # the first moment, while the workers of --workers start beside it.
        crawler = process.create_crawler(ExportSpider)  # the first crawler installs the reactor
        process.crawl(crawler)
        process.crawl(stop_with_own_worker(crawler, Crawler(SiteSpider, worker_settings(settings))))
    for handler in logging.getLogger().handlers:
        for log_filter in filters:
            handler.addFilter(log_filter)
    # Scrapy sets its loggers to DEBUG and filters in its handler, so the
    # "Crawled" and "Scraped" records were built for every request only to be
    # thrown away; filtered at the loggers, they are never built.
    received: list[int] = []
    _record_signals(received)
    loggers = [logging.getLogger(), logging.getLogger("scrapy")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(settings.get("LOG_LEVEL"))
    try:
        reactor_runs.start(process)
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        if own is not None:
            logging.getLogger().removeHandler(own)
    result = context_of(crawler).result
    result.stopped_by = received[0] if received else None
    return result, crawler.stats.get_stats()


def _record_signals(received: list[int]) -> None:
    """Note which signal stops the run (its exit status is 128 + its number),
    leaving the stopping to Scrapy: the first signal finishes in-flight
    requests and keeps the previous set, the second stops at once."""
    from twisted.internet import reactor  # noqa: PLC0415 - the one Scrapy installed

    def wrap() -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            original = signal.getsignal(signum)
            if callable(original):
                signal.signal(signum, partial(_noted, received, original))

    # Scrapy installs its handlers once the reactor has started; ours wrap them just after.
    reactor.callWhenRunning(reactor.callLater, 0, wrap)


def _noted(received: list[int], original: Any, signum: int, frame: Any) -> None:
    received.append(signum)
    original(signum, frame)


def check_list_mode(config: SitemapConfig, command: str, workers: int) -> None:
    """List mode (``--urls FILE``) is a crawl of its own: the file readable, no other way of
    finding URLs with it."""
    if config.urls_file is None:
        if config.list_follow:
            raise UsageError("--follow is list mode's: give --urls FILE too")
        return
    for clash, given in (("update", command == "update"), ("--resume", config.resume)):
        if given:
            raise UsageError(f"--urls (list mode) and {clash} cannot be combined: the list says which URLs to fetch")
    if config.distributed is not None or workers:
        raise UsageError("--urls (list mode) runs in one process: run it without --distributed or --workers")
    path = Path(config.urls_file)
    if config.urls_file != "-" and (not path.exists() or path.is_dir() or not os.access(path, os.R_OK)):
        raise UsageError(f"--urls {config.urls_file}: no readable file there")


def run_crawl_command(args: argparse.Namespace) -> int:
    """``crawl`` or ``update``: 0 when a sitemap set was published, 1 when not."""
    if args.command == "update" and not args.add and not args.remove:
        raise UsageError("update needs at least one --add or --remove URL")
    settings, origins = build_layers(args, "live", option_kinds())
    config = effective_config(settings, origins)
    if args.command == "update" and (config.distributed is not None or settings.getint("SITEMAP_WORKERS")):
        raise UsageError("update reads and writes the state store in one process: run it without --distributed")
    check_list_mode(config, args.command, settings.getint("SITEMAP_WORKERS"))
    if getattr(args, "check_wait", None) is not None and not config.check_published:
        raise UsageError("--check-wait is how long --check-published tries again: give --check-published too")
    check_writable(config.output_dir, "output folder")
    check_writable(config.report_path.parent, "report folder")
    RunState.preflight(config)
    try:
        output_lock(config).release()  # refuse now rather than after the crawl
    except Locked as error:
        raise UsageError(str(error)) from None
    if not config.overwrite_foreign and (clash := publisher(config).foreign_set(config.basename)):
        raise UsageError(str(ForeignFiles(config.output_dir, clash)))
    check_shared(config, settings)
    if config.publish is not None:
        preflight(config.publish)
    started = time.monotonic()
    try:
        with private_redis(settings):
            result, stats = run_crawl(settings, log_filters(args.verbose))
    except SharedCrawlError as error:
        print(f"sitemap-crawler: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    elapsed = time.monotonic() - started
    published = result.export.publish
    refused = result.export.not_published is NotPublished.SHRINK
    code = (EXIT_SHRINK if refused else 1) if published is None else 3 if result.side_errors else 0
    if code == 0 and stats.get("render/failed"):
        code = EXIT_RENDER_FAILED  # published, but not every page was read as a browser shows it
    if published is not None and config.publish is not None and result.stopped_by is None:
        result.remote = mirror_published(
            config.publish,
            published,
            overwrite_foreign=config.overwrite_foreign,
            sets=result.export.sets,
            last=config.hosts.index_host,
        )
        code = EXIT_UPLOAD_FAILED if result.remote.error is not None else code
        result.stopped_by = result.remote.stopped_by
    if published is not None and config.check_published and result.stopped_by is None and code in (0, 3):
        user_agent = str(settings.get("USER_AGENT"))
        checked = check_public_copy(config, published, result.export.added, user_agent)
        if isinstance(checked, int):
            result.stopped_by = checked
        else:
            result.public_check = checked
            code = EXIT_PUBLIC_COPY_WRONG if not checked.ok and code == 0 else code
    if result.stopped_by is not None:
        code = EXIT_SIGNAL + result.stopped_by
    if config.log_format == "json":
        print(summary_event(result, stats, config, elapsed, code), file=sys.stderr)
    else:
        for line in summarize(result, stats, config, elapsed):
            print(line, file=sys.stderr)
    if published is None:
        if config.log_format != "json":
            print(f"sitemap-crawler: no sitemap written: {crawl_failure(result, config)}", file=sys.stderr)
        return code
    if config.log_format != "json":
        if not result.export.sets:
            shards = plural(len(published.shards), "sitemap file")
            print(f"Sitemap index: {published.index_path} ({shards})", file=sys.stderr)
        if result.remote is not None:
            print(remote_line(result.remote), file=sys.stderr)
        if code == EXIT_PUBLIC_COPY_WRONG:
            print("sitemap-crawler: error: published, but the public copy is wrong (above)", file=sys.stderr)
        if result.export.notification is not None:
            print(notification_line(result.export.notification), file=sys.stderr)
        if result.export.hosts_index:
            print("Add to the robots.txt of every host this line (one index lists every host's sitemaps):",
                  file=sys.stderr)  # fmt: skip
        elif result.export.sets:
            print("Add to each host's robots.txt the line on its own host:", file=sys.stderr)
        elif normalize_or_raw(published.index_url) in result.robots_sitemaps:
            print("robots.txt names this index already:", file=sys.stderr)
        else:
            print("Add this line to robots.txt:", file=sys.stderr)
        for problem in result.side_errors:
            print(f"sitemap-crawler: error: the sitemaps are published, but the {problem}", file=sys.stderr)
    indexes = [each.index_url for each in result.export.all_sets]
    for index in [result.export.hosts_index] if result.export.hosts_index else indexes:
        print(f"Sitemap: {index}")
    return code
