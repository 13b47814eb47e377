"""The run state: the one seam between a crawl and what it remembers (SPEC S6).

Every component that needs the state store (the spider's replays,
conditional requests, the lastmod pipeline, the export, the IndexNow
notifier, the CLI's checks) goes through :class:`RunState`; none of them
touches :class:`~crawler.state.store.StateStore`. A shared, distributed
implementation has to keep the contract written on the class.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import signals

from crawler.failures import ConfigError
from crawler.modes import RunMode
from crawler.results import CrawlResult
from crawler.state.changes import Change, Kind, state_word
from crawler.state.placement import Placer, placer
from crawler.state.store import UNKNOWN, Listing, PageState, StateLocked, StateStore, Unknown
from crawler.urls import site_root
from settings.config import SitemapConfig

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["Carried", "RunState", "now_w3c"]

logger = logging.getLogger(__name__)

#: A URL an update keeps from the last published run: (url, lastmod, facts, shard group).
Carried = tuple[str, str | None, dict[str, Any], str]


def now_w3c() -> str:
    """The current time as a W3C datetime in UTC (called for every URL, so no datetime objects)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class RunState:
    """One run of the crawl in the state store.

    Contract:

    - **Opening** (:meth:`of`, once per crawl): the store is locked, a new run
      begins, or with ``--resume`` the interrupted one continues; :attr:`mode`
      says which, :attr:`run` numbers it. A store first used for another
      origin starts its shards afresh.
    - **Before a request**: :meth:`stored` gives what the last visit left
      (validators for a conditional request, listing digest, lastmod).
    - **Replays**: :meth:`facts` gives the facts last recorded for a URL (a
      304, or a URL a resumed run already handled, listed by :meth:`handled`).
    - **Per URL**, exactly once per run: :meth:`record` stores its outcome
      (and its listing, when listed); a resumed run's replayed URL only gets
      :meth:`relist`; :meth:`save` commits what is recorded (at once, where
      another system must not be told before the store knows).
    - **Export** reads: :meth:`carry_forward` (an update's untouched URLs),
      :meth:`placement` and :meth:`relocate` (stable shards, the delta),
      :meth:`removals` (listed last time, not now), then
      :meth:`generation_written`.
    - **After publishing**: :meth:`announcements`, the URLs this run added,
      changed or removed (IndexNow).
    - **Closing** (engine stopped): a finished crawl closes the run as
      published or failed; an interrupted one stays open for ``--resume``.
    """

    def __init__(self, crawler: Crawler, store: StateStore, run: int, mode: RunMode, result: CrawlResult):
        self.crawler = crawler
        self.result = result
        self.store = store
        self.run = run
        self.mode = mode
        self._close_reason: str | None = None
        self._full_generation = True
        self.broken: str | None = None  # why the store stopped taking writes

    @classmethod
    def open(cls, crawler: Crawler, config: SitemapConfig, result: CrawlResult) -> RunState | None:
        """A new run (or the interrupted one, resumed) of the crawl's state store, once per crawl
        (:class:`crawler.run.context.CrawlContext` calls it); ``None`` when the state store is off."""
        state = None
        if config.state_path is not None:
            store = StateStore(config.state_path)
            origin = site_root(config.start_url)
            if store.get_meta("origin") not in (None, origin):
                # Another site's shards would leave this one numbered after them.
                logger.warning(
                    "State store %s was used for %s; shards start afresh", config.state_path, store.get_meta("origin")
                )
                store.reset_shards()
            store.set_meta("origin", origin)
            run, resumed = store.begin_run(now_w3c(), config.resume)
            mode = RunMode.UPDATE if config.updating else RunMode.RESUME if resumed else RunMode.CRAWL
            state = cls(crawler, store, run, mode, result)
            result.mode, result.run = mode, run
            crawler.signals.connect(state.spider_closed, signal=signals.spider_closed)
            crawler.signals.connect(state.engine_stopped, signal=signals.engine_stopped)
        return state

    @staticmethod
    def preflight(config: SitemapConfig) -> None:
        """Before a crawl: refuse (``ValueError``) when another run holds the
        store, or when an update has no earlier published crawl to build on."""
        if config.state_path is None:
            if config.updating:
                raise ConfigError("update needs the state store of an earlier crawl (drop --no-state)")
            return
        try:
            store = StateStore(config.state_path)
        except StateLocked as error:
            raise ConfigError(str(error)) from None
        except (sqlite3.DatabaseError, OSError) as error:
            raise ConfigError(f"state store {config.state_path} is not usable: {error}") from None
        try:
            if config.updating and store.last_published_run() is None:
                raise ConfigError(f"update needs an earlier published crawl in {config.state_path}; run crawl first")
            if config.resume and config.distributed is not None and not store.interrupted():
                # Its Redis holds only what was not yet exported: a new run would miss the rest.
                raise ConfigError(
                    f"--resume of a shared crawl continues the interrupted run of the state store "
                    f"{config.state_path}, and it has none: run without --resume"
                )
        finally:
            store.close()

    # -- during the crawl ------------------------------------------------------

    def stored(self, url: str) -> PageState | None:
        return self.store.get(url)

    def facts(self, url: str) -> dict[str, Any] | None:
        return self.store.facts(url)

    def handled(self) -> set[str]:
        """URLs whose outcome this run already recorded (before an interruption)."""
        return self.store.processed(self.run)

    def record(
        self,
        url: str,
        *,
        status: int | None,
        outcome: str,
        reason: str | None,
        facts: dict[str, Any] | None,
        validators: tuple[str | None, str | None] | None,
        listing: Listing | None = None,
        previous: PageState | Unknown | None = UNKNOWN,
        now: str | None = None,
    ) -> None:
        """This run's outcome for *url*; see :meth:`StateStore.record` for ``None`` meanings.

        A store that cannot be written (a full disk) is said once and fails the export, not every URL.
        """
        if self.broken is not None:
            return
        try:
            self.store.record(
                self.run,
                now or now_w3c(),
                url,
                status=status,
                outcome=outcome,
                reason=reason,
                facts=facts,
                validators=validators,
                listing=listing,
                previous=previous,
            )
        except sqlite3.Error as error:
            self.broken = f"state store {self.store.path} could not be written: {error}"
            logger.error("%s", self.broken)

    def save(self) -> None:
        """What this run recorded so far, committed: a shared crawl's exporter saves before it
        acknowledges the items in Redis, so a coordinator killed at any moment loses none."""
        if self.broken is not None:
            return
        try:
            self.store.commit()
        except sqlite3.Error as error:
            self.broken = f"state store {self.store.path} could not be written: {error}"
            logger.error("%s", self.broken)

    def relist(self, url: str, listing: Listing) -> None:
        """Bring a resumed URL's listing up to date; its outcome was recorded before."""
        self.store.update_listing(self.run, url, listing)

    # -- export ----------------------------------------------------------------

    def carry_forward(self, consume: Callable[[Carried], None]) -> int:
        """Hand every URL the last published run listed and this one did not
        touch to *consume*, then count them as listed by this run."""
        previous = self.store.previous_run(self.run)
        if previous is None:
            return 0
        for carried in self.store.carried(self.run, previous):
            consume(carried)
        count = self.store.mark_carried(self.run, previous)
        self.store.commit()
        return count

    def keep_out_of_reach(self) -> int:
        """The URLs of the hosts out of reach this run (their sets are kept: an outage is no
        removal) stay listed as the last published run listed them: never reported removed, and
        not "added" with a new lastmod when their host answers again. Returns how many."""
        previous = self.store.previous_run(self.run)
        if previous is None:
            return 0
        kept = sum(self.store.keep_listed(self.run, previous, origin + "/") for origin in self.result.outages())
        self.store.commit()
        return kept

    def placement(self, max_urls: int, *, delta: bool, delta_rotate: int, compact: bool) -> tuple[Placer, int]:
        """Where each listed URL goes, and how many go to the delta sitemap:
        stable shards (repacked when *compact*), or with *delta* the delta
        group for URLs added or changed since the last full generation, until
        *delta_rotate* runs have passed."""
        if compact:
            self.store.reset_shards()
        in_delta: set[str] = set()
        self._full_generation = True
        if delta:
            last_full = self.store.get_meta("last_full_run")
            if last_full is not None and self.run - int(last_full) < delta_rotate:
                self._full_generation = False
                in_delta = self.store.changed_since(int(last_full), self.run)
        return placer(self.store, max_urls, in_delta), len(in_delta)

    def relocate(self, urls: list[str], group: str) -> int:
        """Move *urls* to a fresh shard of *group* (theirs outgrew the byte limit)."""
        return self.store.move_to_new_shard(urls, group)

    def removals(self) -> Iterator[tuple[str, int | None, str, str | None]]:
        """URLs the last published run listed that this one does not: (url, status, outcome, reason)."""
        previous = self.store.previous_run(self.run)
        if previous is not None:
            yield from self.store.removed_since(self.run, previous)

    def generation_written(self, delta: bool) -> None:
        """The shards are written: remember a full generation (the delta's base)."""
        if delta and self._full_generation:
            self.store.set_meta("last_full_run", str(self.run))
        self.store.commit()

    def changes(self) -> Iterator[Change]:
        """What this run changed in the listed set since the last published run: the URLs it
        listed for the first time or with new content, then those it no longer lists."""
        previous = self.store.previous_run(self.run)
        for url in self.store.changed_in(self.run):
            was = self.store.state_in(url, previous) if previous is not None else None
            before = state_word(was[1], was[2], was[0]) if was else "new"
            yield Change(url, Kind.CHANGED if before == "listed" else Kind.ADDED, before, "listed")
        for url, status, outcome, reason in self.removals():
            yield Change(url, Kind.REMOVED, "listed", state_word(outcome, reason, status))

    def announcements(self) -> list[str]:
        """What IndexNow should hear about: every URL this run changed."""
        return [change.url for change in self.changes()]

    # -- closing -----------------------------------------------------------------

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self._close_reason = reason

    def engine_stopped(self) -> None:
        if self._close_reason == "finished":
            status = "published" if self.result.published else "failed"
            self.store.finish_run(self.run, status, now_w3c())
        self.store.close()
