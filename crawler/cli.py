"""``sitemap-crawler``: the command-line entry point.

User mistakes (bad options, bad config, unwritable folders) end with a
one-line message and exit status 2; a crawl that cannot produce a sitemap
ends with a message saying why and exit status 1; success is 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sqlite3
import sys
import threading
import time
import tomllib
from pathlib import Path
from typing import Any, NoReturn

from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings

from crawler.indexnow import submit
from crawler.progress import progress_counts
from crawler.reasons import Reason, stats_key
from crawler.sitemaps.validate import validate_target
from crawler.state import StateLocked, StateStore
from crawler.urls import normalize_url, site_root
from crawler.webhook import WebhookServer
from settings.config import SitemapConfig, beside

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

CRAWL_EXAMPLE = """\
example:
  sitemap-crawler crawl https://www.example.com/ --out public/ --gzip
  sitemap-crawler crawl https://www.example.com/ --out public/ --exclude '/search' --max-pages 5000
"""


VALIDATE_EXAMPLE = """\
example:
  sitemap-crawler validate public/sitemap.xml
  sitemap-crawler validate https://www.example.com/sitemap.xml.gz --origin https://www.example.com
"""


UPDATE_EXAMPLE = """\
example:
  sitemap-crawler update https://www.example.com/ --out public/ --add https://www.example.com/new-post
  sitemap-crawler update https://www.example.com/ --out public/ --remove https://www.example.com/old-post
"""


SERVE_EXAMPLE = """\
example:
  SITEMAP_WEBHOOK_TOKEN=s3cret sitemap-crawler serve https://www.example.com/ --out public/
  curl -X POST -H 'Authorization: Bearer s3cret' -d '{"add": ["https://www.example.com/new"]}' \\
       http://127.0.0.1:8787/update
"""


class UsageError(Exception):
    """A mistake in how the command was called; reported in one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


# Options that map one-to-one onto a setting: option dest -> setting name.
_OPTION_SETTINGS = {
    "out": "SITEMAP_OUTPUT_DIR",
    "base_url": "SITEMAP_BASE_URL",
    "report": "SITEMAP_REPORT_PATH",
    "basename": "SITEMAP_BASENAME",
    "gzip": "SITEMAP_GZIP",
    "max_pages": "SITEMAP_MAX_PAGES",
    "max_depth": "SITEMAP_MAX_DEPTH",
    "max_url_length": "SITEMAP_MAX_URL_LENGTH",
    "max_query_variants": "SITEMAP_MAX_QUERY_VARIANTS",
    "max_urls_per_file": "SITEMAP_MAX_URLS_PER_FILE",
    "max_bytes_per_file": "SITEMAP_MAX_BYTES_PER_FILE",
    "user_agent": "USER_AGENT",
    "robots_token": "SITEMAP_ROBOTS_TOKEN",
    "concurrency": "CONCURRENT_REQUESTS_PER_DOMAIN",
    "delay": "DOWNLOAD_DELAY",
    "timeout": "DOWNLOAD_TIMEOUT",
    "retries": "RETRY_TIMES",
    "include": "SITEMAP_INCLUDE",
    "exclude": "SITEMAP_EXCLUDE",
    "allow_type": "SITEMAP_ALLOWED_CONTENT_TYPES",
    "strip_param": "SITEMAP_STRIP_QUERY_PARAMS",
    "follow_nofollow": "SITEMAP_FOLLOW_NOFOLLOW",
    "images": "SITEMAP_IMAGES",
    "videos": "SITEMAP_VIDEOS",
    "hreflang": "SITEMAP_HREFLANG",
    "max_images_per_url": "SITEMAP_MAX_IMAGES_PER_URL",
    "image_max_pages": "SITEMAP_IMAGE_MAX_PAGES",
    "news_name": "SITEMAP_NEWS_NAME",
    "news_language": "SITEMAP_NEWS_LANGUAGE",
    "news_pattern": "SITEMAP_NEWS_PATTERNS",
    "state": "SITEMAP_STATE_PATH",
    "use_state": "SITEMAP_STATE",
    "resume": "SITEMAP_RESUME",
    "fingerprint_ignore": "SITEMAP_FINGERPRINT_IGNORE",
    "shard_strategy": "SITEMAP_SHARD_STRATEGY",
    "shard_section": "SITEMAP_SHARD_SECTIONS",
    "shard_id_pattern": "SITEMAP_SHARD_ID_PATTERN",
    "shard_id_range": "SITEMAP_SHARD_ID_RANGE",
    "compact": "SITEMAP_COMPACT",
    "delta": "SITEMAP_DELTA",
    "delta_rotate": "SITEMAP_DELTA_ROTATE",
    "removals": "SITEMAP_REMOVALS_PATH",
    "indexnow_endpoint": "SITEMAP_INDEXNOW_ENDPOINT",
    "indexnow_key": "SITEMAP_INDEXNOW_KEY",
    "indexnow_key_location": "SITEMAP_INDEXNOW_KEY_LOCATION",
}
# List options that add to the default list instead of replacing it.
_EXTENDING = {"allow_type", "strip_param"}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sitemap-crawler", description="Crawl a website and publish its XML sitemaps.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    crawl = commands.add_parser(
        "crawl",
        help="crawl a site and write its sitemap set",
        description="Crawl URL's site (same scheme, host and port), then publish sitemaps and an index into --out.",
        epilog=CRAWL_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_crawl_options(crawl)
    update = commands.add_parser(
        "update",
        help="fetch only some URLs of a crawled site and update its sitemaps",
        description=(
            "Event-driven update: fetch the --add URLs (applying every listing rule), drop the --remove URLs, "
            "keep every other URL of the last published run as it was, and republish: only the affected "
            "sitemap files and the index change. Needs the state store of an earlier crawl."
        ),
        epilog=UPDATE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_crawl_options(update)
    update.add_argument("--add", action="append", default=[], metavar="URL", help="a new or changed URL (repeatable)")
    update.add_argument("--remove", action="append", default=[], metavar="URL", help="a deleted URL (repeatable)")
    serve = commands.add_parser(
        "serve",
        help="listen for CMS publish webhooks and run updates",
        description=(
            "Listen for POST /update with 'Authorization: Bearer TOKEN' and a JSON body "
            '{"add": [URL, ...], "remove": [URL, ...]}; each request runs `update` for those URLs.'
        ),
        epilog=SERVE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("url", help="the site's start URL, as given to crawl")
    serve.add_argument("--out", "-o", metavar="DIR", required=True, help="the output folder of the crawl")
    serve.add_argument(
        "--listen", default="127.0.0.1:8787", metavar="HOST:PORT", help="address (default 127.0.0.1:8787)"
    )
    serve.add_argument("--token", metavar="SECRET", help="shared secret (default: $SITEMAP_WEBHOOK_TOKEN)")
    serve.add_argument("--config", metavar="FILE", help="TOML file with crawl options for the updates")
    validate = commands.add_parser(
        "validate",
        help="validate a sitemap, an index (with what it lists) or a folder",
        description=(
            "Validate sitemaps against the sitemaps.org protocol and the image, video, news and hreflang "
            "extensions, ours or anyone's, plain or gzip. One line per problem: file:line: rule: message."
        ),
        epilog=VALIDATE_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument("target", metavar="PATH_OR_URL", help="a sitemap or index file, a folder, or an http(s) URL")
    validate.add_argument("--origin", metavar="URL", help="scheme://host every loc must use (default: inferred)")
    return parser


def add_crawl_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="start URL; its scheme, host and port are the crawl scope")
    parser.add_argument("--out", "-o", metavar="DIR", help="output folder for the sitemaps (default: ./sitemaps)")
    parser.add_argument(
        "--base-url", metavar="URL", help="public URL the output folder is served at (default: site root)"
    )
    parser.add_argument(
        "--report", metavar="PATH", help="crawl report path (default: DIR.crawl-report.jsonl beside DIR)"
    )
    parser.add_argument("--basename", metavar="NAME", help="file name stem: NAME.xml index, NAME-1.xml shards")
    parser.add_argument("--gzip", action=argparse.BooleanOptionalAction, default=None, help="gzip the shards (.xml.gz)")
    parser.add_argument("--max-pages", type=int, metavar="N", help="stop requesting pages after N (0 = no limit)")
    parser.add_argument("--max-depth", type=int, metavar="N", help="follow links at most N clicks deep (0 = no limit)")
    parser.add_argument("--max-url-length", type=int, metavar="N", help="skip URLs longer than N characters")
    parser.add_argument(
        "--max-query-variants", type=int, metavar="N", help="at most N query strings per path (0 = no limit)"
    )
    parser.add_argument("--max-urls-per-file", type=int, metavar="N", help="URLs per sitemap file (at most 50000)")
    parser.add_argument("--max-bytes-per-file", type=int, metavar="N", help="uncompressed bytes per sitemap file")
    parser.add_argument("--user-agent", metavar="UA", help="User-Agent header, also matched against robots.txt")
    parser.add_argument(
        "--robots-token", metavar="TOKEN", help="crawler token for <meta name=TOKEN> (default: googlebot)"
    )
    parser.add_argument("--concurrency", type=int, metavar="N", help="parallel requests to the site (default: 4)")
    parser.add_argument("--delay", type=float, metavar="SECONDS", help="pause between requests (default: 0.25)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="download timeout per request (default: 30)")
    parser.add_argument("--retries", type=int, metavar="N", help="retries for 5xx and network errors (default: 2)")
    parser.add_argument("--include", action="append", metavar="REGEX", help="list only URLs matching (repeatable)")
    parser.add_argument("--exclude", action="append", metavar="REGEX", help="never list URLs matching (repeatable)")
    parser.add_argument(
        "--allow-type", action="append", metavar="TYPE", help="also list this media type, e.g. application/pdf"
    )
    parser.add_argument("--strip-param", action="append", metavar="GLOB", help="also drop query parameters matching")
    parser.add_argument("--follow-nofollow", action="store_true", default=None, help="follow links of nofollow pages")
    parser.add_argument(
        "--images", action=argparse.BooleanOptionalAction, default=None, help="image:image entries (on)"
    )
    parser.add_argument(
        "--videos", action=argparse.BooleanOptionalAction, default=None, help="video:video entries (on)"
    )
    parser.add_argument(
        "--hreflang", action=argparse.BooleanOptionalAction, default=None, help="xhtml:link alternates (on)"
    )
    parser.add_argument("--max-images-per-url", type=int, metavar="N", help="images listed per URL (at most 1000)")
    parser.add_argument("--image-max-pages", type=int, metavar="N", help="drop images found on more than N pages")
    parser.add_argument("--news-name", metavar="NAME", help="Google News publication name; turns news sitemaps on")
    parser.add_argument("--news-language", metavar="CODE", help="news language (default: each page's <html lang>)")
    parser.add_argument("--news-pattern", action="append", metavar="REGEX", help="only matching URLs can be news")
    parser.add_argument("--state", metavar="PATH", help="state store (default: DIR.state.sqlite beside DIR)")
    parser.add_argument(
        "--no-state", dest="use_state", action="store_false", default=None, help="no state store: a one-off crawl"
    )
    parser.add_argument("--resume", action="store_true", default=None, help="continue the interrupted last run")
    parser.add_argument(
        "--fingerprint-ignore", action="append", metavar="SELECTOR", help="CSS/XPath of volatile page parts"
    )
    parser.add_argument(
        "--shard-strategy", choices=("sequential", "section", "date", "id"), help="how URLs are sharded"
    )
    parser.add_argument(
        "--shard-section", action="append", metavar="NAME=REGEX", help="a section for --shard-strategy section"
    )
    parser.add_argument("--shard-id-pattern", metavar="REGEX", help="regex whose group is the numeric ID (id strategy)")
    parser.add_argument("--shard-id-range", type=int, metavar="N", help="IDs per group for the id strategy")
    parser.add_argument("--compact", action="store_true", default=None, help="repack shards, closing the holes")
    parser.add_argument("--delta", action="store_true", default=None, help="new/changed URLs go to a delta sitemap")
    parser.add_argument("--delta-rotate", type=int, metavar="N", help="runs between full generations (default 7)")
    parser.add_argument("--removals", metavar="PATH", help="removals report (default: DIR.removals.jsonl beside DIR)")
    parser.add_argument("--indexnow-endpoint", metavar="URL", help="IndexNow endpoint; with --indexnow-key, notify")
    parser.add_argument("--indexnow-key", metavar="KEY", help="IndexNow key (the site must serve KEY.txt)")
    parser.add_argument("--indexnow-key-location", metavar="URL", help="where the site serves the key file")
    parser.add_argument("--config", metavar="FILE", help="TOML file with these options (command line wins)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="set any Scrapy/SITEMAP_ setting"
    )
    parser.add_argument("--verbose", "-v", action="count", default=0, help="log more (-v info, -vv debug)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress line")


def load_config_file(path: str) -> dict[str, Any]:
    """Options from a TOML file: top-level keys named like the long options."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise UsageError(f"cannot read config file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"config file {path} is not valid TOML: {error}") from None
    options: dict[str, Any] = {}
    raw_settings = data.pop("settings", {})
    for key, value in data.items():
        dest = key.replace("-", "_")
        if dest not in _OPTION_SETTINGS:
            raise UsageError(f"config file {path}: unknown option {key!r}")
        options[dest] = value
    if not isinstance(raw_settings, dict):
        raise UsageError(f"config file {path}: [settings] must be a table")
    options["_settings"] = raw_settings
    return options


def build_settings(args: argparse.Namespace) -> Settings:
    settings = Settings()
    settings.setmodule("settings", priority="project")
    settings.set("SITEMAP_PROGRESS", not args.quiet and args.verbose < 2, priority="cmdline")
    settings.set("LOG_LEVEL", ("WARNING", "INFO", "DEBUG")[min(args.verbose, 2)], priority="cmdline")
    settings.set("LOG_FORMAT", "%(levelname)s: %(message)s", priority="cmdline")
    settings.set("SITEMAP_START_URL", args.url, priority="cmdline")
    if args.command == "update":
        if not args.add and not args.remove:
            raise UsageError("update needs at least one --add or --remove URL")
        settings.set("SITEMAP_UPDATE_ADD", args.add, priority="cmdline")
        settings.set("SITEMAP_UPDATE_REMOVE", args.remove, priority="cmdline")
    layers: list[dict[str, Any]] = []
    if args.config:
        file_options = load_config_file(args.config)
        for name, value in file_options.pop("_settings").items():
            settings.set(str(name), value, priority="cmdline")
        layers.append(file_options)
    layers.append({k: v for k, v in vars(args).items() if k in _OPTION_SETTINGS and v is not None})
    for layer in layers:
        for dest, value in layer.items():
            name = _OPTION_SETTINGS[dest]
            if dest in _EXTENDING:
                value = [*settings.getlist(name), *value]
            elif dest == "shard_section" and isinstance(value, list):
                value = _sections(value)
            settings.set(name, value, priority="cmdline")
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--set expects NAME=VALUE, not {item!r}")
        settings.set(name.strip(), value, priority="cmdline")
    return settings


def _sections(values: list[str]) -> dict[str, str]:
    sections = {}
    for value in values:
        name, sep, pattern = value.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--shard-section expects NAME=REGEX, not {value!r}")
        sections[name.strip()] = pattern
    return sections


def check_state(config: SitemapConfig) -> None:
    """Refuse early when another run holds the state store, or when an
    update has no earlier published crawl to build on."""
    if config.state_path is None:
        if config.updating:
            raise UsageError("update needs the state store of an earlier crawl (drop --no-state)")
        return
    try:
        store = StateStore(config.state_path)
        try:
            if config.updating and store.last_published_run() is None:
                raise UsageError(f"update needs an earlier published crawl in {config.state_path}; run crawl first")
        finally:
            store.close()
    except StateLocked as error:
        raise UsageError(str(error)) from None
    except sqlite3.DatabaseError as error:
        raise UsageError(f"state store {config.state_path} is not usable: {error}") from None


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
    """Scrapy logs some network failures with a traceback; a CLI user needs one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            record.msg = f"{record.getMessage()} ({record.exc_info[1]!r})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def run_crawl(settings: Settings, config: SitemapConfig) -> dict[str, Any]:
    from crawler.spiders.site import SiteSpider  # noqa: PLC0415 - keeps --help fast

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler)  # installs the crawl's log handler before returning
    for handler in logging.getLogger().handlers:
        handler.addFilter(_NoTracebacks())
    # Scrapy sets its loggers to DEBUG and filters in its handler, so the
    # "Crawled" and "Scraped" records were built for every request only to be
    # thrown away; filtered at the loggers, they are never built.
    loggers = [logging.getLogger(), logging.getLogger("scrapy")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(settings.get("LOG_LEVEL"))
    try:
        process.start()
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
    return crawler.stats.get_stats()


def summarize(stats: dict[str, Any], config: SitemapConfig, elapsed: float) -> list[str]:
    counts = progress_counts(stats)
    rate = counts["crawled"] / max(elapsed, 1e-6)
    lines = [
        f"Crawled {counts['crawled']} responses in {elapsed:.1f} s ({rate:.1f} pages/s)",
        f"Listed {counts['listed']} URLs, excluded {counts['excluded']}:",
    ]
    for reason in Reason:
        number = stats.get(stats_key("dropped", reason.value))
        if number:
            lines.append(f"  {reason.value:<14} {number}")
    media = [
        (stats.get(stats_key("images", "listed"), 0), "images"),
        (stats.get(stats_key("videos", "listed"), 0), "videos"),
        (stats.get(stats_key("news_urls"), 0), "news articles in the last two days"),
    ]
    if any(count for count, _ in media):
        lines.append("With " + ", ".join(f"{count} {what}" for count, what in media))
    left_out = stats.get(stats_key("videos", "left_out"), 0) + stats.get(stats_key("images", "over_limit"), 0)
    warnings = sorted((k.rsplit("/", 1)[1], v) for k, v in stats.items() if k.startswith(stats_key("warnings", "")))
    if warnings or left_out:
        lines.append("Warnings (details in the report):")
        lines.extend(f"  {code:<24} {count}" for code, count in warnings)
        if stats.get(stats_key("videos", "left_out")):
            lines.append(f"  {'video-left-out':<24} {stats[stats_key('videos', 'left_out')]}")
        if stats.get(stats_key("images", "over_limit")):
            lines.append(f"  {'images-over-limit':<24} {stats[stats_key('images', 'over_limit')]}")
    sister = stats.get(stats_key("sister_origin"))
    if sister:
        count = stats.get(stats_key("sister_origin_urls"))
        lines.append(
            f"Note: {count} out-of-scope URL(s) are on {sister}, another origin of the same site; "
            f"only {site_root(config.start_url)} is crawled"
        )
    if stats.get(stats_key("report_path")):
        lines.append(f"Report: {stats[stats_key('report_path')]}")
    if stats.get(stats_key("run")):
        resumed = " (resumed)" if stats.get(stats_key("resumed")) else ""
        lines.append(
            f"Run {stats[stats_key('run')]}{resumed}: {stats.get(stats_key('not_modified'), 0)} unchanged pages"
            f" answered 304, {stats.get(stats_key('shards_written'), 0)} of {stats.get(stats_key('shards'), 0)}"
            f" sitemap files rewritten, {stats.get(stats_key('removed'), 0)} URLs removed"
            + (f" (see {stats[stats_key('removals_path')]})" if stats.get(stats_key("removed")) else "")
        )
    return lines


def crawl_failure(stats: dict[str, Any], config: SitemapConfig) -> str:
    """Why no sitemap was published, in words a user can act on."""
    start = stats.get(stats_key("start", "outcome"))
    detail = stats.get(stats_key("start", "detail")) or ""
    failure = str(stats.get(stats_key("failure")) or "no sitemap was published")
    if failure.startswith(("crawl ", "export failed")):
        return failure
    if start == Reason.FETCH_ERROR:
        return f"the start URL {config.start_url} is unreachable ({detail})"
    if start == Reason.ROBOTS:
        unavailable = stats.get(stats_key("robots_unavailable"))
        if unavailable:
            return f"robots.txt of {unavailable}; a server error means nothing may be crawled (RFC 9309)"
        return f"robots.txt disallows the start URL {config.start_url} for this user agent"
    if start == Reason.REDIRECT:
        return f"the start URL {config.start_url} redirects ({detail}); start the crawl at the target instead"
    if start == Reason.STATUS:
        return f"the start URL {config.start_url} answered HTTP {detail}, and no listable page was found"
    return f"{failure}: no crawled page passed the listing rules (see the report for each URL's reason)"


def run_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("SITEMAP_WEBHOOK_TOKEN", "")
    if len(token) < 8:
        raise UsageError("serve needs a shared secret of at least 8 characters (--token or $SITEMAP_WEBHOOK_TOKEN)")
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--listen expects HOST:PORT, not {args.listen!r}")
    command = [sys.executable, "-m", "crawler.cli", "update", args.url, "--out", args.out, "-q"]
    if args.config:
        command += ["--config", args.config]
    try:
        server = WebhookServer((host, int(port)), token, command)
    except OSError as error:
        raise UsageError(f"cannot listen on {args.listen}: {error.strerror or error}") from None
    bound_port = server.server_address[1]
    print(f"listening on http://{host}:{bound_port}/update", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return EXIT_OK


def run_validate(args: argparse.Namespace) -> int:
    target = str(args.target)
    remote = target.startswith(("http://", "https://"))
    if not remote and not Path(target).exists():
        raise UsageError(f"{target}: no such file or folder")
    origin = None
    if args.origin:
        origin = site_root(
            normalize_url(args.origin) if "://" in args.origin else normalize_url("https://" + args.origin)
        )
        origin = origin.rstrip("/")
    started = time.monotonic()
    files, problems = validate_target(target, origin)
    for problem in problems:
        print(problem)
    elapsed = time.monotonic() - started
    verdict = "valid" if not problems else f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    print(f"{target}: {verdict} ({files} file{'s' if files != 1 else ''} read in {elapsed:.1f} s)", file=sys.stderr)
    return EXIT_OK if not problems else EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if args.command == "validate":
            return run_validate(args)
        if args.command == "serve":
            return run_serve(args)
        settings = build_settings(args)
        config = SitemapConfig.from_settings(settings)
        check_writable(config.output_dir, "output folder")
        check_writable(config.report_path.parent, "report folder")
        check_state(config)
    except (UsageError, ValueError) as error:
        print(f"sitemap-crawler: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    started = time.monotonic()
    stats = run_crawl(settings, config)
    for line in summarize(stats, config, time.monotonic() - started):
        print(line, file=sys.stderr)
    if not stats.get(stats_key("published")):
        print(f"sitemap-crawler: no sitemap written: {crawl_failure(stats, config)}", file=sys.stderr)
        return EXIT_FAILED
    shards = stats.get(stats_key("shards"), 0)
    print(
        f"Sitemap index: {stats[stats_key('index_path')]} ({shards} sitemap file{'s' if shards != 1 else ''})",
        file=sys.stderr,
    )
    notify_indexnow(stats, config)
    print("Add this line to robots.txt:", file=sys.stderr)
    print(f"Sitemap: {stats[stats_key('index_url')]}")
    return EXIT_OK


def notify_indexnow(stats: dict[str, Any], config: SitemapConfig) -> None:
    """Submit exactly the URLs this run added, changed or removed; report on stderr and beside DIR."""
    if not (config.indexnow_endpoint and config.indexnow_key and config.indexnow_key_location):
        return
    if config.state_path is None or not stats.get(stats_key("run")):
        print("IndexNow: skipped, it needs the state store to know what changed", file=sys.stderr)
        return
    store = StateStore(config.state_path)
    try:
        run = int(stats[stats_key("run")])
        urls = store.changed_in(run)
        previous = store.previous_run(run)
        if previous is not None:
            urls += [url for url, *_ in store.removed_since(run, previous)]
    finally:
        store.close()
    report = submit(
        urls,
        endpoint=config.indexnow_endpoint,
        key=config.indexnow_key,
        key_location=config.indexnow_key_location,
        batch_size=config.indexnow_batch,
    )
    path = beside(config.output_dir, "indexnow.json")
    path.write_text(
        json.dumps(
            {"urls": urls, "submitted": report.submitted, "batches": report.batches, "error": report.error}, indent=1
        ),
        encoding="utf-8",
    )
    if not urls:
        print("IndexNow: nothing changed, nothing sent", file=sys.stderr)
    elif report.ok:
        print(f"IndexNow: {report.submitted} URLs sent in {len(report.batches)} batch(es) ({path})", file=sys.stderr)
    else:
        print(f"IndexNow: not sent: {report.error} ({path})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
