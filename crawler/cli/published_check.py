"""``--check-published``: after publishing, the public copy read as a search engine reads it (SPEC S10).

Files written are not files served: a deploy step that did not run, a CDN
still serving yesterday's index, a server that sends gzip twice. The check
of ``sitemap-crawler check`` runs on the index's public URL (``--base-url``),
comparing what is served with what was published (a different byte is
``stale``), and samples the URLs this run added too. A CDN or a deploy may
take a moment: a check with errors is tried again, with growing pauses,
until ``--check-wait`` seconds have passed. A SIGTERM or SIGINT meanwhile
stops it at once (Scrapy's handlers, which outlive its reactor, would let
the check go on): the set is published, only its check is cut short.
"""

from __future__ import annotations

import argparse
import signal
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crawler.check.result import CheckResult
    from crawler.sitemaps.publish import PublishResult
    from settings.config import SitemapConfig

__all__ = ["add_published_check_options", "check_fields", "check_public_copy"]

#: URLs this run added that the check samples besides its own sample (the first ones).
ADDED_SAMPLED = 200
_FIRST_PAUSE = 1.0
_FINDINGS_IN_JSON = 20


def add_published_check_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check-published",
        action="store_true",
        default=None,
        help="after publishing, check the public copy at --base-url as a search engine fetches it",
    )
    parser.add_argument(
        "--check-wait",
        type=float,
        metavar="SECONDS",
        help="how long to try again while the public copy is wrong (a CDN, a deploy step) (10)",
    )


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: Any) -> None:
    raise _Stopped(signum)


def check_public_copy(
    config: SitemapConfig, published: PublishResult, added: list[str], user_agent: str
) -> CheckResult | int:
    """The check of the public copy, tried again until it passes or ``check_wait`` is spent; or
    the number of the signal that stopped it."""
    from crawler.spiders.check import check_published  # noqa: PLC0415 - Scrapy's check only when asked

    give_up = time.monotonic() + config.check_wait
    pause = _FIRST_PAUSE
    previous = {signum: signal.signal(signum, _stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            result = check_published(
                published.index_url,
                user_agent=user_agent,
                robots_agent=config.robots_token,
                expect=config.output_dir,
                extra_urls=tuple(added[:ADDED_SAMPLED]),
                max_crawl_delay=config.max_crawl_delay,
            )
            if result.ok or time.monotonic() + pause > give_up:
                return result
            time.sleep(pause)  # the public copy may still be on its way: nothing to await but time
            pause *= 2
    except _Stopped as stopped:  # the check's child process, if one runs, is killed by subprocess.run
        return stopped.signum
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def check_fields(result: CheckResult) -> dict[str, Any]:
    """The check in the JSON summary: its verdict, counts and first findings."""
    data = result.as_json()
    data["findings"] = data["findings"][:_FINDINGS_IN_JSON]
    return data
