"""``sitemap-crawler audit``: a staging site, every URL explained (SPEC S7).

Before the crawl, a preflight reads the start page and robots.txt (with the
credentials, on the staging origin only) for staging blockers; the crawl
then runs like ``crawl`` with the audit recorder on; afterwards the site's
own sitemaps are read and compared, and the report is written.
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scrapy.settings import Settings

from crawler.audit.build import build_report
from crawler.audit.changes import PreviousAudit
from crawler.audit.existing import ExistingSitemaps, read_existing
from crawler.audit.facts import NotFoundPage
from crawler.audit.findings import Finding
from crawler.audit.preflight import Preflight, PreflightError, preflight
from crawler.audit.record import open_record
from crawler.audit.report import write_report
from crawler.audit.sources import off_origin, site_sitemaps
from crawler.cli.audit_output import RECORD_NAME, AuditOutput
from crawler.cli.audit_summary import FailOn, compare_with, parse_fail_on, previous_audit, print_summary
from crawler.cli.crawl import effective_config, log_filters, run_crawl
from crawler.cli.exits import EXIT_FAILED, EXIT_SIGNAL
from crawler.cli.parser import UsageError, option_kinds
from crawler.logs import MASK
from crawler.results import ExportResult
from crawler.run.robots import robots_agent_of
from crawler.sitemaps.hosts import host_folder
from crawler.urls import site_root
from crawler.validate.sets import SetOptions
from settings.config import SitemapConfig
from settings.environment import env_name
from settings.layers import build_layers

__all__ = ["run_audit"]

logger = logging.getLogger(__name__)


def _describe(config: SitemapConfig, started: str) -> dict[str, Any]:
    """What was audited and how, for the report: header and cookie names, never their values."""
    access = config.audit.access
    return {
        "start_url": config.start_url,
        "production_url": config.audit.hosts.production if config.audit.hosts else None,
        "hosts": [list(pair) for pair in config.audit.hosts.pairs] if config.audit.hosts else [],
        "started": started,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "ignore_robots": config.audit.ignore_robots_rules,
        "as_if_no_blocker": config.audit.as_if_no_blocker,
        "deep_threshold": config.audit.deep_threshold,
        "credentials": [f"{name}: {MASK}" for name, _ in access.headers] if access else [],
    }


def _existing(
    config: SitemapConfig,
    db: sqlite3.Connection,
    fallback: tuple[str, ...],
    *,
    user_agent: str,
    timeout: float,
) -> ExistingSitemaps | None:
    """The site's own sitemaps read: the user's (URLs mapped to staging, or local files), else the
    ones robots.txt names on the staging origins (the others are findings, never fetched), and the
    /sitemap.xml of each *fallback* root (it answered 200) whose robots.txt named none read. Each is
    read as its own host's (a local file as the start URL's): its locs on that host's production,
    or on another host whose robots.txt names it too (one index of every host's sitemaps)."""
    hosts = config.audit.hosts
    root = site_root(config.start_url)
    pairs = hosts.pairs if hosts else ((root, root),)
    stagings = {staging for staging, _ in pairs}
    given = [hosts.to_staging(s) if hosts else s for s in config.audit.sitemaps]
    # A sitemap the user gives is its location's host's (a local file the start's).
    sources = [(s, next((staging for staging, _ in pairs if s.startswith(staging)), root)) for s in given]
    refused: list[Finding] = []
    naming: dict[str, list[str]] = {}
    if not sources:
        named = db.execute("SELECT url, robots FROM robots_sitemaps")
        sources, refused, naming = site_sitemaps(named, root, hosts)
        named_by = {each for roots in naming.values() for each in roots}
        sources += [(each + "sitemap.xml", each) for each in fallback if each not in named_by]
    if not sources and not refused:
        return None
    access = config.audit.access
    existing = ExistingSitemaps()
    productions = dict(pairs)
    for staging, production in pairs:
        options = SetOptions(
            origin=production.rstrip("/"),
            timeout=timeout,  # --timeout, the crawl's DOWNLOAD_TIMEOUT: each file in all
            credentials={origin: dict(access.headers_for(origin)) for origin in access.origins} if access else None,
            locate=hosts.to_staging if hosts else None,
            user_agent=user_agent,
            aliases=(staging.rstrip("/"),) if hosts else (),  # the staging copy's own sitemap names staging URLs
            same_lastmod_share=config.audit.same_lastmod_share,
            pinned=config.hosts.pinned,
        )
        for url in [url for url, owner in sources if (owner if owner in stagings else root) == staging]:
            # Cross-submission: each other host whose robots.txt names it may be listed in it, as itself.
            others = [each for each in naming.get(url, ()) if each != staging and each in productions]
            crossed = tuple(origin.rstrip("/") for each in others for origin in (each, productions[each]))
            read_existing([url], replace(options, crossed=crossed), hosts, db, existing)
    existing.findings[:0] = refused
    return existing


def run_audit(args: argparse.Namespace) -> int:
    settings, origins = build_layers(args, "audit", option_kinds())
    if settings.get("SITEMAP_DISTRIBUTED") or settings.getint("SITEMAP_WORKERS"):
        raise UsageError("audit records every link in one process: run it without --distributed or --workers")
    if settings.getbool("SITEMAP_CHECK_PUBLISHED"):
        raise UsageError("an audit's set is not published: run `sitemap-crawler check URL` once it is deployed")
    if settings.get("SITEMAP_URLS_FILE") or settings.getbool("SITEMAP_LIST_FOLLOW"):
        raise UsageError("--urls (list mode) is crawl's: an audit explains the site it crawls from the start URL")
    if "SITEMAP_OUTPUT_DIR" not in origins:
        settings.set("SITEMAP_OUTPUT_DIR", "audit", priority="cmdline")
    out = Path(str(settings.get("SITEMAP_OUTPUT_DIR")))
    if "SITEMAP_REPORT_PATH" not in origins:
        settings.set("SITEMAP_REPORT_PATH", str(out / "crawl-report.jsonl"), priority="cmdline")
    settings.set("SITEMAP_AUDIT_RECORD", str(out / RECORD_NAME), priority="cmdline")
    options = effective_config(settings, origins).audit  # every layer's values checked, each naming its layer
    if options.hosts is None:
        raise UsageError(
            "audit needs the production origin its sitemap is written for: give --production-url URL "
            f"(or {env_name('production_url')}, or production-url in the config file)"
        )
    fail_on = parse_fail_on(sorted(options.fail_on))  # checked in every layer already: split by new:
    previous = previous_audit(options.compare, fail_on)  # read before the crawl
    remote = [s for s in options.sitemaps if s.startswith(("http://", "https://"))]
    settings.set("SITEMAP_SEED_SITEMAPS", remote, priority="cmdline")
    for path in (s for s in options.sitemaps if s not in remote):
        if not Path(path).exists():
            raise UsageError(f"--sitemap {path}: no such file or folder")
    for url in remote:  # read on staging: the audit requests nothing of another origin
        if off_origin(url, options.hosts.staging, options.hosts)[0] is None:
            where = " or ".join(root for pair in options.hosts.pairs for root in pair)
            raise UsageError(f"--sitemap {url}: not on {where}: an audit requests nothing of another origin")
    config = effective_config(settings, origins)
    # Everything is written into a folder beside OUT, swapped in whole at the end: until then OUT is
    # left as it was, whatever happens (crawler.cli.audit_output).
    with AuditOutput(settings, out) as output:
        return _audit(args, settings, config, output, (fail_on, previous))


def _audit(
    args: argparse.Namespace,
    settings: Settings,
    config: SitemapConfig,
    output: AuditOutput,
    gate: tuple[FailOn, PreviousAudit | None],
) -> int:
    out, folder = output.out, output.folder
    record = folder / RECORD_NAME
    user_agent = str(settings.get("USER_AGENT"))
    try:
        checked = _preflights(config, settings)
    except PreflightError as error:
        print(f"sitemap-crawler: audit not run: {error}", file=sys.stderr)
        return EXIT_FAILED
    if config.audit.as_if_no_blocker:
        blockers = [blocker for each in checked.values() for blocker in each.blockers]
        ignored = [b.ignored for b in blockers if b.ignored]
        settings.set("SITEMAP_IGNORE_DIRECTIVES", ignored, priority="cmdline")
        if any(b.kind == "robots" for b in blockers):
            settings.set("SITEMAP_ROBOTS_IGNORE_DISALLOW_ALL", True, priority="cmdline")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    began = time.monotonic()
    result, _ = run_crawl(settings, log_filters(args.verbose))
    if result.stopped_by is not None:
        print("sitemap-crawler: audit stopped by a signal: no report written", file=sys.stderr)
        record.unlink(missing_ok=True)
        return EXIT_SIGNAL + result.stopped_by
    db = open_record(record)
    try:
        existing = _existing(
            config,
            db,
            tuple(root for root, each in checked.items() if each.has_sitemap_xml),
            user_agent=user_agent,
            timeout=float(settings.getfloat("DOWNLOAD_TIMEOUT")),
        )
        report = build_report(
            db,
            audit=_describe(config, started),
            hosts=config.audit.hosts,
            deep_threshold=config.audit.deep_threshold,
            blockers=[blocker for each in checked.values() for blocker in each.blockers],
            not_found={root: page for root, each in checked.items() if (page := _comparable(each.not_found, config))},
            existing=existing,
        )
        report.counts["parameters"] = result.parameters
        compare_with(report, gate[1])
        write_report(report, folder, config.audit.hosts.to_production if config.audit.hosts else None)
        output.swap_in()  # OUT is now this audit's output, all of it (the record, still open, unlinked)
        preview = _previews(result.export, out, config)
        seconds = time.monotonic() - began
        return print_summary(
            report, gate[0], out=out, seconds=seconds, preview=preview, json_logs=config.log_format == "json"
        )
    finally:
        db.close()  # the report's findings live in it until the summary is printed


def _preflights(config: SitemapConfig, settings: Settings) -> dict[str, Preflight]:
    """The preflight of the start URL, and of each other mapped host's root, by root: a host that
    cannot be read stops the audit; each host's blockers, 404 page and /sitemap.xml are its own."""
    access, hosts = config.audit.access, config.audit.hosts
    start = site_root(config.start_url)
    roots = hosts.stagings if hosts else (start,)
    checked = {}
    for root in roots:
        each = preflight(
            config.start_url if root == start else root,
            root,
            headers=dict(access.headers_for(root)) if access else {},
            user_agent=str(settings.get("USER_AGENT")),
            agent=robots_agent_of(settings),
            token=config.robots_token,
            ignore=config.fingerprint_ignore,
            timeout=float(settings.getfloat("DOWNLOAD_TIMEOUT")),
            pinned=config.hosts.pinned,
            label="the start URL" if root == start else "the mapped staging host",
        )
        if len(roots) > 1:
            each.blockers = [replace(blocker, root=root) for blocker in each.blockers]
        checked[root] = each
    return checked


def _previews(export: ExportResult, out: Path, config: SitemapConfig) -> list[Path]:
    """Each production set's index in OUT: with several hosts, one per host folder, the start's first."""
    if not export.sets:
        return [out / published.index_path.name for published in export.all_sets]
    start = host_folder(config.base_url)
    folders = sorted(export.sets, key=lambda folder: (folder != start, folder))
    return [out / folder / export.sets[folder].index_path.name for folder in folders]


def _comparable(not_found: NotFoundPage | None, config: SitemapConfig) -> NotFoundPage | None:
    """The not-found probe, fetched raw: with --render its fingerprint is that of the app shell,
    which every unrendered page shares (one a script navigated away from), so only its status
    and title are compared; rendered pages that say "not found" are still told by their title."""
    if not_found is None or not config.render.enabled:
        return not_found
    return replace(not_found, digest=None)
