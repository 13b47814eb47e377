"""Before an audit crawls: can the staging site be read, what blocks it, and
what does its own 404 page look like (pure apart from its HTTP requests).

Credentials go to the staging origin only and redirects are not followed
with them: a 3xx is read as an answer.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from crawler.audit.analysis import NotFoundPage
from crawler.audit.blockers import Blocker, start_page_blockers
from crawler.page.digest import Ignore
from crawler.page.headers import is_html
from crawler.page.html import parse_html
from crawler.services.http import Fetched, fetch_response

__all__ = ["Preflight", "PreflightError", "preflight"]

_MAX_PAGE = 8 * 1024 * 1024


class PreflightError(Exception):
    """The staging site cannot be audited as asked (unreachable, login refused)."""


@dataclass(slots=True)
class Preflight:
    status: int
    blockers: list[Blocker] = field(default_factory=list)
    not_found: NotFoundPage | None = None
    has_sitemap_xml: bool = False  # /sitemap.xml answers 200 (used when robots.txt names none)


def _get(url: str, headers: dict[str, str], timeout: float) -> Fetched:
    return fetch_response(url, headers=headers, deadline=timeout, max_bytes=_MAX_PAGE, redirects=False)


def preflight(
    start_url: str,
    root: str,
    *,
    headers: dict[str, str],
    agent: str,
    token: str,
    ignore: Ignore,
    timeout: float,
) -> Preflight:
    try:
        start = _get(start_url, headers, timeout)
    except (OSError, ValueError) as error:
        raise PreflightError(f"the start URL {start_url} is unreachable ({error})") from None
    if start.status in (401, 403, 407):
        given = "the credentials given were refused" if headers else "it needs credentials (--user, --header, --cookie)"
        raise PreflightError(f"the start URL {start_url} answered HTTP {start.status}: {given}")
    result = Preflight(start.status)
    body = start.body if start.status == 200 and is_html(start.headers.get("Content-Type")) else None
    try:
        robots = _get(root + "robots.txt", headers, timeout)
        robots_txt = robots.body if 200 <= robots.status < 300 else None
    except OSError:
        robots_txt = None
    result.blockers = start_page_blockers(
        start_url,
        header_values=start.headers.get_all("X-Robots-Tag") or [],
        body=body,
        robots_txt=robots_txt,
        agent=agent,
        token=token,
    )
    probe = f"{root}sitemap-crawler-probe-{secrets.token_hex(6)}"
    try:
        missing = _get(probe, headers, timeout)
        page = (
            parse_html(missing.body, probe, "utf-8", ignore) if is_html(missing.headers.get("Content-Type")) else None
        )
        result.not_found = NotFoundPage(
            missing.status, page.content_digest if page else None, page.title if page else None
        )
        result.has_sitemap_xml = _get(root + "sitemap.xml", headers, timeout).status == 200
    except OSError:
        pass
    return result
