"""The site's robots.txt as every component of one crawl reads it: its rules (with the vouch
that spares a request a second match), and the user agent they are matched for."""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser
from scrapy.settings import BaseSettings
from scrapy.utils.python import to_unicode

from crawler.robots_rules import parse_robots

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["VOUCH", "SiteRules", "robots_agent_of", "robots_user_agent"]


def robots_user_agent(crawler: Crawler) -> str:
    """The user agent robots.txt rules are matched against."""
    return robots_agent_of(crawler.settings)


VOUCH = "robots_vouch"  # meta key: the spider's match allowed this URL (see SiteRules.mark)


def robots_agent_of(settings: BaseSettings) -> str:
    """:func:`robots_user_agent` from settings alone (before any crawler exists)."""
    return str(settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT"))


class SiteRules(RobotParser):
    """Protego's rules for one origin (parsed as Scrapy's own Protego parser does: UTF-8, a BOM
    and undecodable bytes ignored), the sitemaps they name, and the requests they have already
    allowed. A vouch counts only for the URL the last match allowed, so only a decision these
    rules made spares the middleware its match. It travels in the request's meta (the frontier
    may wait on disk, where the Request object is rebuilt) as a MAC under a key these rules drew
    at random: an entry written by another process or for another URL or agent claims nothing.
    """

    def __init__(self, robotstxt_body: bytes):
        self.rules = parse_robots(robotstxt_body)
        self._last: tuple[str, str] | None = None  # the URL and agent allowed by the last match
        self._key = os.urandom(16)  # known to this process and these rules alone

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        return cls(robotstxt_body)

    @property
    def sitemaps(self) -> list[str]:
        """The ``Sitemap:`` lines (RFC 9309 leaves them to crawlers; sitemaps.org defines them)."""
        return list(self.rules.sitemaps)

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        delay = self.rules.crawl_delay(to_unicode(user_agent))
        return None if delay is None else float(delay)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        allowed = bool(self.rules.can_fetch(to_unicode(url), to_unicode(user_agent)))
        self._last = (to_unicode(url), to_unicode(user_agent)) if allowed else None
        return allowed

    def mark(self, url: str) -> str | None:
        """For *url*, if the last match allowed it: the mark that spares its request a second
        match (the value of its meta's :data:`VOUCH`)."""
        last, self._last = self._last, None
        return self._mac(url, last[1]) if last is not None and last[0] == url else None

    def vouched(self, request: Request, user_agent: str) -> bool:
        """Whether *request* was vouched for, for *user_agent* (once: the vouch is taken off)."""
        vouch = request.meta.pop(VOUCH, None)
        return isinstance(vouch, str) and hmac.compare_digest(vouch, self._mac(request.url, user_agent))

    def _mac(self, url: str, user_agent: str) -> str:
        return hmac.new(self._key, f"{user_agent}\n{url}".encode(), hashlib.sha256).hexdigest()[:32]
