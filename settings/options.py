"""The command-line options that stand for settings, and the settings profiles (no Scrapy
import: the parser needs them, and ``--help`` should start fast)."""

from __future__ import annotations

from typing import Any

__all__ = ["EXTENDING", "OPTION_SETTINGS", "PROFILES", "RENDER_MODES"]

#: --render: whether pages run their JavaScript in Chromium (SPEC S9).
RENDER_MODES = ("never", "auto", "always")

# Options that map one-to-one onto a setting: option dest -> setting name.
OPTION_SETTINGS = {
    "out": "SITEMAP_OUTPUT_DIR",
    "base_url": "SITEMAP_BASE_URL",
    "report": "SITEMAP_REPORT_PATH",
    "basename": "SITEMAP_BASENAME",
    "gzip": "SITEMAP_GZIP",
    "stylesheet": "SITEMAP_STYLESHEET",
    "max_pages": "SITEMAP_MAX_PAGES",
    "max_depth": "SITEMAP_MAX_DEPTH",
    "max_url_length": "SITEMAP_MAX_URL_LENGTH",
    "max_query_variants": "SITEMAP_MAX_QUERY_VARIANTS",
    "max_redirects": "SITEMAP_MAX_REDIRECTS",
    "max_not_requested": "SITEMAP_MAX_NOT_REQUESTED",
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
    "keep_duplicates": "SITEMAP_KEEP_DUPLICATES",
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
    "urls": "SITEMAP_URLS_FILE",
    "follow": "SITEMAP_LIST_FOLLOW",
    "fingerprint_ignore": "SITEMAP_FINGERPRINT_IGNORE",
    "shard_strategy": "SITEMAP_SHARD_STRATEGY",
    "shard_section": "SITEMAP_SHARD_SECTIONS",
    "shard_id_pattern": "SITEMAP_SHARD_ID_PATTERN",
    "shard_id_range": "SITEMAP_SHARD_ID_RANGE",
    "compact": "SITEMAP_COMPACT",
    "delta": "SITEMAP_DELTA",
    "delta_rotate": "SITEMAP_DELTA_ROTATE",
    "removals": "SITEMAP_REMOVALS_PATH",
    "changes": "SITEMAP_CHANGES_PATH",
    "max_shrink": "SITEMAP_MAX_SHRINK",
    "accept_shrink": "SITEMAP_ACCEPT_SHRINK",
    "check_published": "SITEMAP_CHECK_PUBLISHED",
    "check_wait": "SITEMAP_CHECK_WAIT",
    "overwrite_foreign": "SITEMAP_OVERWRITE_FOREIGN",
    "indexnow_endpoint": "SITEMAP_INDEXNOW_ENDPOINT",
    "indexnow_key": "SITEMAP_INDEXNOW_KEY",
    "indexnow_key_location": "SITEMAP_INDEXNOW_KEY_LOCATION",
    "publish": "SITEMAP_PUBLISH",
    "s3_endpoint_url": "SITEMAP_S3_ENDPOINT_URL",
    "production_url": "SITEMAP_PRODUCTION_URL",
    "user": "SITEMAP_STAGING_USER",
    "password": "SITEMAP_STAGING_PASSWORD",
    "password_env": "SITEMAP_STAGING_PASSWORD_ENV",
    "header": "SITEMAP_STAGING_HEADERS",
    "cookie": "SITEMAP_STAGING_COOKIES",
    "header_env": "SITEMAP_STAGING_HEADERS_ENV",
    "cookie_file": "SITEMAP_STAGING_COOKIE_FILE",
    "fail_on": "SITEMAP_AUDIT_FAIL_ON",
    "deep_threshold": "SITEMAP_AUDIT_DEEP_THRESHOLD",
    "as_if_no_blocker": "SITEMAP_AUDIT_AS_IF_NO_BLOCKER",
    "ignore_robots": "SITEMAP_ROBOTS_IGNORE_RULES",
    "sitemap": "SITEMAP_AUDIT_SITEMAPS",
    "compare": "SITEMAP_AUDIT_COMPARE",
    "url": "SITEMAP_START_URL",
    "log_format": "SITEMAP_LOG_FORMAT",
    "distributed": "SITEMAP_DISTRIBUTED",
    "workers": "SITEMAP_WORKERS",
    "shared_secret_file": "SITEMAP_SHARED_SECRET_FILE",
    "insecure_redis": "SITEMAP_INSECURE_REDIS",
    "redis_ca_file": "SITEMAP_REDIS_CA_FILE",
    "render": "SITEMAP_RENDER",
    "render_pages": "SITEMAP_RENDER_PAGES",
    "render_wait_budget": "SITEMAP_RENDER_WAIT_BUDGET",
    "render_allow_origin": "SITEMAP_RENDER_ALLOW_ORIGINS",
    "render_max_requests": "SITEMAP_RENDER_MAX_REQUESTS",
    "render_max_memory": "SITEMAP_RENDER_MAX_MEMORY",
    "chromium": "SITEMAP_CHROMIUM",
    "subdomains": "SITEMAP_SUBDOMAINS",
    "host": "SITEMAP_HOSTS",
    "max_hosts": "SITEMAP_MAX_HOSTS",
    "max_pages_per_host": "SITEMAP_MAX_PAGES_PER_HOST",
    "index_host": "SITEMAP_INDEX_HOST",
    "resolve": "SITEMAP_RESOLVE",
}
#: Settings a command starts from, over the defaults and under everything the user gives.
PROFILES: dict[str, dict[str, Any]] = {
    # A site crawled on a schedule (the defaults): a state store for honest lastmod, and a set
    # that loses more than half its URLs overnight (a bad deploy) is not published.
    "live": {"SITEMAP_STATE": True, "SITEMAP_MAX_SHRINK": 50.0},
    # A container: everything under the /data volume, JSON logs, no terminal progress line; run
    # on a schedule too, so the same guard against a sudden shrink.
    "container": {
        "SITEMAP_MAX_SHRINK": 50.0,
        "SITEMAP_OUTPUT_DIR": "/data/sitemaps",
        "SITEMAP_LOG_FORMAT": "json",
    },
    # A one-off audit of a staging site: no state store (nothing to compare with next
    # time), every URL never requested still written to the report. Paced like a crawl (the
    # adaptive delay, Crawl-delay, backoff, Retry-After): a fixed floor made it 5x slower on
    # a fast site, and a staging server is no more fragile than the live one.
    "audit": {"SITEMAP_STATE": False, "SITEMAP_MAX_NOT_REQUESTED": 1_000_000},
}
# List options that add to the default list instead of replacing it.
EXTENDING = {"allow_type", "strip_param"}
