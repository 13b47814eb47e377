"""``sitemap-crawler audit``: a staging site, every URL explained (SPEC S7).

Before the crawl, a preflight reads the start page and robots.txt (with the
credentials, on the staging origin only) for staging blockers; the crawl
then runs like ``crawl`` with the audit recorder on; afterwards the site's
own sitemaps are read and compared, and the report is written.
"""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawler.audit.build import build_report
from crawler.audit.existing import ExistingSitemaps, read_existing
from crawler.audit.findings import Kind
from crawler.audit.preflight import PreflightError, preflight
from crawler.audit.record import open_record
from crawler.audit.report import write_report
from crawler.cli.crawl import EXIT_SIGNAL, check_writable, effective_config, log_filters, run_crawl
from crawler.cli.parser import EXIT_FINDINGS, UsageError, option_kinds
from crawler.downloadermiddlewares.robotstxt import robots_agent_of
from crawler.logs import MASK, json_event
from crawler.state.lock import Locked
from crawler.urls import site_root
from crawler.validate.sets import SetOptions
from pipelines.export import output_lock
from settings.config import SitemapConfig
from settings.environment import env_name, from_environment
from settings.layers import build_layers
from settings.ranges import checked as in_range

__all__ = ["run_audit"]

logger = logging.getLogger(__name__)


def _fail_on(text: str) -> set[Kind]:
    kinds = set()
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            kinds.add(Kind(name))
        except ValueError:
            known = ", ".join(kind.value for kind in Kind)
            raise UsageError(f"--fail-on: unknown finding kind {name!r} (known: {known})") from None
    return kinds


def _describe(config: SitemapConfig, args: argparse.Namespace, started: str) -> dict[str, Any]:
    """What was audited and how, for the report: header and cookie names, never their values."""
    access = config.audit.access
    return {
        "start_url": config.start_url,
        "production_url": config.audit.hosts.production if config.audit.hosts else None,
        "started": started,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "ignore_robots": args.ignore_robots,
        "as_if_no_blocker": args.as_if_no_blocker,
        "deep_threshold": args.deep_threshold,
        "credentials": [f"{name}: {MASK}" for name, _ in access.headers] if access else [],
    }


def _existing(
    args: argparse.Namespace, config: SitemapConfig, db: sqlite3.Connection, fallback: bool, user_agent: str
) -> ExistingSitemaps | None:
    hosts = config.audit.hosts
    root = site_root(config.start_url)
    sources = [hosts.to_staging(s) if hosts else s for s in args.sitemap]
    if not sources:
        sources = [hosts.to_staging(url) if hosts else url for (url,) in db.execute("SELECT url FROM robots_sitemaps")]
    if not sources and fallback:
        sources = [root + "sitemap.xml"]
    if not sources:
        return None
    access = config.audit.access
    options = SetOptions(
        origin=(hosts.production if hosts else root).rstrip("/"),
        timeout=float(config.indexnow_timeout),
        credentials=(access.origin, dict(access.headers)) if access else None,
        locate=hosts.to_staging if hosts else None,
        user_agent=user_agent,
    )
    return read_existing(sources, options, hosts)


#: Options of the audit alone (no setting behind them): their defaults, read from the environment too.
AUDIT_OPTIONS = {"fail_on": "", "deep_threshold": 5, "as_if_no_blocker": False, "ignore_robots": False, "sitemap": []}


def _audit_options(args: argparse.Namespace) -> None:
    """Fill the audit's own options left out on the command line from ``SITEMAP_CRAWLER_*``, else defaults."""
    kinds = {"fail_on": "str", "deep_threshold": "int", "as_if_no_blocker": "bool", "ignore_robots": "bool",
             "sitemap": "list"}  # fmt: skip
    from_env = from_environment(kinds, os.environ)
    for dest, default in AUDIT_OPTIONS.items():
        if getattr(args, dest) is None:
            setattr(args, dest, from_env[dest][0] if dest in from_env else default)


def run_audit(args: argparse.Namespace) -> int:
    layer = "" if args.deep_threshold is not None else f" (from {env_name('deep_threshold')})"
    _audit_options(args)
    fail_on = _fail_on(args.fail_on)
    try:
        in_range("--deep-threshold", args.deep_threshold)  # the one table of ranges
    except ValueError as error:
        raise UsageError(f"{error}{layer}") from None
    settings, origins = build_layers(args, "audit", option_kinds())
    if settings.get("SITEMAP_DISTRIBUTED") or settings.getint("SITEMAP_WORKERS"):
        raise UsageError("audit records every link in one process: run it without --distributed or --workers")
    if "SITEMAP_OUTPUT_DIR" not in origins:
        settings.set("SITEMAP_OUTPUT_DIR", "audit", priority="cmdline")
    out = Path(str(settings.get("SITEMAP_OUTPUT_DIR")))
    if "SITEMAP_REPORT_PATH" not in origins:
        settings.set("SITEMAP_REPORT_PATH", str(out / "crawl-report.jsonl"), priority="cmdline")
    record = out / ".audit-record.sqlite3"
    settings.set("SITEMAP_AUDIT_RECORD", str(record), priority="cmdline")
    remote = [s for s in args.sitemap if s.startswith(("http://", "https://"))]
    settings.set("SITEMAP_SEED_SITEMAPS", remote, priority="cmdline")
    for path in (s for s in args.sitemap if s not in remote):
        if not Path(path).exists():
            raise UsageError(f"--sitemap {path}: no such file or folder")
    if args.ignore_robots:
        settings.set("ROBOTSTXT_OBEY", False, priority="cmdline")
    config = effective_config(settings, origins)
    check_writable(out, "audit folder")
    try:
        output_lock(config).release()
    except Locked as error:
        raise UsageError(str(error)) from None
    if args.ignore_robots:
        logger.warning(
            "robots.txt of %s is IGNORED (--ignore-robots): every URL is crawled", site_root(config.start_url)
        )
        print(f"sitemap-crawler: WARNING: robots.txt of {site_root(config.start_url)} is ignored", file=sys.stderr)
    headers = dict(config.audit.access.headers) if config.audit.access else {}
    agent = robots_agent_of(settings)
    user_agent = str(settings.get("USER_AGENT"))
    try:
        checked = preflight(
            config.start_url,
            site_root(config.start_url),
            headers=headers,
            user_agent=user_agent,
            agent=agent,
            token=config.robots_token,
            ignore=config.fingerprint_ignore,
            timeout=float(settings.getfloat("DOWNLOAD_TIMEOUT")),
        )
    except PreflightError as error:
        print(f"sitemap-crawler: audit not run: {error}", file=sys.stderr)
        return 1
    if args.as_if_no_blocker:
        ignored = [b.ignored for b in checked.blockers if b.ignored]
        settings.set("SITEMAP_IGNORE_DIRECTIVES", ignored, priority="cmdline")
        if any(b.kind == "robots" for b in checked.blockers):
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
        existing = _existing(args, config, db, checked.has_sitemap_xml, user_agent)
        report = build_report(
            db,
            audit=_describe(config, args, started),
            hosts=config.audit.hosts,
            deep_threshold=args.deep_threshold,
            blockers=checked.blockers,
            not_found=checked.not_found,
            existing=existing,
        )
    finally:
        db.close()
    write_report(report, out, config.audit.hosts.to_production if config.audit.hosts else None)
    record.unlink(missing_ok=True)
    summary = report.summary()
    published = result.export.publish
    failing = sorted(kind.value for kind in fail_on if summary["findings"].get(kind.value))
    code = EXIT_FINDINGS if failing else 0
    if config.log_format == "json":
        message = f"audited {summary['urls']} URLs; report {out / 'report.html'}"
        fields = {"event": "summary", "counts": summary, "exit": code, "detail": "; ".join(failing) or None}
        print(json_event("ERROR" if code else "INFO", "sitemap-crawler", message, **fields), file=sys.stderr)
        return code
    print(
        f"Audited {summary['urls']} URLs in {time.monotonic() - began:.1f} s: "
        + ", ".join(f"{count} {name}" for name, count in summary["outcomes"].items()),
        file=sys.stderr,
    )
    for blocker in report.blockers:
        print(f"STAGING BLOCKER: {blocker['detail']}", file=sys.stderr)
    for kind, count in summary["findings"].items():
        print(f"  {kind:<26} {count}", file=sys.stderr)
    print(f"Report: {out / 'report.html'} (and report.json, urls.csv, findings-*.csv)", file=sys.stderr)
    if published is not None:
        print(f"Production sitemap preview: {published.index_path}", file=sys.stderr)
    else:
        print("No production sitemap: no URL would be listed (see the report)", file=sys.stderr)
    if failing:
        print(f"sitemap-crawler: --fail-on: {', '.join(failing)} found", file=sys.stderr)
    return code
