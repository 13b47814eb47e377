"""Settings of a crawl over several hosts (SPEC S2): which hosts are in scope (``--subdomains``,
``--host``), how many at most, where names connect (``--resolve``), and the host whose index
may list every host's sitemaps (``--index-host``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from crawler.addresses import Pinned, read_pinned
from crawler.failures import ConfigError
from crawler.scope import Scope
from settings.values import strings, whole_number

__all__ = ["Hosts", "read_hosts"]

#: A host name, or ``*.`` and one: letters, digits, hyphens and dots (IDNA names in their ASCII form).
_HOST = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")


@dataclass(frozen=True, slots=True)
class Hosts:
    subdomains: bool = False  # every host of the start URL's registrable domain
    names: tuple[str, ...] = ()  # hosts named (exact, or *.example.com)
    max_hosts: int = 100  # hosts a crawl takes in at most: a site's made-up subdomains are a trap too
    pinned: tuple[Pinned, ...] = ()  # --resolve
    index_host: str | None = None  # the host whose index lists every host's sets

    @property
    def several(self) -> bool:
        """Whether the crawl may go past its start host: one sitemap set per host then."""
        return self.subdomains or bool(self.names)

    def scope(self, start_url: str) -> Scope:
        return Scope(start_url, self.names, subdomains=self.subdomains)


def read_hosts(settings: BaseSettings, start_url: str) -> Hosts:
    names = tuple(name.lower().rstrip(".") for name in strings(settings, "SITEMAP_HOSTS"))
    for name in names:
        if not _HOST.fullmatch(name):
            raise ConfigError(f"SITEMAP_HOSTS: {name!r} is not a host name, nor *. and one (--host)")
    pinned = []
    for text in strings(settings, "SITEMAP_RESOLVE"):
        try:
            pinned.append(read_pinned(text))
        except ValueError as error:
            raise ConfigError(f"SITEMAP_RESOLVE (--resolve): {error}") from None
    hosts = Hosts(
        subdomains=settings.getbool("SITEMAP_SUBDOMAINS"),
        names=names,
        max_hosts=whole_number(settings, "SITEMAP_MAX_HOSTS"),
        pinned=tuple(pinned),
        index_host=str(settings.get("SITEMAP_INDEX_HOST") or "").lower().rstrip(".") or None,
    )
    if hosts.index_host is not None:
        scheme = urlsplit(start_url).scheme
        if not hosts.several:
            raise ConfigError("SITEMAP_INDEX_HOST (--index-host) needs several hosts: --subdomains or --host")
        if not hosts.scope(start_url).contains(f"{scheme}://{hosts.index_host}{_port(start_url)}/"):
            raise ConfigError(f"SITEMAP_INDEX_HOST: {hosts.index_host} is not a host of the crawl")
    return hosts


def _port(url: str) -> str:
    port = urlsplit(url).port
    return f":{port}" if port else ""
