"""The command line: every subcommand, its options and an example for each."""

from __future__ import annotations

import argparse
import contextlib
from functools import cache

from crawler.cli.changes import add_change_options
from crawler.cli.check import add_check_command
from crawler.cli.coverage import add_coverage_command
from crawler.cli.examples import (
    AUDIT_EXAMPLE,
    CONFIG_EXAMPLE,
    CRAWL_EXAMPLE,
    SERVE_EXAMPLE,
    UPDATE_EXAMPLE,
)
from crawler.cli.hosting import add_host_options
from crawler.cli.publishing import add_publishing_options
from crawler.cli.rendering import add_render_options
from crawler.cli.sharing import add_redis_safety, add_worker_command
from crawler.cli.usage import Parser, UsageError, package_version
from crawler.cli.validate import add_validate_command
from crawler.protocol import MAX_IMAGES_PER_URL, MAX_URLS
from settings.options import OPTION_SETTINGS, PROFILES
from settings.ranges import option_type

__all__ = ["UsageError", "add_audit_options", "add_crawl_options", "build_parser", "option_kinds"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="sitemap-crawler", description="Crawl a website and publish its XML sitemaps.")
    parser.add_argument("--version", action="version", version=f"sitemap-crawler {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    crawl = commands.add_parser(
        "crawl",
        help="crawl a site and write its sitemap set",
        description="Crawl URL's site (same scheme, host and port), then publish sitemaps and an index into --out.",
        epilog=CRAWL_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_crawl_options(crawl)
    add_publishing_options(crawl)
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
    add_publishing_options(update)
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
    serve.add_argument(
        "--update-timeout",
        type=option_type("serve --update-timeout"),
        default=600.0,
        metavar="SECONDS",
        help="the most one update may take (600)",
    )
    audit = commands.add_parser(
        "audit",
        help="audit a staging site: every URL explained, the production sitemap previewed",
        description=(
            "Crawl a staging site like crawl, write the would-be production sitemap set (locs on "
            "--production-url) and a report into --out: report.html, report.json, urls.csv and one "
            "findings-KIND.csv per finding kind. Exit status 4 when a --fail-on finding is present."
        ),
        epilog=AUDIT_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_crawl_options(audit)
    add_audit_options(audit)
    config = commands.add_parser(
        "config",
        help="show the effective configuration and the layer of each value",
        description=(
            "Print every setting as the run would see it, with the layer it came from: default < --profile < "
            "--config file < SITEMAP_CRAWLER_* environment < options < --set. Secrets are masked."
        ),
        epilog=CONFIG_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        intermixed=True,
    )
    config.add_argument("action", choices=("show",), help="show: print the effective configuration")
    config.add_argument(
        "--for",
        dest="for_command",
        choices=("crawl", "audit"),
        default="crawl",
        help="the command whose defaults apply",
    )
    add_crawl_options(config)
    add_audit_options(config)
    add_publishing_options(config)
    add_worker_command(commands)
    add_check_command(commands)
    add_validate_command(commands)
    add_coverage_command(commands)
    for command in commands.choices.values():  # every command: -v shows a bug's traceback (the crawl's logs more)
        with contextlib.suppress(argparse.ArgumentError):
            command.add_argument("--verbose", "-v", action="count", default=0, help="say more; a bug's traceback")
    return parser


@cache
def option_kinds() -> dict[str, str]:
    """The kind of every option that maps onto a setting (bool, int, float, list, str),
    as the command line parses it: the environment and config files are read alike."""
    parser = argparse.ArgumentParser(add_help=False)
    add_crawl_options(parser)
    add_audit_options(parser)
    add_publishing_options(parser)  # crawl and update only
    kinds = {}
    for action in parser._actions:  # argparse has no public list of its actions
        if action.dest not in OPTION_SETTINGS:
            continue
        if action.nargs == 0:
            kinds[action.dest] = "bool"
        elif isinstance(action, argparse._AppendAction):
            kinds[action.dest] = "list"
        else:
            kinds[action.dest] = {int: "int", float: "float"}.get(action.type, "str")  # type: ignore[call-overload]
    return kinds


def add_audit_options(parser: argparse.ArgumentParser) -> None:
    from crawler.audit.findings import Kind  # noqa: PLC0415 - the kinds, named in --help

    parser.add_argument(
        "--production-url",
        action="append",
        metavar="URL",
        help="the production origin every loc is written on; STAGING=URL maps one more staging host (repeatable)",
    )
    parser.add_argument("--user", metavar="NAME", help="HTTP basic auth user for the staging origins only")
    parser.add_argument("--password", metavar="SECRET", help="its password (visible to ps: prefer --password-env)")
    parser.add_argument(
        "--password-env", metavar="VAR", help="environment variable holding the password ($SITEMAP_STAGING_PASSWORD)"
    )
    parser.add_argument(
        "--header", action="append", metavar="'NAME: VALUE'", help="header for staging (repeatable; see --header-env)"
    )
    parser.add_argument(
        "--header-env", action="append", metavar="VAR", help="environment variable holding a 'NAME: VALUE' header"
    )
    parser.add_argument(
        "--cookie", action="append", metavar="NAME=VALUE", help="cookie for staging (repeatable; prefer --cookie-file)"
    )
    parser.add_argument(
        "--cookie-file", metavar="FILE", help="cookies for staging: a cookies.txt export, or name=value per line"
    )
    parser.add_argument(
        "--as-if-no-blocker",
        action="store_true",
        default=None,  # None: not given here, so a lower layer (config file, environment) decides
        help="read pages as if the site-wide noindex or Disallow: / were absent",
    )
    parser.add_argument(
        "--ignore-robots",
        action="store_true",
        default=None,
        help="crawl despite robots.txt's rules, loudly (its Sitemap: lines and Crawl-delay still count)",
    )
    parser.add_argument("--deep-threshold", type=int, metavar="N", help="pages deeper are deep-pages (5)")
    parser.add_argument("--sitemap", action="append", metavar="URL_OR_PATH", help="the site's sitemap to compare with")
    parser.add_argument(
        "--fail-on",
        metavar="KIND[,KIND...]",
        help="exit 4 when findings of these kinds exist (new:KIND: only new ones, with --compare): "
        + ", ".join(kind.value for kind in Kind),
    )
    parser.add_argument(
        "--compare", metavar="DIR", help="an earlier audit's folder: mark each finding new, still there or fixed"
    )


def add_crawl_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "url", nargs="?", help="start URL; its scheme, host and port are the crawl scope ($SITEMAP_CRAWLER_URL)"
    )
    parser.add_argument("--out", "-o", metavar="DIR", help="output folder for the sitemaps (default: ./sitemaps)")
    parser.add_argument(
        "--base-url", metavar="URL", help="public URL the output folder is served at (default: site root)"
    )
    parser.add_argument(
        "--report", metavar="PATH", help="crawl report path (default: DIR.crawl-report.jsonl beside DIR)"
    )
    parser.add_argument("--basename", metavar="NAME", help="file name stem: NAME.xml index, NAME-1.xml shards")
    parser.add_argument("--gzip", action=argparse.BooleanOptionalAction, default=None, help="gzip the shards (.xml.gz)")
    parser.add_argument(
        "--stylesheet",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write sitemap.xsl beside the set: a browser shows the sitemaps as tables (search engines ignore it)",
    )
    parser.add_argument("--max-pages", type=int, metavar="N", help="stop requesting pages after N (0 = no limit)")
    parser.add_argument(
        "--max-depth", type=int, metavar="N", help="follow links at most N steps (a sitemap entry is 1; 0 = no limit)"
    )
    parser.add_argument("--max-url-length", type=int, metavar="N", help="skip URLs longer than N characters")
    parser.add_argument(
        "--max-query-variants",
        type=int,
        metavar="N",
        help="at most N query strings per path and set of parameter names, 10 N per path (0 = no limit)",
    )
    parser.add_argument("--max-redirects", type=int, metavar="N", help="hops of a redirect chain followed (10)")
    parser.add_argument(
        "--max-not-requested", type=int, metavar="N", help="report lines per reason for URLs never requested (10000)"
    )
    parser.add_argument(
        "--max-urls-per-file", type=int, metavar="N", help=f"URLs per sitemap file (at most {MAX_URLS})"
    )
    parser.add_argument("--max-bytes-per-file", type=int, metavar="N", help="uncompressed bytes per sitemap file")
    parser.add_argument("--user-agent", metavar="UA", help="User-Agent header, also matched against robots.txt")
    parser.add_argument(
        "--robots-token", metavar="TOKEN", help="crawler token for <meta name=TOKEN> (default: googlebot)"
    )
    parser.add_argument("--concurrency", type=int, metavar="N", help="parallel requests to the site (default: 4)")
    parser.add_argument(
        "--delay", type=float, metavar="SECONDS", help="a fixed pause between requests (default: adaptive)"
    )
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="download timeout per request (default: 30)")
    parser.add_argument(
        "--retries", type=int, metavar="N", help="retries of 500, 502-504, 522, 524, 408, 429, network errors"
    )
    parser.add_argument("--include", action="append", metavar="REGEX", help="list only URLs matching (repeatable)")
    parser.add_argument("--exclude", action="append", metavar="REGEX", help="never list URLs matching (repeatable)")
    parser.add_argument(
        "--allow-type", action="append", metavar="TYPE", help="also list this media type, e.g. application/pdf"
    )
    parser.add_argument("--strip-param", action="append", metavar="GLOB", help="also drop query parameters matching")
    parser.add_argument("--follow-nofollow", action="store_true", default=None, help="follow links of nofollow pages")
    parser.add_argument(
        "--keep-duplicates", action="store_true", default=None, help="list every page of the same content, not one"
    )
    parser.add_argument(
        "--images", action=argparse.BooleanOptionalAction, default=None, help="image:image entries (on)"
    )
    parser.add_argument(
        "--videos", action=argparse.BooleanOptionalAction, default=None, help="video:video entries (on)"
    )
    parser.add_argument(
        "--hreflang", action=argparse.BooleanOptionalAction, default=None, help="xhtml:link alternates (on)"
    )
    parser.add_argument(
        "--max-images-per-url", type=int, metavar="N", help=f"images listed per URL (at most {MAX_IMAGES_PER_URL})"
    )
    parser.add_argument(
        "--image-max-pages",
        type=int,
        metavar="N",
        help="drop images found on more than N listed pages; 0 keeps all (unset: over half of a site of 20+ pages)",
    )
    parser.add_argument("--news-name", metavar="NAME", help="Google News publication name; turns news sitemaps on")
    parser.add_argument("--news-language", metavar="CODE", help="news language (default: each page's <html lang>)")
    parser.add_argument("--news-pattern", action="append", metavar="REGEX", help="only matching URLs can be news")
    parser.add_argument("--state", metavar="PATH", help="state store (default: DIR.state.sqlite beside DIR)")
    parser.add_argument(
        "--no-state", dest="use_state", action="store_false", default=None, help="no state store: a one-off crawl"
    )
    parser.add_argument("--resume", action="store_true", default=None, help="continue the interrupted last run")
    parser.add_argument(
        "--urls", metavar="FILE", help="list mode: judge only the URLs in FILE, one per line (-: stdin), not links"
    )
    parser.add_argument(
        "--follow", action="store_true", default=None, help="list mode: follow the listed pages' links too"
    )
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
    parser.add_argument(
        "--overwrite-foreign", action="store_true", default=None, help="replace sitemap files in DIR that are not ours"
    )
    parser.add_argument("--removals", metavar="PATH", help="removals report (default: DIR.removals.jsonl beside DIR)")
    add_change_options(parser)
    parser.add_argument("--indexnow-endpoint", metavar="URL", help="IndexNow endpoint; with --indexnow-key, notify")
    parser.add_argument("--indexnow-key", metavar="KEY", help="IndexNow key (the site must serve KEY.txt)")
    parser.add_argument("--indexnow-key-location", metavar="URL", help="where the site serves the key file")
    parser.add_argument(
        "--config", metavar="FILE", help="TOML file with these options ($SITEMAP_CRAWLER_CONFIG; command line wins)"
    )
    parser.add_argument(
        "--profile", choices=tuple(PROFILES), help="settings to start from: live (crawl), audit, container"
    )
    parser.add_argument("--log-format", choices=("text", "json"), help="logs on stderr: text (default) or json lines")
    parser.add_argument(
        "--distributed", metavar="REDIS_URL", help="share the crawl through Redis: workers join with `worker`"
    )
    parser.add_argument("--workers", type=int, metavar="N", help="crawl with N local processes through Redis")
    add_host_options(parser)
    add_render_options(parser)
    add_redis_safety(parser)
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="set any Scrapy/SITEMAP_ setting"
    )
    parser.add_argument("--verbose", "-v", action="count", default=0, help="log more (-v info, -vv debug)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress line")
