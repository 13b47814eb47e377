"""The one way every process of a shared crawl connects to its Redis (asyncio
for the crawl, sync for the coordinator's and the worker's start and end).

``rediss://`` always verifies the server's certificate and its host name,
against the system's trust store plus the CA file the user names (a private
CA of a managed Redis); a URL cannot turn that off. ``redis://USER:PASSWORD@``
is an ACL user, ``redis://:PASSWORD@`` the ``requirepass`` one. What Redis
answers when it refuses the crawl is said in one line a user can act on.

Every call has a deadline (:data:`CALL_SECONDS`): a Redis that stops answering (stopped,
swapping, a network that drops packets) fails the call, and the crawl stops saying so,
instead of every worker waiting on it. A dropped connection is tried again four times over
about 7 s (a restart or a failover of a managed Redis takes seconds); silence is not.
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from redis import Redis as SyncRedis
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import AuthenticationError, NoPermissionError, OutOfMemoryError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry as SyncRetry

from crawler.failures import ConfigError

__all__ = ["CALL_SECONDS", "connect", "connect_sync", "eviction_policy", "redis_failure"]

#: The most one Redis call waits for its answer (and a connection for its set-up): far above
#: any real call (milliseconds), and above the few seconds a process of a loaded machine or
#: a container may go unscheduled (5 s was seen to cut a healthy worker off in CI).
CALL_SECONDS = 10.0
#: How often a call is tried again over a dropped connection (never over a timeout), waiting
#: 1 s, then 2 s each time: about 7 s in all.
RETRIES = 4


def _backoff() -> ExponentialBackoff:
    return ExponentialBackoff(cap=2.0, base=0.5)


def _options(url: str, ca_file: str | None) -> dict[str, Any]:
    """The client options for *url*: certificate checks on for ``rediss://``, whatever the URL's query says."""
    if urlsplit(url).scheme != "rediss":
        return {}
    return {"ssl_cert_reqs": "required", "ssl_check_hostname": True, "ssl_ca_certs": ca_file}


def _checked_url(url: str) -> str:
    """*url* without query options that would weaken TLS (``ssl_cert_reqs=none`` and the like): refused."""
    weakening = sorted({name for name, _ in parse_qsl(urlsplit(url).query) if name.lower().startswith("ssl")})
    if weakening:
        raise ConfigError(f"the Redis URL sets {', '.join(weakening)}: TLS options come from --redis-ca-file only")
    return url


def connect(url: str, ca_file: str | None = None) -> Redis:
    """An asyncio client of the crawl's Redis: a few retries over a blip, then the error (never hangs)."""
    return Redis.from_url(
        _checked_url(url), socket_timeout=CALL_SECONDS, socket_connect_timeout=CALL_SECONDS,
        retry=Retry(_backoff(), RETRIES, supported_errors=(RedisConnectionError,)),
        **_options(url, ca_file),
    )  # fmt: skip


def connect_sync(url: str, ca_file: str | None = None) -> SyncRedis:
    """A synchronous client of the crawl's Redis, for the few calls before and after the crawl."""
    return SyncRedis.from_url(
        _checked_url(url), socket_timeout=CALL_SECONDS, socket_connect_timeout=CALL_SECONDS,
        retry=SyncRetry(_backoff(), RETRIES, supported_errors=(RedisConnectionError,)),
        **_options(url, ca_file),
    )  # fmt: skip


def redis_failure(where: str, error: BaseException) -> str:
    """What went wrong with the Redis at *where* (a masked URL), in one line that says what to do."""
    text = " ".join(str(error).split())
    if isinstance(error, AuthenticationError) or "WRONGPASS" in text or "NOAUTH" in text:
        return f"the Redis at {where} refused the password or user ({text}): check the URL's USER:PASSWORD"
    # Refused inside one of the crawl's Lua scripts, Redis says so without the NOPERM code.
    if isinstance(error, NoPermissionError) or text.startswith("NOPERM") or "user executing the script can't" in text:
        return (
            f"the Redis user of {where} may not do what the crawl needs (NOPERM: {text.removeprefix('NOPERM ')}); "
            "grant it the crawl's commands on ~sitemap-crawler:*"
        )
    if isinstance(error, OutOfMemoryError) or text.startswith("OOM") or "used memory > 'maxmemory'" in text:
        return (
            f"the Redis at {where} is out of memory (maxmemory reached, and it evicts nothing): the crawl cannot go "
            "on; give it more maxmemory"
        )
    if isinstance(error, RedisTimeoutError | TimeoutError) or "Timeout reading from" in text:
        return (
            f"the Redis at {where} does not answer (no reply within {CALL_SECONDS:g} s): it is stopped, "
            "overloaded or unreachable"
        )
    if _untrusted(error):
        return (
            f"the TLS certificate of the Redis at {where} is not trusted ({_tls_reason(error)}): "
            "give its CA with --redis-ca-file FILE"
        )
    return f"Lost the Redis at {where}: {text}"


def _untrusted(error: BaseException) -> bool:
    seen: BaseException | None = error
    for _ in range(5):  # bounded: the chain of causes
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _tls_reason(error: BaseException) -> str:
    text = str(error)
    if "certificate verify failed:" in text:
        return text.split("certificate verify failed:", 1)[1].split("(_ssl", 1)[0].strip(" .")
    return "certificate verify failed"


def eviction_policy(redis: SyncRedis) -> str | None:
    """The Redis's ``maxmemory-policy``, or ``None`` where ``CONFIG`` is not allowed (managed Redis)."""
    try:
        answer = redis.config_get("maxmemory-policy")
    except RedisError:  # NOPERM, or CONFIG renamed away: say nothing
        return None
    policy = answer.get("maxmemory-policy") if isinstance(answer, dict) else None
    return policy.decode() if isinstance(policy, bytes) else policy
