"""Whether this process has run Twisted's reactor yet.

A reactor runs once per process: a second ``CrawlerProcess.start()`` raises
``ReactorNotRestartable``. ``crawl --check-published`` checks the set it has
just published after its own crawl, so the check asks here whether it must
run in a child process. Every start of a crawl goes through :func:`start`,
which keeps the answer; Twisted's own flag is private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import CrawlerProcess

__all__ = ["has_run", "start"]

_ran = False


def start(process: CrawlerProcess) -> None:
    """``process.start()``, remembered (even when it fails: a reactor that was started is spent)."""
    global _ran  # noqa: PLW0603 - one fact about the process
    _ran = True
    process.start()


def has_run() -> bool:
    return _ran
