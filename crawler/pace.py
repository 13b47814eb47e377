"""How fast one site is fetched, and why (pure: no Scrapy).

Every input that bears on the pace ends here, and one answer comes out: the
delay between requests, how many may be in flight, and whether the delay
is exact. The inputs:

- the user's delay (``--delay``, any layer): a fixed delay, never adapted;
- otherwise the server's latency (AutoThrottle's rule: aim at
  ``target`` requests in flight, move half-way to ``latency / target``,
  never lower on an answer that is not a 200, since error pages are fast);
- robots.txt ``Crawl-delay`` (RFC 9309 leaves it to crawlers): a floor,
  capped at ``cap``, with one request in flight so the pause is exact;
- a 429/5xx, a timeout or a refused connection: the delay doubles;
  ``Retry-After`` (capped) holds the site for that long, and nothing lowers
  the delay until the hold is over;
- good answers bring a fixed delay back down, halved each time to its floor;
- in a crawl shared by workers, this worker's share of the site's limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MIN_BACKOFF", "Pace", "span_words"]

#: The first step of a backoff, when the delay was 0.
MIN_BACKOFF = 0.25


@dataclass(slots=True)
class Pace:
    fixed: bool  # the user chose the delay: it never adapts
    base: float  # the user's delay when fixed; else the lowest the adaptive delay goes
    concurrency: int  # requests in flight at most (--concurrency)
    cap: float  # no Crawl-delay, Retry-After or backoff makes the delay longer than this
    start: float = 0.25  # the adaptive delay's first value
    target: float = 2.0  # requests in flight the adaptive delay aims at
    adaptive_max: float = 30.0  # the adaptive delay's ceiling (AUTOTHROTTLE_MAX_DELAY)
    delay: float = field(init=False)
    crawl_delay: float = 0.0  # robots.txt's, capped
    held_until: float = 0.0  # a monotonic moment: a Retry-After lasts until then
    share: int | None = None  # this worker's share of the site's limit (a shared crawl)

    def __post_init__(self) -> None:
        self.delay = self.base if self.fixed else max(self.base, self.start)

    @property
    def floor(self) -> float:
        """The delay never goes below this: the user's (or the adaptive minimum), and Crawl-delay."""
        return max(self.base, self.crawl_delay)

    @property
    def in_flight(self) -> int:
        """How many requests may be in flight: one under a Crawl-delay, else the limit (or this worker's share)."""
        if self.crawl_delay > 0:
            return 1
        return max(1, min(self.concurrency, self.share or self.concurrency))

    def exact(self, now: float) -> bool:
        """Whether the delay must be kept as it is, never randomised: a Crawl-delay or a Retry-After is a minimum."""
        return self.crawl_delay > 0 or self.held(now)

    def held(self, now: float) -> bool:
        return now < self.held_until

    def robots(self, crawl_delay: float) -> float:
        """robots.txt asks for *crawl_delay* seconds between requests; what is kept (capped) is returned."""
        kept = min(crawl_delay, self.cap) if self.cap > 0 else crawl_delay
        self.crawl_delay = max(0.0, kept)
        self.delay = max(self.delay, self.crawl_delay)
        return self.crawl_delay

    def latency(self, seconds: float, status: int, now: float) -> None:
        """An answer took *seconds*: the adaptive delay moves towards ``seconds / target``."""
        if self.fixed:
            return
        wanted = seconds / self.target
        moved = max(wanted, (self.delay + wanted) / 2)
        moved = min(max(self.floor, moved), max(self.floor, self.adaptive_max))
        if status != 200 and moved <= self.delay:
            return  # error pages are small and fast: they must not speed the crawl up
        if self.held(now) and moved < self.delay:
            return  # inside a Retry-After: only up
        self.delay = moved

    def trouble(self, now: float, retry_after: float | None = None) -> float:
        """The server struggled (429/5xx, a timeout, a refused connection): the delay doubles, and a
        *retry_after* (seconds, capped) holds the site for that long. The new delay is returned."""
        doubled = max(self.delay * 2, MIN_BACKOFF)
        if retry_after:
            retry_after = min(retry_after, self.cap) if self.cap > 0 else retry_after
            self.held_until = max(self.held_until, now + retry_after)
        wanted = max(doubled, retry_after or 0.0)
        self.delay = max(self.delay, min(self.cap, wanted) if self.cap > 0 else wanted)
        return self.delay

    def answered(self, now: float) -> None:
        """A good answer: a fixed delay raised by trouble comes back down, halved each time down to
        its floor (an adaptive one follows the latency instead)."""
        if self.fixed and self.delay > self.floor and not self.held(now):
            self.delay = max(self.floor, self.delay / 2)


def span_words(seconds: float) -> str:
    """*seconds* as a person says a long wait: ``about 1 day 4 h``, ``about 2 h 47 min``, ``about 12 min``."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"about {days} day{'s' if days > 1 else ''}" + (f" {hours} h" if hours else "")
    if hours:
        return f"about {hours} h" + (f" {minutes} min" if minutes else "")
    return f"about {minutes} min"
