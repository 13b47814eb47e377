"""Settings of a crawl over several hosts (SPEC S2): which hosts are in scope (``--subdomains``,
``--host``), how many at most, and where names connect (``--resolve``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings

from crawler.addresses import HOST_NAME, Pinned, ascii_host, read_pinned
from crawler.failures import ConfigError
from crawler.scope import Scope, public_suffix_free
from settings.values import strings, whole_number

__all__ = ["Hosts", "read_hosts"]

#: A host name, or ``*.`` and one: letters, digits, hyphens and dots (IDNA names in their ASCII form).
_HOST = re.compile(r"(\*\.)?" + HOST_NAME.pattern)


@dataclass(frozen=True, slots=True)
class Hosts:
    subdomains: bool = False  # every host of the start URL's registrable domain
    names: tuple[str, ...] = ()  # hosts named (exact, or *.example.com)
    max_hosts: int = 100  # hosts a crawl takes in at most: a site's made-up subdomains are a trap too
    max_pages: int = 0  # each host's share of the page budget: a forum host cannot take it all (0: none)
    pinned: tuple[Pinned, ...] = ()  # --resolve
    index_host: str = ""  # --index-host: the host whose folder gets the index of every host's sitemaps

    @property
    def several(self) -> bool:
        """Whether the crawl may go past its start host: one sitemap set per host then."""
        return self.subdomains or bool(self.names)

    def scope(self, start_url: str) -> Scope:
        return Scope(start_url, self.names, subdomains=self.subdomains)


def read_hosts(settings: BaseSettings, start_url: str, staging: tuple[str, ...] = ()) -> Hosts:
    """The hosts options. With a production map (*staging*: the roots SITEMAP_PRODUCTION_URL maps,
    the start URL's first), the crawl's hosts are the mapped ones: a host found on staging with no
    production name could only be listed under its staging name, which no sitemap may carry."""
    names = tuple(_ascii(name) for name in strings(settings, "SITEMAP_HOSTS"))
    if staging and (names or settings.getbool("SITEMAP_SUBDOMAINS")):
        raise ConfigError(
            "with --production-url the crawl's hosts are the ones it maps: drop --subdomains and --host, "
            "and map each staging host to its production origin (--production-url STAGING=URL)"
        )
    start = urlsplit(start_url)
    for root in staging[1:]:
        parts = urlsplit(root)
        if (parts.scheme, parts.port) != (start.scheme, start.port):
            raise ConfigError(
                f"SITEMAP_PRODUCTION_URL: the staging host {root} is not on the start URL's scheme and port "
                f"({start.scheme}://...{f':{start.port}' if start.port else ''}): a crawl keeps both"
            )
        if parts.hostname and parts.hostname not in names:
            names += (parts.hostname,)
    for name in names:
        if not _HOST.fullmatch(name):
            raise ConfigError(
                f"SITEMAP_HOSTS: {name!r} is not a host name, nor *. and one (--host): give the name alone, "
                "without scheme or port (every host is crawled on the start URL's)"
            )
        if name.startswith("*.") and not public_suffix_free(name[2:]):
            raise ConfigError(
                f"SITEMAP_HOSTS: {name!r} covers every site under a public suffix (--host): name the site's "
                "own domain, as *.example.com"
            )
    pinned = []
    for text in strings(settings, "SITEMAP_RESOLVE"):
        try:
            pinned.append(read_pinned(text))
        except ValueError as error:
            raise ConfigError(f"SITEMAP_RESOLVE (--resolve): {error}") from None
    index_host = ascii_host(str(settings.get("SITEMAP_INDEX_HOST") or ""))
    if index_host and not HOST_NAME.fullmatch(index_host):
        raise ConfigError(f"SITEMAP_INDEX_HOST: {index_host!r} is not a host name (--index-host)")
    return Hosts(
        subdomains=settings.getbool("SITEMAP_SUBDOMAINS"),
        names=names,
        max_hosts=whole_number(settings, "SITEMAP_MAX_HOSTS"),
        max_pages=whole_number(settings, "SITEMAP_MAX_PAGES_PER_HOST"),
        pinned=tuple(pinned),
        index_host=index_host,
    )


def _ascii(name: str) -> str:
    """A --host name in its ASCII form, a glob's ``*.`` kept."""
    return "*." + ascii_host(name[2:]) if name.startswith("*.") else ascii_host(name)
