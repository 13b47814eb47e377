"""The exporter's own check of the facts workers push (redis.asyncio, Protego).

An item in the shared flow is data from whoever could write to the Redis,
not proof that a page was crawled. Before a fetched page goes on to the
listing rules, the exporter checks it again, as it would have been checked
in one process: in the crawl's scope (its hosts, scheme and port), allowed by the
site's robots.txt (the body the workers decided on), and a URL the shared
frontier accepted (its fingerprint in the seen set). A page that fails is
refused and counted, never listed. Facts of URLs never fetched (out of
scope, disallowed, over a limit) only feed the report and pass.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from protego import Protego
from redis.asyncio import Redis

from crawler.distributed.robots import decode, robots_key
from crawler.items import PageFacts
from crawler.request_fingerprinter import url_fingerprint
from crawler.robots_rules import parse_robots
from crawler.scope import Scope
from crawler.urls import site_root

__all__ = ["Vetting"]

logger = logging.getLogger(__name__)

#: Refusals logged one by one; past these, only counted (a flood of planted items is not a flood of lines).
LOGGED = 20


@dataclass(slots=True)
class Vetting:
    redis: Redis
    crawl: str
    scope: Scope
    agent: str  # robots.txt's user agent
    secret: bytes | None = None  # the crawl's: a robots.txt not sealed under it is not the workers'
    refused: int = 0
    rules: dict[str, Protego] = field(default_factory=dict)  # origin -> its robots.txt, once decided

    async def refusals(self, batch: list[PageFacts]) -> list[str | None]:
        """For each of *batch*, why it is refused, or ``None``."""
        fetched = [facts.url for facts in batch if facts.status is not None]
        seen: dict[str, bool] = {}
        if fetched:
            key = f"sitemap-crawler:{self.crawl}:seen"
            members = await self.redis.smismember(key, [url_fingerprint(url) for url in fetched])
            seen = dict(zip(fetched, map(bool, members), strict=True))
        reasons = [await self._why(facts, seen) for facts in batch]
        for facts, why in zip(batch, reasons, strict=True):
            if why is not None:
                self.refused += 1
                if self.refused <= LOGGED:
                    logger.warning("Refused an item from the shared crawl (%s): %s", why, facts.url[:300])
        return reasons

    async def _why(self, facts: PageFacts, seen: dict[str, bool]) -> str | None:
        if facts.status is None:
            return None
        if not self.scope.contains(facts.url):
            return "a fetched page out of the crawl's scope"
        if not seen.get(facts.url):
            return "a page the shared frontier never queued"
        rules = await self._rules(site_root(facts.url).rstrip("/"))
        if rules is None:
            return "a page fetched before robots.txt was read"
        if not rules.can_fetch(facts.url, self.agent):
            return "a page robots.txt disallows"
        return None

    async def _rules(self, origin: str) -> Protego | None:
        known = self.rules.get(origin)
        if known is None:
            stored = await self.redis.hget(robots_key(self.crawl), origin)
            if stored is None:
                return None
            try:
                body, _ = decode(stored, self.secret, self.crawl, origin)
            except ValueError:
                return None  # not sealed by a worker of this crawl: as if never read
            known = self.rules[origin] = parse_robots(body)  # read as the workers' middleware reads it
        return known
