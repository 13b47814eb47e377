"""The crawl's configuration, published in Redis by the coordinator, so a
worker needs nothing but the Redis URL (a synchronous client: used once,
before the crawl starts)."""

from __future__ import annotations

import json
from typing import Any

from redis import Redis

__all__ = ["CURRENT", "fetch_config", "publish_config"]

#: The crawl a worker joins when it is given only the Redis URL.
CURRENT = "sitemap-crawler:current"


def publish_config(redis: Redis, crawl: str, values: dict[str, Any]) -> None:
    """*values* (JSON-ready settings) as the configuration of *crawl*, which becomes the current
    one. Whatever an earlier run of the same crawl left (an interrupted run's frontier and seen
    set) is removed first: each run crawls the whole site afresh."""
    leftovers = list(redis.scan_iter(match=f"sitemap-crawler:{crawl}:*", count=1000))
    for start in range(0, len(leftovers), 1000):
        redis.unlink(*leftovers[start : start + 1000])
    with redis.pipeline(transaction=True) as pipe:
        pipe.set(f"sitemap-crawler:{crawl}:config", json.dumps(values, default=str))
        pipe.set(CURRENT, crawl)
        pipe.execute()


def fetch_config(redis: Redis) -> tuple[str, dict[str, Any]] | None:
    """(crawl id, settings) of the current crawl, or ``None`` when there is none."""
    crawl = redis.get(CURRENT)
    if crawl is None:
        return None
    name = crawl.decode() if isinstance(crawl, bytes) else str(crawl)
    raw = redis.get(f"sitemap-crawler:{name}:config")
    if raw is None:
        return None
    values = json.loads(raw)
    if not isinstance(values, dict):
        raise ValueError("the crawl's configuration in Redis is not ours")  # noqa: TRY004 - bad data, not a bug
    return name, values
