"""The crawl's configuration, published in Redis by the coordinator and signed,
so a worker needs only the Redis URL and the shared secret (a synchronous
client: used once, before the crawl starts).

Whoever can write to the Redis must not be able to steer a worker: what is
published is a fixed list of typed crawl options (never a Scrapy setting,
an import path or a component), signed with HMAC-SHA256 under the secret
every worker is given. A worker refuses a configuration that is unsigned,
signed with another secret, altered, or holds anything off the list.
"""

from __future__ import annotations

import json
import math
from typing import Any

from redis import Redis

from crawler.distributed.exporter_lock import claim
from crawler.distributed.signing import seal, sealed

__all__ = [
    "CURRENT", "SHARED_OPTIONS", "ConfigRefused", "NothingToResume", "fetch_config", "publish_config",
    "resume_config", "shared_options", "signed",
]  # fmt: skip

#: The crawl a worker joins when it is given only the Redis URL.
CURRENT = "sitemap-crawler:current"
VERSION = 1
MAX_CONFIG = 1024 * 1024

#: What a worker takes from the coordinator: setting -> kind of value. Only what decides
#: what is fetched and what facts are read from it; the worker maps each onto its own settings.
SHARED_OPTIONS: dict[str, str] = {
    "SITEMAP_START_URL": "url",
    "SITEMAP_CRAWL_ID": "str",
    "SITEMAP_RUN": "str",
    "USER_AGENT": "str",
    "SITEMAP_ROBOTS_TOKEN": "str",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "int",
    "DOWNLOAD_DELAY": "float",
    "DOWNLOAD_TIMEOUT": "float",
    "RETRY_TIMES": "int",
    "SITEMAP_MAX_PAGES": "int",
    "SITEMAP_MAX_DEPTH": "int",
    "SITEMAP_MAX_URL_LENGTH": "int",
    "SITEMAP_MAX_QUERY_VARIANTS": "int",
    "SITEMAP_MAX_REDIRECTS": "int",
    "SITEMAP_MAX_NOT_REQUESTED": "int",
    "SITEMAP_MAX_CRAWL_DELAY": "float",
    "SITEMAP_SUBDOMAINS": "bool",
    "SITEMAP_HOSTS": "list",
    "SITEMAP_PRODUCTION_URL": "list",  # links on production names are followed on staging
    "SITEMAP_MAX_HOSTS": "int",
    "SITEMAP_MAX_PAGES_PER_HOST": "int",
    "SITEMAP_INCLUDE": "list",
    "SITEMAP_EXCLUDE": "list",
    "SITEMAP_ALLOWED_CONTENT_TYPES": "list",
    "SITEMAP_STRIP_QUERY_PARAMS": "list",
    "SITEMAP_SEED_SITEMAPS": "list",
    "SITEMAP_FOLLOW_NOFOLLOW": "bool",
    "SITEMAP_IMAGES": "bool",
    "SITEMAP_VIDEOS": "bool",
    "SITEMAP_HREFLANG": "bool",
    "SITEMAP_MAX_IMAGES_PER_URL": "int",
    "SITEMAP_IMAGE_MAX_PAGES": "int",
    "SITEMAP_NEWS_NAME": "str",
    "SITEMAP_NEWS_LANGUAGE": "str",
    "SITEMAP_NEWS_PATTERNS": "list",
    "SITEMAP_FINGERPRINT_IGNORE": "list",
    "SITEMAP_STATE": "bool",
    "SITEMAP_LEASE_SECONDS": "float",
    "SITEMAP_IDLE_GRACE": "float",
    "SITEMAP_RENDER": "str",
    "SITEMAP_RENDER_PAGES": "int",
    "SITEMAP_RENDER_WAIT_BUDGET": "float",
    "SITEMAP_RENDER_ALLOW_ORIGINS": "list",
    "SITEMAP_RENDER_MAX_REQUESTS": "int",
    "SITEMAP_RENDER_MAX_MEMORY": "int",
}
_MAX_TEXT = 8192
_MAX_LIST = 10_000


class ConfigRefused(ValueError):
    """The configuration in Redis is not one this worker may take (one line, for the user)."""


class NothingToResume(ConfigRefused):
    """``--resume``, and the crawl's configuration is not in Redis (never started, or its keys are gone)."""


def _getter(settings: Any, name: str, kind: str) -> Any:
    """A setting's value in its kind (``--set`` and the environment give strings)."""
    if kind == "int":
        return settings.getint(name)
    if kind == "float":
        return settings.getfloat(name)
    if kind == "bool":
        return settings.getbool(name)
    if kind == "list":
        return [str(item) for item in settings.getlist(name)]
    value = settings.get(name)
    return None if value is None else str(value)


def shared_options(settings: Any, given: set[str]) -> dict[str, Any]:
    """The options of *settings* a worker takes: those of :data:`SHARED_OPTIONS` named in *given*
    (the settings the user set, any layer above the defaults), each in its kind."""
    return {name: _getter(settings, name, kind) for name, kind in SHARED_OPTIONS.items() if name in given}


def _checked(name: str, value: object) -> object:
    kind = SHARED_OPTIONS.get(name)
    if kind is None:
        raise ConfigRefused(f"the crawl's configuration in Redis names {name[:64]!r}, which a worker never takes")
    if value is None and kind == "str":
        return value
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value),
        "bool": isinstance(value, bool),
        "str": isinstance(value, str) and len(value) <= _MAX_TEXT,
        "url": isinstance(value, str) and len(value) <= _MAX_TEXT and value.startswith(("http://", "https://")),
        "list": isinstance(value, list)
        and len(value) <= _MAX_LIST
        and all(isinstance(item, str) and len(item) <= _MAX_TEXT for item in value),
    }[kind]
    if not ok:
        raise ConfigRefused(f"the crawl's configuration in Redis has a {name} that is not {kind}")
    return value


def signed(secret: bytes, crawl: str, options: dict[str, Any]) -> bytes:
    """The stored form: the payload and its HMAC-SHA256 under *secret*."""
    payload = json.dumps({"v": VERSION, "crawl": crawl, "options": options}, sort_keys=True, separators=(",", ":"))
    return json.dumps({"payload": payload, "sig": seal(secret, "config", payload.encode())}).encode()


def publish_config(redis: Redis, crawl: str, options: dict[str, Any], secret: bytes) -> None:
    """*options* (from :func:`shared_options`) as the signed configuration of *crawl*, which
    becomes the current one. Whatever an earlier run of the same crawl left (an interrupted
    run's frontier and seen set) is removed first: each run crawls the whole site afresh
    (:func:`resume_config` keeps it instead)."""
    for name, value in options.items():
        _checked(name, value)  # the coordinator never publishes what a worker would refuse
    claim(redis, crawl)  # never under a coordinator of this crawl that is still running
    _remove_keys(redis, crawl)
    claim(redis, crawl)
    with redis.pipeline(transaction=True) as pipe:
        pipe.set(f"sitemap-crawler:{crawl}:config", signed(secret, crawl, options))
        pipe.set(CURRENT, crawl)
        pipe.execute()


def _remove_keys(redis: Redis, crawl: str) -> None:
    leftovers = list(redis.scan_iter(match=f"sitemap-crawler:{crawl}:*", count=1000))
    for start in range(0, len(leftovers), 1000):
        redis.unlink(*leftovers[start : start + 1000])


def retire_config(redis: Redis, crawl: str, everything: bool) -> None:
    """*crawl* is over and published: no worker may join it, nor a ``--resume`` re-attach to it
    (its seen set would hide the whole site from a new run). With *everything* (no worker is
    left), its frontier, seen set and counts go too; else the next run removes them."""
    redis.delete(f"sitemap-crawler:{crawl}:config")
    current = redis.get(CURRENT)
    if current is not None and (current.decode("utf-8", "replace") if isinstance(current, bytes) else current) == crawl:
        redis.delete(CURRENT)
    if everything:
        _remove_keys(redis, crawl)


def resume_config(redis: Redis, crawl: str, options: dict[str, Any], secret: bytes) -> str:
    """Re-attach to *crawl* as Redis holds it (``--resume``): nothing is removed, so its frontier,
    seen set, leases, page counter and the items not yet exported stay. Its configuration must be
    there, signed with *secret*, of *crawl*, and hold *options*: the workers still crawling took
    those, and a coordinator judging their pages by others would list another crawl's set. Returns
    the run it continues (what its workers sealed is bound to it)."""
    raw = redis.get(f"sitemap-crawler:{crawl}:config")
    if raw is None:
        raise NothingToResume(f"no crawl {crawl} there (never started, its keys removed, or Redis restarted empty)")
    data = _verified(raw if isinstance(raw, bytes) else str(raw).encode(), secret)
    if data.get("crawl") != crawl:
        raise ConfigRefused("the crawl's configuration in Redis was signed for another crawl: refused")
    stored: dict[str, Any] = data["options"]
    names = (stored.keys() | options.keys()) - {"SITEMAP_RUN"}
    changed = sorted(name for name in names if stored.get(name) != options.get(name))
    if changed:
        raise ConfigRefused(
            f"it was started with other values of {', '.join(changed)[:500]}: resume with the options it started with"
        )
    claim(redis, crawl)  # the coordinator resumed is dead, not running elsewhere
    redis.set(CURRENT, crawl)  # workers that join by the Redis URL alone join this crawl again
    return str(stored.get("SITEMAP_RUN") or "")


def _verified(raw: bytes, secret: bytes) -> dict[str, Any]:
    if len(raw) > MAX_CONFIG:
        raise ConfigRefused("the crawl's configuration in Redis is too large to be ours")
    try:
        stored = json.loads(raw)
        payload, signature = stored["payload"], stored["sig"]
        body = payload.encode()
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):  # UnicodeError is a ValueError
        raise ConfigRefused("the crawl's configuration in Redis is not signed: refused") from None
    if not sealed(secret, "config", body, signature):
        raise ConfigRefused(
            "the crawl's configuration in Redis is not signed with this worker's shared secret "
            "(altered, or another secret): refused"
        )
    data = json.loads(payload)  # sealed by the coordinator: our own JSON
    if not isinstance(data, dict) or data.get("v") != VERSION or not isinstance(data.get("options"), dict):
        raise ConfigRefused("the crawl's configuration in Redis is of another version")
    return data


def fetch_config(redis: Redis, secret: bytes) -> tuple[str, dict[str, Any]] | None:
    """(crawl id, options) of the current crawl, or ``None`` when there is none; :class:`ConfigRefused`
    when what is there is not signed with *secret* or holds anything a worker never takes."""
    crawl = redis.get(CURRENT)
    if crawl is None:
        return None
    name = crawl.decode("utf-8", "replace") if isinstance(crawl, bytes) else str(crawl)
    raw = redis.get(f"sitemap-crawler:{name}:config")
    if raw is None:
        return None
    data = _verified(raw if isinstance(raw, bytes) else str(raw).encode(), secret)
    if data.get("crawl") != name:
        raise ConfigRefused("the crawl's configuration in Redis was signed for another crawl: refused")
    options = {str(key): _checked(str(key), value) for key, value in data["options"].items()}
    return name, options
