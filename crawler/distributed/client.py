"""The asyncio client of a shared crawl's Redis."""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

__all__ = ["connect"]


def connect(url: str) -> Redis:
    """An asyncio client of the crawl's Redis: a few retries over a blip, then the error (never hangs)."""
    return Redis.from_url(
        url, socket_timeout=30, socket_connect_timeout=10, retry=Retry(ExponentialBackoff(cap=1.0), 3)
    )
