"""Twisted's name resolution with the ``--resolve`` rules in front (SPEC S2): a pinned
HOST:PORT connects to its address, the URL, the Host header and TLS's server name unchanged;
every other name goes to Scrapy's own resolver (``TWISTED_DNS_RESOLVER``, its cache and
``DNS_TIMEOUT``)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scrapy.resolver import CachingThreadedResolver, HostResolution
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IAddress, IHostnameResolver
from zope.interface import implementer  # type: ignore[import-untyped]

from crawler.addresses import Pinned, pinned_address, read_pinned
from settings.values import strings

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from twisted.internet.base import ReactorBase

__all__ = ["PinnedResolver"]


@implementer(IHostnameResolver)
class PinnedResolver:
    """Scrapy's caching resolver, asked only for the names no rule pins."""

    def __init__(self, reactor: ReactorBase, rules: tuple[Pinned, ...], fallback: CachingThreadedResolver):
        self.reactor = reactor
        self.rules = rules
        self.fallback = fallback
        self.wrapped: Any = None  # the reactor's resolver before this one (zope interfaces are untyped)

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> Self:
        # The settings were read into the crawl's configuration first, so a bad rule was refused there.
        rules = tuple(read_pinned(text) for text in strings(crawler.settings, "SITEMAP_RESOLVE"))
        return cls(reactor, rules, CachingThreadedResolver.from_crawler(crawler, reactor))

    def install_on_reactor(self) -> None:
        self.fallback.install_on_reactor()
        if self.rules:
            self.wrapped = self.reactor.nameResolver
            self.reactor.installNameResolver(self)  # type: ignore[arg-type]

    def resolveHostName(
        self,
        resolutionReceiver: Any,
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> Any:
        addresses = pinned_address(self.rules, hostName, portNumber)
        if addresses is None:
            return self.wrapped.resolveHostName(
                resolutionReceiver, hostName, portNumber, addressTypes, transportSemantics
            )
        resolution = HostResolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        for address in addresses:
            kind = IPv6Address if ipaddress.ip_address(address).version == 6 else IPv4Address
            resolutionReceiver.addressResolved(kind("TCP", address, portNumber))
        resolutionReceiver.resolutionComplete()
        return resolution
