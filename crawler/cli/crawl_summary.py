"""What a ``crawl`` or ``update`` says when it ends: the summary lines on stderr, or one
JSON event; why no sitemap was published; what IndexNow heard. Read from the crawl's
:class:`~crawler.results.CrawlResult` and the counts in Scrapy's stats."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from crawler.cli.published_check import check_fields
from crawler.cli.publishing import remote_fields
from crawler.cli.render_summary import render_counts, render_lines
from crawler.coverage.parameters import parameter_lines
from crawler.extensions.progress import progress_counts
from crawler.logs import json_event
from crawler.modes import RunMode
from crawler.reasons import Limit, Reason
from crawler.results import CrawlResult, Notification, NotPublished
from crawler.stats import Stat, dropped, limit, warning
from crawler.urls import normalize_or_raw, site_root
from settings.config import SitemapConfig

__all__ = ["crawl_failure", "notification_line", "plural", "summarize", "summary_event"]


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def summarize(result: CrawlResult, stats: dict[str, Any], config: SitemapConfig, elapsed: float) -> list[str]:
    """The summary on stderr: counts from the stats, everything else from the result."""
    counts = progress_counts(stats)
    rate = counts["crawled"] / max(elapsed, 1e-6)
    lines = [
        f"Crawled {counts['crawled']} responses in {elapsed:.1f} s ({rate:.1f} pages/s)",
        f"Listed {counts['listed']} URLs, excluded {counts['excluded']}:",
    ]
    lines.extend(f"  {reason.value:<14} {stats[dropped(reason)]}" for reason in Reason if stats.get(dropped(reason)))
    lines.extend(limit_lines(stats, config))
    lines.extend(parameter_lines(result.parameters))
    lines.extend(render_lines(stats))
    export = result.export
    site_wide = export.media.site_wide
    media = [
        (export.media.images, "images"),
        (export.media.videos, "videos"),
        (export.news_urls, "news articles in the last two days"),
    ]
    if any(count for count, _ in media):
        lines.append("With " + ", ".join(f"{count} {what}" for count, what in media))
    if site_wide:
        where = (
            "more than half of the listed pages"
            if config.image_max_pages is None
            else f"more than {config.image_max_pages} listed pages"
        )
        lines.append(
            f"Left out {plural(site_wide, 'site-wide image')} (logos, social cards) found on {where};"
            " --image-max-pages 0 lists every image"
        )
    prefix = warning("")
    warnings = sorted((k.removeprefix(prefix), v) for k, v in stats.items() if k.startswith(prefix))
    warnings += [
        (code, stats[key])
        for code, key in (("video-left-out", Stat.VIDEOS_LEFT_OUT), ("images-over-limit", Stat.IMAGES_OVER_LIMIT))
        if stats.get(key)
    ]
    if warnings:
        lines.append("Warnings (details in the report):")
        lines.extend(f"  {code:<24} {count}" for code, count in warnings)
    if stats.get(Stat.SHARED_REFETCHED):
        lines.append(
            f"{plural(stats[Stat.SHARED_REFETCHED], 'request')} re-fetched after a worker stopped (its leases)"
        )
    if stats.get(Stat.SHARED_REFUSED):
        lines.append(
            f"Refused {stats[Stat.SHARED_REFUSED]} items from the shared crawl's Redis that were not ours"
            " to list (see the log)"
        )
    if result.sister_origin:
        sister, count = result.sister_origin
        lines.append(
            f"Note: {count} out-of-scope URL(s) are on {sister}, another origin of the same site; "
            + ("it is not one of the hosts --production-url maps (STAGING=URL would add it)" if config.audit.hosts
               else "it is not one of the crawl's hosts (--host, --subdomains)" if config.hosts.several else
               f"only {site_root(config.start_url)} is crawled (--subdomains or --host would take it in)")
        )  # fmt: skip
    lines.extend(sitemap_lines(result))
    lines.extend(host_lines(result, config.audit.hosts.to_production if config.audit.hosts else None))
    if result.report_path:
        lines.append(f"Report: {result.report_path}")
    if result.run is not None:
        resumed = " (resumed)" if result.mode is RunMode.RESUME else ""
        files = sum(len(published.shards) for published in export.all_sets)
        written = sum(len(published.written) for published in export.all_sets)
        removed = f" (see {export.removals_path})" if export.removed_urls else ""
        lines.append(
            f"Run {result.run}{resumed}: {stats.get(Stat.NOT_MODIFIED, 0)} unchanged pages answered 304,"
            f" {written} of {files} sitemap files rewritten, {export.removed_urls} URLs removed{removed}"
            + (f", {export.carried} URLs kept from the last run without a fetch" if export.carried else "")
        )
    if export.changes is not None:
        said = export.changes.words() or "nothing"
        lines.append(f"Changes: {said} (see {export.changes_path})")
    if result.public_check is not None:
        lines.append(f"Public copy: {result.public_check.verdict()}")
        lines.extend(f"  {finding}" for finding in result.public_check.findings[:20])
    return lines


def host_lines(result: CrawlResult, public: Callable[[str], str] | None = None) -> list[str]:
    """A crawl of several hosts: each host's URLs, and where its own sitemap set is; with a
    production map (*public*: a crawled root to its production root), under the production name."""
    if not result.origins:
        return []
    export = result.export
    sets = {published.index_url.split("/", 3)[2]: published for published in export.sets.values()}
    lines = [f"Hosts: {plural(len(result.origins), 'host')}, {len(sets)} with a sitemap set of its own:"]
    origins = {public(root) if public else root: counts for root, counts in result.origins.items()}
    for root, counts in sorted(origins.items()):
        netloc = root.split("/", 3)[2]
        host = urlsplit(root).hostname
        published = sets.get(netloc)
        if published is not None:
            where = f"{published.index_path} ({plural(len(published.shards), 'file')})"
        elif host in export.withdrawn:
            where = "no set: its earlier set is withdrawn, as none of its URLs is listed now"
        elif host in export.kept:
            where = f"no set: its earlier set is kept, as {export.kept[host]}"
        else:
            where = "no set"
        lines.append(f"  {netloc:<30} {counts.listed} listed, {counts.left_out} left out: {where}")
    crawled = {urlsplit(root).hostname for root in origins}
    lines += [
        f"  {host:<30} its earlier set is kept: {why}" for host, why in export.kept.items() if host not in crawled
    ]
    if export.hosts_index:
        lines.append(f"  One index of every host's sitemaps: {export.hosts_index} (--index-host)")
    elif export.hosts_index_missing:
        lines.append(f"  No index of every host's sitemaps (--index-host): {export.hosts_index_missing}")
    return lines


def limit_lines(stats: dict[str, Any], config: SitemapConfig) -> list[str]:
    """Each limit that cut the crawl, in words, with the option that raises it: a page left out
    by a limit may be a real page, and only the user can tell."""
    limits = {
        Limit.PAGES: (f"the page budget of {config.max_pages}", "--max-pages (0: no limit)"),
        Limit.DEPTH: (f"the depth limit of {config.max_depth} clicks", "--max-depth"),
        Limit.URL_LENGTH: (f"the URL length limit of {config.max_url_length}", "--max-url-length"),
        Limit.QUERY_VARIANTS: (
            f"{config.max_query_variants} query strings per path and set of parameter names",
            "--max-query-variants",
        ),
        Limit.HOSTS: (f"{config.hosts.max_hosts} hosts", "--max-hosts"),
        Limit.HOST_PAGES: (f"the page budget of {config.hosts.max_pages} per host", "--max-pages-per-host"),
    }
    counts = {kind: stats.get(limit(kind), 0) for kind in limits}
    counts[Limit.PAGES] += stats.get(Stat.PAST_BUDGET, 0)  # met past the budget: only counted
    return [
        f"Cut by a limit: {plural(counts[kind], 'URL')} over {what}; raise it with {option}"
        for kind, (what, option) in limits.items()
        if counts[kind]
    ]


def sitemap_lines(result: CrawlResult) -> list[str]:
    """Which sitemaps seeded the crawl, and the ones robots.txt names besides ours: with two
    sets advertised, a search engine reads both (a CMS's own, a plugin's)."""
    lines = []
    if result.seed_sitemaps:
        shown = ", ".join(result.seed_sitemaps[:5]) + (" ..." if len(result.seed_sitemaps) > 5 else "")
        lines.append(f"Seeded from {plural(len(result.seed_sitemaps), 'sitemap')}: {shown}")
    published = result.export.publish
    ours = normalize_or_raw(published.index_url) if published is not None else None
    others = [url for url in result.robots_sitemaps if url != ours]
    if others:
        lines.append(
            f"robots.txt already names {plural(len(others), 'other sitemap')}: {', '.join(others[:5])}"
            + (" ..." if len(others) > 5 else "")
            + "; with ours added, search engines read both sets (drop one, or keep ours out of robots.txt)"
        )
    return lines


def crawl_failure(result: CrawlResult, config: SitemapConfig) -> str:
    """Why no sitemap was published, in words a user can act on."""
    export = result.export
    if export.not_published is NotPublished.INTERRUPTED:
        # Stopped by a signal with a state store: the same command with --resume goes on from here.
        resume = "; run it again with --resume to continue" if result.stopped_by and config.state_path else ""
        return f"{export.detail}: previous sitemaps kept{resume}"
    if export.not_published is NotPublished.EXPORT_FAILED:
        return f"export failed: {export.detail}"
    if export.not_published is NotPublished.SHRINK:
        return f"{export.detail}: previous sitemaps kept"
    reason = result.start.reason if result.start else None
    detail = result.start.detail if result.start else ""
    if reason == Reason.FETCH_ERROR:
        return f"the start URL {config.start_url} is unreachable ({detail})"
    if reason == Reason.ROBOTS:
        if result.robots_unavailable:
            return (
                f"robots.txt of {result.robots_unavailable}; while it cannot be read nothing may be crawled (RFC 9309)"
            )
        return f"robots.txt disallows the start URL {config.start_url} for this user agent"
    if reason == Reason.REDIRECT:
        return f"the start URL {config.start_url} redirects ({detail}); start the crawl at the target instead"
    if reason == Reason.STATUS:
        return f"the start URL {config.start_url} answered HTTP {detail}, and no listable page was found"
    if export.not_published is None:  # the export never ran: a forced stop (a second SIGTERM, ...)
        return "the crawl was stopped before it finished: previous sitemaps kept"
    failure = export.detail or "no sitemap was published"
    return f"{failure}: no crawled page passed the listing rules (see the report for each URL's reason)"


def notification_line(notification: Notification) -> str:
    if notification.skipped:
        return f"IndexNow: skipped, {notification.skipped}"
    if not notification.urls:
        return "IndexNow: nothing changed, nothing sent"
    if notification.error is None:
        return f"IndexNow: {notification.submitted} URLs sent in {notification.batches} batch(es) ({notification.path})"
    if notification.submitted:  # a crawl of several hosts: some hosts told, another not
        sent = f"{notification.submitted} of {notification.urls} URLs sent in {notification.batches} batch(es)"
        return f"IndexNow: {sent}, the others not: {notification.error} ({notification.path})"
    return f"IndexNow: not sent: {notification.error} ({notification.path})"


def summary_event(result: CrawlResult, stats: dict[str, Any], config: SitemapConfig, elapsed: float, code: int) -> str:
    """The end of a run as one JSON log line: counts, reasons, what was published or why not."""
    published = result.export.publish
    counts: dict[str, Any] = {**progress_counts(stats), "seconds": round(elapsed, 1)}
    counts["reasons"] = {reason.value: stats[dropped(reason)] for reason in Reason if stats.get(dropped(reason))}
    if stats.get(Stat.SHARED_REFETCHED):
        counts["refetched_after_a_worker_stopped"] = stats[Stat.SHARED_REFETCHED]
    if rendering := render_counts(stats):
        counts["render"] = rendering
    fields: dict[str, Any] = {"event": "summary", "counts": counts, "exit": code, "run": result.run}
    if result.parameters:
        fields["parameters"] = result.parameters
    if published is None:
        message = f"no sitemap written: {crawl_failure(result, config)}"
    else:
        message = f"published {published.index_path} ({plural(len(published.shards), 'sitemap file')})"
        fields["url"] = published.index_url
        if result.export.sets:
            fields["sets"] = {host: each.index_url for host, each in result.export.sets.items()}
        if result.export.changes is not None:
            fields["changes"] = result.export.changes.summary()
        if result.public_check is not None:
            fields["check"] = check_fields(result.public_check)
        if result.side_errors:
            fields["detail"] = "; ".join(result.side_errors)
        if result.remote is not None:
            fields["s3"] = remote_fields(result.remote)
            if result.remote.error is not None:
                upload = f"not published to {result.remote.target}: {result.remote.error}"
                fields["detail"] = "; ".join([*result.side_errors, upload])
    return json_event("ERROR" if code else "INFO", "sitemap-crawler", message, **fields)
