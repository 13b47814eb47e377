"""Settings of publishing to S3-compatible object storage (``--publish s3://BUCKET/PREFIX``).

Read and checked before the crawl: a bad bucket URL or endpoint is a usage error before
anything is fetched. Credentials are never settings: boto3's default chain finds them
(environment, profile, instance role).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from crawler.failures import ConfigError
from crawler.sitemaps.remote import S3Location, parse_s3_url

__all__ = ["Publish", "read_publish"]


@dataclass(frozen=True, slots=True)
class Publish:
    location: S3Location
    endpoint_url: str | None  # None: AWS's own endpoint for the region


def read_publish(settings: BaseSettings) -> Publish | None:
    url = settings.get("SITEMAP_PUBLISH")
    endpoint = settings.get("SITEMAP_S3_ENDPOINT_URL")
    if not url:
        if endpoint:
            raise ConfigError("SITEMAP_S3_ENDPOINT_URL is given without SITEMAP_PUBLISH (--publish s3://BUCKET/PREFIX)")
        return None
    try:
        location = parse_s3_url(str(url))
    except ValueError as error:
        raise ConfigError(f"SITEMAP_PUBLISH: {error}") from None
    return Publish(location, _endpoint(str(endpoint)) if endpoint else None)


def _endpoint(value: str) -> str:
    parts = urlsplit(value.strip())
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if "@" in parts.netloc:
        raise ConfigError("SITEMAP_S3_ENDPOINT_URL: the URL may not hold credentials (boto3 finds them itself)")
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok or parts.query or parts.fragment:
        raise ConfigError(f"SITEMAP_S3_ENDPOINT_URL: {value!r} is not an http(s)://HOST[:PORT] URL")
    if re.search(r"\s", value.strip()):
        raise ConfigError(f"SITEMAP_S3_ENDPOINT_URL: {value!r} is not an http(s)://HOST[:PORT] URL")
    return value.strip().rstrip("/")
