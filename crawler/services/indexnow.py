"""IndexNow: tell search engines which URLs were added, changed or removed.

Protocol (indexnow.org): POST a JSON body ``{host, key, keyLocation,
urlList}`` to an endpoint; the key must be served by the site as a text
file, which is checked first, so a wrong setup fails here with a clear
message rather than as a silent 403 later. At most 10,000 URLs per request;
5xx, 429 and network errors are retried with backoff; every request has a
total deadline. Blocking calls: the crawl runs :func:`submit` in a worker
thread (``crawler/extensions/notify.py``), never on the reactor.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from crawler.addresses import Pinned
from crawler.services.http import fetch

__all__ = ["MAX_BATCH", "IndexNowReport", "check_key_file", "submit"]

MAX_BATCH = 10_000
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(slots=True)
class IndexNowReport:
    endpoint: str
    submitted: int = 0
    batches: list[dict[str, object]] = field(default_factory=list)
    error: str | None = None


def _http(
    url: str, user_agent: str, timeout: float, body: bytes | None = None, pinned: tuple[Pinned, ...] = ()
) -> tuple[int, bytes]:
    """One request with a total deadline: a slow server never keeps the run alive."""
    headers = {"Content-Type": "application/json; charset=utf-8"} if body is not None else {}
    fetched = fetch(
        url, user_agent=user_agent, body=body, headers=headers, deadline=timeout, max_bytes=100_000, pinned=pinned
    )
    return fetched.status, fetched.body


def check_key_file(
    key: str, key_location: str, user_agent: str, timeout: float = 15.0, pinned: tuple[Pinned, ...] = ()
) -> str | None:
    """Why the key file does not prove ownership, or ``None`` when it does."""
    try:
        status, body = _http(key_location, user_agent, timeout, pinned=pinned)
    except (OSError, ValueError) as error:
        return f"key file {key_location} could not be fetched: {error}"
    if status != 200:
        return f"key file {key_location} answered HTTP {status}"
    if body.decode("utf-8", "replace").strip() != key:
        return f"key file {key_location} does not contain the key"
    return None


def submit(
    urls: list[str],
    *,
    endpoint: str,
    key: str,
    key_location: str,
    user_agent: str,
    batch_size: int = MAX_BATCH,
    attempts: int = 3,
    backoff: float = 1.0,
    timeout: float = 30.0,
    pinned: tuple[Pinned, ...] = (),
) -> IndexNowReport:
    """Submit *urls* (all on one host) in batches; never more than 10,000 each. *pinned*: the
    ``--resolve`` rules, for the key file and the endpoint alike."""
    report = IndexNowReport(endpoint)
    if not urls:
        return report
    problem = check_key_file(key, key_location, user_agent, timeout, pinned)
    if problem:
        report.error = problem
        return report
    host = urlsplit(urls[0]).hostname or ""
    size = max(1, min(batch_size, MAX_BATCH))
    for start in range(0, len(urls), size):
        batch = urls[start : start + size]
        body = json.dumps({"host": host, "key": key, "keyLocation": key_location, "urlList": batch}).encode()
        status, detail = 0, ""
        for attempt in range(1, attempts + 1):
            try:
                status, _ = _http(endpoint, user_agent, timeout, body, pinned)
                detail = ""
            except (OSError, ValueError) as error:
                status, detail = 0, str(error)
            if status not in _RETRY_STATUSES and status != 0:
                break
            if attempt < attempts:
                time.sleep(backoff * 2 ** (attempt - 1))  # in a worker thread: the reactor runs on
        report.batches.append({"urls": len(batch), "status": status, "attempts": attempt, "error": detail or None})
        if status in (200, 202):
            report.submitted += len(batch)
        else:
            report.error = f"batch of {len(batch)} URLs failed: HTTP {status or detail}"
            break
    return report
