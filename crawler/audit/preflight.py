"""Before an audit crawls: can the staging site be read, what blocks it, and
what does its own 404 page look like (pure apart from its HTTP requests).

It runs before the crawl, so it uses the crawler's standalone client (the
crawl's User-Agent, one deadline per request over connect, headers and body,
a size cap: robots.txt's is RFC 9309's 500 KiB, read as the crawl reads it).
Credentials go to the staging origin only and redirects are not followed
with them: a 3xx is read as an answer. robots.txt alone is read through its
redirects on the same host (RFC 9309 2.3.1.2; the crawl of an audit follows
the same ones), so a ``Disallow: /`` it is redirected to is a blocker too; a
hop off the staging origin gets no credentials.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from crawler.addresses import Pinned
from crawler.audit.blockers import Blocker, start_page_blockers
from crawler.audit.facts import NotFoundPage
from crawler.page.digest import Ignore
from crawler.page.headers import is_html
from crawler.page.html import parse_html
from crawler.robots_rules import MAX_ROBOTS_BYTES, MAX_ROBOTS_REDIRECTS, redirect_followed
from crawler.services.http import Fetched, fetch
from crawler.urls import resolve_link, site_root

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


def preflight(
    start_url: str,
    root: str,
    *,
    headers: dict[str, str],
    user_agent: str,
    agent: str,
    token: str,
    ignore: Ignore,
    timeout: float,
    pinned: tuple[Pinned, ...] = (),
    label: str = "the start URL",
) -> Preflight:
    """*user_agent* is the User-Agent header sent; *agent* the name robots.txt rules are matched
    against; *label* names *start_url* in an error (another mapped host's root is not the start)."""
    get: Callable[..., Fetched] = partial(
        fetch,
        user_agent=user_agent,
        headers=headers,
        deadline=timeout,
        max_bytes=_MAX_PAGE,
        redirects=False,
        pinned=pinned,
    )
    try:
        start = get(start_url)
    except (OSError, ValueError) as error:
        raise PreflightError(f"{label} {start_url} is unreachable ({error})") from None
    if start.status in (401, 403, 407):
        given = "the credentials given were refused" if headers else "it needs credentials (--user, --header, --cookie)"
        raise PreflightError(f"{label} {start_url} answered HTTP {start.status}: {given}")
    result = Preflight(start.status)
    body = start.body if start.status == 200 and is_html(start.header("Content-Type")) else None
    try:
        # One byte past RFC 9309's limit: enough to see the cut, never the rest of a huge file.
        robots = _robots(get, root, headers)
        robots_txt = robots.body if 200 <= robots.status < 300 else None
    except OSError:
        robots_txt = None
    result.blockers = start_page_blockers(
        start_url,
        header_values=start.header_values("X-Robots-Tag"),
        body=body,
        robots_txt=robots_txt,
        agent=agent,
        token=token,
    )
    _probe(get, root, ignore, result)
    return result


def _probe(get: Callable[..., Fetched], root: str, ignore: Ignore, result: Preflight) -> None:
    """A page that cannot exist (what the site's 404 looks like) and whether /sitemap.xml is there."""
    probe = f"{root}sitemap-crawler-probe-{secrets.token_hex(6)}"
    try:
        missing = get(probe)
        page = parse_html(missing.body, probe, "utf-8", ignore) if is_html(missing.header("Content-Type")) else None
        result.not_found = NotFoundPage(
            missing.status, page.content_digest if page else None, page.title if page else None
        )
        result.has_sitemap_xml = get(root + "sitemap.xml", max_bytes=1).status == 200  # its status only
    except OSError:
        pass


def _robots(get: Callable[..., Fetched], root: str, headers: dict[str, str]) -> Fetched:
    """robots.txt of *root*, redirects followed on the same host; *headers* on *root* only."""
    url = root + "robots.txt"
    for _ in range(MAX_ROBOTS_REDIRECTS + 1):
        robots = get(url, max_bytes=MAX_ROBOTS_BYTES + 1, headers=headers if site_root(url) == root else {})
        location = robots.header("Location") if 300 <= robots.status < 400 else None
        target = resolve_link(url, location) if location else None
        if target is None or not redirect_followed(root, target, same_host=True):
            break
        url = target
    return robots  # a redirect still: off the site, or one hop too many (no robots.txt, as for the crawl)
