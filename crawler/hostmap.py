"""Staging and production hosts as two names of one site (SPEC S7, pure).

A staging site is a copy of production: ``PROD/x`` is ``STAGING/x``. Links,
canonicals and alternates that name production are crawled on staging;
everything written to a sitemap names production. A site of several hosts
has one such pair per host (``staging.example.com`` for ``www.example.com``,
``blog.staging.example.com`` for ``blog.example.com``); the first pair is the
start URL's.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HostMap"]


def _moved(url: str, old: str, new: str) -> str | None:
    """*url* with its root *old* replaced by *new*; None when *url* is not under *old*."""
    if url.startswith(old) or url + "/" == old:
        return new + url[len(old) :]
    if url[: len(old)].lower() == old:  # a host spelled in capitals, before normalisation
        return new + url[len(old) :]
    return None


@dataclass(frozen=True, slots=True)
class HostMap:
    """(staging root, production root) pairs (``scheme://host[:port]/``, normalised), the
    start URL's first; no root appears twice."""

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def one(cls, staging: str, production: str) -> HostMap:
        return cls(((staging, production),))

    @property
    def staging(self) -> str:
        """The start URL's staging root."""
        return self.pairs[0][0]

    @property
    def production(self) -> str:
        """The start URL's production root."""
        return self.pairs[0][1]

    @property
    def stagings(self) -> tuple[str, ...]:
        return tuple(staging for staging, _ in self.pairs)

    @property
    def productions(self) -> tuple[str, ...]:
        return tuple(production for _, production in self.pairs)

    @property
    def several(self) -> bool:
        return len(self.pairs) > 1

    def to_staging(self, url: str) -> str:
        """*url* on staging when it is on a production host of the map; else as it is."""
        for staging, production in self.pairs:
            if (moved := _moved(url, production, staging)) is not None:
                return moved
        return url

    def to_production(self, url: str) -> str:
        """*url* on production when it is on a staging host of the map; else as it is."""
        for staging, production in self.pairs:
            if (moved := _moved(url, staging, production)) is not None:
                return moved
        return url

    def on_production(self, url: str) -> bool:
        """Whether *url* is on a production host of the map."""
        return any(_moved(url, root, root) is not None for root in self.productions)

    def on_staging(self, url: str) -> bool:
        """Whether *url* is on a staging host of the map."""
        return any(_moved(url, root, root) is not None for root in self.stagings)
