"""Staging and production hosts as two names of one site (SPEC S7, pure).

A staging site is a copy of production: ``PROD/x`` is ``STAGING/x``. Links,
canonicals and alternates that name production are crawled on staging;
everything written to a sitemap names production.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HostMap"]


@dataclass(frozen=True, slots=True)
class HostMap:
    """Two site roots (``scheme://host[:port]/``, normalised)."""

    staging: str
    production: str

    @staticmethod
    def _moved(url: str, old: str, new: str) -> str:
        if url.startswith(old) or url + "/" == old:
            return new + url[len(old) :]
        if url[: len(old)].lower() == old:  # a host spelled in capitals, before normalisation
            return new + url[len(old) :]
        return url

    def to_staging(self, url: str) -> str:
        return self._moved(url, self.production, self.staging)

    def to_production(self, url: str) -> str:
        return self._moved(url, self.staging, self.production)
