"""All ``SITEMAP_*`` settings, read once into a typed, validated object.

It is read once per crawl (the spider's :class:`crawler.run.context.CrawlContext`
holds it, every other component finds it there), and components never read
``crawler.settings`` for these keys themselves. A bad value raises
``ValueError`` naming the setting, which the CLI turns into a usage error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from crawler.failures import ConfigError
from crawler.page.digest import DEFAULT_IGNORE, Ignore, compile_ignore
from crawler.page.languages import news_language
from crawler.scope import UrlPatterns
from crawler.sitemaps.shards import SetLayout
from crawler.sitemaps.stylesheet import stylesheet_name
from crawler.state.placement import SHARD_STRATEGIES, ShardStrategy
from crawler.urls import QueryParamFilter, normalize_url, site_root
from settings.checks import beside, check_paths
from settings.distributed import Distributed, read_distributed
from settings.hosts import Hosts, read_hosts
from settings.render import Render, read_render
from settings.s3 import Publish, read_publish
from settings.sharding import read_shard_strategy
from settings.staging import Audit, read_audit
from settings.values import check_numbers, no_credentials, number, strings, whole_number

__all__ = ["SitemapConfig", "beside", "default_report_path"]

LOG_FORMATS = ("text", "json")


def default_report_path(output_dir: Path) -> Path:
    return beside(output_dir, "crawl-report.jsonl")


@dataclass(frozen=True, slots=True)
class SitemapConfig:
    start_url: str
    output_dir: Path
    base_url: str
    report_path: Path
    basename: str
    gzip: bool
    gzip_level: int
    stylesheet: bool  # an XSL beside the set, for people opening it in a browser
    max_urls_per_file: int
    max_bytes_per_file: int
    max_pages: int
    max_depth: int
    max_url_length: int
    max_query_variants: int
    max_redirects: int
    max_not_requested: int
    max_crawl_delay: float
    strip_params: QueryParamFilter
    patterns: UrlPatterns
    allowed_content_types: frozenset[str]
    robots_token: str
    follow_nofollow: bool
    keep_duplicates: bool  # list every page of the same content (else only the first met)
    progress: bool
    log_format: str  # "text" or "json"
    images: bool
    videos: bool
    hreflang: bool
    max_images_per_url: int
    image_max_pages: int | None  # None: site-wide images by the share of pages (crawler.sitemaps.site)
    news_name: str
    news_language: str | None
    news_patterns: tuple[re.Pattern[str], ...]
    state_path: Path | None
    resume: bool
    fingerprint_ignore: Ignore
    shard_strategy: ShardStrategy
    hosts: Hosts  # the hosts of the crawl (--subdomains, --host) and --resolve
    compact: bool
    removals_path: Path
    changes_path: Path
    overwrite_foreign: bool
    max_shrink: float  # percent of the listed set a run may lose and still publish (0: any)
    accept_shrink: bool
    check_published: bool  # after publishing, check the public copy (crawler/cli/published_check.py)
    check_wait: float
    indexnow_endpoint: str | None
    indexnow_key: str | None
    indexnow_key_location: str | None
    indexnow_batch: int
    indexnow_timeout: float
    delta: bool
    delta_rotate: int
    update_add: tuple[str, ...]
    update_remove: tuple[str, ...]
    urls_file: str | None  # list mode (--urls FILE, "-": stdin): only the URLs in it are judged
    list_follow: bool  # list mode: their links are followed too (--follow)
    audit: Audit
    distributed: Distributed | None
    render: Render
    publish: Publish | None  # --publish s3://BUCKET/PREFIX (settings/s3.py)

    @property
    def updating(self) -> bool:
        """An event-driven update: only some URLs are fetched or dropped."""
        return bool(self.update_add or self.update_remove)

    @property
    def follows_links(self) -> bool:
        """Whether pages lead to more pages: not in an update, nor in list mode without --follow."""
        return not self.updating and (self.urls_file is None or self.list_follow)

    def listed_scope(self) -> Callable[[str], bool]:
        """Whether a URL is on a host whose set this crawl writes: a crawled host, or with a
        production map (an audit) a production host."""
        if self.audit.hosts is not None:
            return self.audit.hosts.on_production
        return self.hosts.scope(self.start_url).contains

    @property
    def layout(self) -> SetLayout:
        """File names and limits of the sitemap set."""
        gzip_level = self.gzip_level if self.gzip else None
        stylesheet = stylesheet_name(self.basename) if self.stylesheet else None
        return SetLayout(self.basename, self.max_urls_per_file, self.max_bytes_per_file, gzip_level, stylesheet)

    def news_candidate(self, url: str) -> bool:
        """Whether *url* may be a news article (news on, URL patterns match)."""
        if not self.news_name:
            return False
        return not self.news_patterns or any(p.search(url) for p in self.news_patterns)

    @classmethod
    def from_settings(cls, scrapy_settings: BaseSettings) -> SitemapConfig:
        settings = _with_defaults(scrapy_settings)
        strip = QueryParamFilter(strings(settings, "SITEMAP_STRIP_QUERY_PARAMS"))
        raw_start = settings.get("SITEMAP_START_URL")
        if not raw_start:
            raise ConfigError("SITEMAP_START_URL is not set (give the URL to crawl, e.g. -a url=https://example.com/)")
        start_url = _absolute_url("SITEMAP_START_URL", str(raw_start), strip)
        output_dir = Path(settings.get("SITEMAP_OUTPUT_DIR") or "sitemaps")
        audit = read_audit(settings, start_url)
        public_root = audit.hosts.production if audit.hosts else site_root(start_url)
        base_url = settings.get("SITEMAP_BASE_URL") or public_root
        base_url = _absolute_url("SITEMAP_BASE_URL", str(base_url), QueryParamFilter(()))
        if not base_url.endswith("/"):
            base_url += "/"
        if site_root(base_url) != public_root:
            raise ConfigError(
                f"SITEMAP_BASE_URL {base_url} must be on the {'production' if audit.hosts else 'crawled'} site "
                f"{public_root}: "
                "a sitemap may only list URLs of its own scheme and host"
            )
        report = settings.get("SITEMAP_REPORT_PATH")
        basename = str(settings.get("SITEMAP_BASENAME") or "sitemap")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", basename):
            raise ConfigError(f"SITEMAP_BASENAME {basename!r} must be a plain file name stem")
        patterns = UrlPatterns(_patterns(settings, "SITEMAP_INCLUDE"), _patterns(settings, "SITEMAP_EXCLUDE"))
        config = cls(
            start_url=start_url,
            output_dir=output_dir,
            base_url=base_url,
            report_path=Path(report) if report else default_report_path(output_dir),
            basename=basename,
            gzip=settings.getbool("SITEMAP_GZIP"),
            stylesheet=settings.getbool("SITEMAP_STYLESHEET"),
            gzip_level=whole_number(settings, "SITEMAP_GZIP_LEVEL"),
            max_urls_per_file=whole_number(settings, "SITEMAP_MAX_URLS_PER_FILE"),
            max_bytes_per_file=whole_number(settings, "SITEMAP_MAX_BYTES_PER_FILE"),
            max_pages=_max_pages(scrapy_settings, settings),
            max_depth=whole_number(settings, "SITEMAP_MAX_DEPTH"),
            max_url_length=whole_number(settings, "SITEMAP_MAX_URL_LENGTH"),
            max_query_variants=whole_number(settings, "SITEMAP_MAX_QUERY_VARIANTS"),
            max_redirects=whole_number(settings, "SITEMAP_MAX_REDIRECTS"),
            max_not_requested=whole_number(settings, "SITEMAP_MAX_NOT_REQUESTED"),
            max_crawl_delay=number(settings, "SITEMAP_MAX_CRAWL_DELAY"),
            strip_params=strip,
            patterns=patterns,
            allowed_content_types=frozenset(t.lower() for t in strings(settings, "SITEMAP_ALLOWED_CONTENT_TYPES")),
            robots_token=str(settings.get("SITEMAP_ROBOTS_TOKEN") or "googlebot").lower(),
            follow_nofollow=settings.getbool("SITEMAP_FOLLOW_NOFOLLOW"),
            keep_duplicates=settings.getbool("SITEMAP_KEEP_DUPLICATES"),
            progress=settings.getbool("SITEMAP_PROGRESS"),
            log_format=_choice(settings, "SITEMAP_LOG_FORMAT", LOG_FORMATS),
            images=settings.getbool("SITEMAP_IMAGES"),
            videos=settings.getbool("SITEMAP_VIDEOS"),
            hreflang=settings.getbool("SITEMAP_HREFLANG"),
            max_images_per_url=whole_number(settings, "SITEMAP_MAX_IMAGES_PER_URL"),
            image_max_pages=None
            if settings.get("SITEMAP_IMAGE_MAX_PAGES") in (None, "")
            else whole_number(settings, "SITEMAP_IMAGE_MAX_PAGES"),
            news_name=str(settings.get("SITEMAP_NEWS_NAME") or "").strip(),
            news_language=_news_language(settings.get("SITEMAP_NEWS_LANGUAGE")),
            news_patterns=_patterns(settings, "SITEMAP_NEWS_PATTERNS"),
            state_path=_state_path(settings, output_dir),
            resume=settings.getbool("SITEMAP_RESUME"),
            fingerprint_ignore=compile_ignore([*DEFAULT_IGNORE, *strings(settings, "SITEMAP_FINGERPRINT_IGNORE")]),
            shard_strategy=read_shard_strategy(settings, _choice(settings, "SITEMAP_SHARD_STRATEGY", SHARD_STRATEGIES)),
            compact=settings.getbool("SITEMAP_COMPACT"),
            removals_path=Path(settings.get("SITEMAP_REMOVALS_PATH") or beside(output_dir, "removals.jsonl")),
            changes_path=Path(settings.get("SITEMAP_CHANGES_PATH") or beside(output_dir, "changes.jsonl")),
            overwrite_foreign=settings.getbool("SITEMAP_OVERWRITE_FOREIGN"),
            max_shrink=number(settings, "SITEMAP_MAX_SHRINK"),
            accept_shrink=settings.getbool("SITEMAP_ACCEPT_SHRINK"),
            check_published=settings.getbool("SITEMAP_CHECK_PUBLISHED"),
            check_wait=number(settings, "SITEMAP_CHECK_WAIT"),
            **_indexnow(settings, start_url),
            indexnow_timeout=number(settings, "SITEMAP_INDEXNOW_TIMEOUT"),
            delta=settings.getbool("SITEMAP_DELTA"),
            delta_rotate=whole_number(settings, "SITEMAP_DELTA_ROTATE"),
            update_add=tuple(_absolute_url("--add", u, strip) for u in strings(settings, "SITEMAP_UPDATE_ADD")),
            update_remove=tuple(
                _absolute_url("--remove", u, strip) for u in strings(settings, "SITEMAP_UPDATE_REMOVE")
            ),
            urls_file=str(settings.get("SITEMAP_URLS_FILE") or "") or None,
            list_follow=settings.getbool("SITEMAP_LIST_FOLLOW"),
            hosts=read_hosts(settings, start_url, audit.hosts.stagings if audit.hosts else ()),
            audit=audit,
            distributed=read_distributed(settings, start_url, str(output_dir)),
            render=read_render(settings, start_url),
            publish=read_publish(settings),
        )
        check_numbers(scrapy_settings)  # Scrapy's own numbers, and those only a worker reads
        check_paths(config)
        _check_index_host(config)
        return config


def _check_index_host(config: SitemapConfig) -> None:
    """--index-host names a host of a crawl of several hosts."""
    hosts = config.hosts
    if hosts.index_host:
        if not hosts.several:
            raise ConfigError(
                "--index-host lists the sitemaps of several hosts: give --subdomains or --host too "
                "(with --production-url, map a second host as STAGING=URL)"
            )
        start = urlsplit(config.start_url)
        port = f":{start.port}" if start.port else ""  # the start URL is normalised: no default port
        mapped = config.audit.hosts  # with a production map, the index is on a production host
        if mapped and hosts.index_host not in {urlsplit(root).hostname for root in mapped.productions}:
            raise ConfigError(f"--index-host {hosts.index_host} is not a production host of --production-url")
        if not mapped and not hosts.scope(config.start_url).contains(f"{start.scheme}://{hosts.index_host}{port}/"):
            raise ConfigError(f"--index-host {hosts.index_host} is not a host of this crawl (--subdomains, --host)")


def _with_defaults(settings: BaseSettings) -> BaseSettings:
    """SITEMAP_* values of *settings* over the defaults of this package, so the
    spider also runs under another project's settings module."""
    import settings as defaults  # noqa: PLC0415 - the package this module belongs to

    merged = BaseSettings({k: v for k, v in vars(defaults).items() if k.startswith("SITEMAP_")}, priority="default")
    merged.update({k: settings[k] for k in settings if str(k).startswith("SITEMAP_")}, priority="project")
    return merged


def _absolute_url(key: str, value: str, strip: QueryParamFilter) -> str:
    no_credentials(key, value)
    if "://" not in value:
        value = "https://" + value if not value.startswith("//") else "https:" + value
    try:
        url = normalize_url(value, params=strip)
    except ValueError:
        raise ConfigError(f"{key}: {value!r} is not an absolute http(s) URL") from None
    if not urlsplit(url).hostname:
        raise ConfigError(f"{key}: {value!r} has no host")
    return url


def _patterns(settings: BaseSettings, key: str) -> tuple[re.Pattern[str], ...]:
    try:
        return tuple(re.compile(p) for p in strings(settings, key))
    except re.error as error:
        raise ConfigError(f"{key}: bad regular expression: {error}") from None


def _indexnow(settings: BaseSettings, start_url: str) -> dict[str, Any]:
    endpoint = settings.get("SITEMAP_INDEXNOW_ENDPOINT")
    key = settings.get("SITEMAP_INDEXNOW_KEY")
    batch = whole_number(settings, "SITEMAP_INDEXNOW_BATCH")
    if not endpoint and not key:
        return {"indexnow_endpoint": None, "indexnow_key": None, "indexnow_key_location": None, "indexnow_batch": batch}
    if not endpoint or not key:
        raise ConfigError("IndexNow needs both SITEMAP_INDEXNOW_ENDPOINT and SITEMAP_INDEXNOW_KEY")
    if not re.fullmatch(r"[A-Za-z0-9-]{8,128}", str(key)):
        raise ConfigError("SITEMAP_INDEXNOW_KEY must be 8 to 128 letters, digits or '-' (indexnow.org)")
    endpoint = _absolute_url("SITEMAP_INDEXNOW_ENDPOINT", str(endpoint), QueryParamFilter(()))
    location = settings.get("SITEMAP_INDEXNOW_KEY_LOCATION") or f"{site_root(start_url)}{key}.txt"
    location = _absolute_url("SITEMAP_INDEXNOW_KEY_LOCATION", str(location), QueryParamFilter(()))
    if site_root(location) != site_root(start_url):
        raise ConfigError("SITEMAP_INDEXNOW_KEY_LOCATION must be on the crawled site")
    return {
        "indexnow_endpoint": endpoint,
        "indexnow_key": str(key),
        "indexnow_key_location": location,
        "indexnow_batch": batch,
    }


def _state_path(settings: BaseSettings, output_dir: Path) -> Path | None:
    if not settings.getbool("SITEMAP_STATE"):
        return None
    return Path(settings.get("SITEMAP_STATE_PATH") or beside(output_dir, "state.sqlite"))


def _choice(settings: BaseSettings, key: str, choices: tuple[str, ...]) -> str:
    value = str(settings.get(key) or choices[0]).strip().lower()
    if value not in choices:
        raise ConfigError(f"{key} must be one of {', '.join(choices)}, not {value!r}")
    return value


def _news_language(value: object) -> str | None:
    if not value:
        return None
    code = news_language(str(value))
    if code is None:
        raise ConfigError(f"SITEMAP_NEWS_LANGUAGE: {value!r} is not an ISO 639 language code")
    return code


def _max_pages(given: BaseSettings, settings: BaseSettings) -> int:
    """The page budget: in list mode (``--urls``) the list is the budget, unless the user gives
    one (any layer above the project's defaults); with ``--follow`` the crawl goes past the list,
    so the crawl's default budget holds."""
    if (
        settings.get("SITEMAP_URLS_FILE")
        and not settings.getbool("SITEMAP_LIST_FOLLOW")
        and (given.getpriority("SITEMAP_MAX_PAGES") or 0) <= SETTINGS_PRIORITIES["project"]
    ):
        return 0
    return whole_number(settings, "SITEMAP_MAX_PAGES")
