"""``--resolve HOST:PORT:ADDRESS`` (curl's syntax, pure): connect to ADDRESS for HOST:PORT
without asking DNS, the URL and the Host header unchanged. A staging machine is crawled under
the production names so, and a test's hosts all live on 127.0.0.1."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

__all__ = ["HOST_NAME", "Pinned", "ascii_host", "pinned_address", "read_pinned"]

#: One host name in its ASCII form, lower case: letters, digits, inner hyphens, dots between labels.
#: In ``--resolve``, curl's other forms (``*`` for every name, ``+`` for a pin that expires) are
#: refused, not honoured by halves: a name they fail to pin would be looked up in DNS (production).
HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")


def ascii_host(name: str) -> str:
    """*name* as URLs carry it: lower case, without a trailing dot, a name in another script in
    its ASCII (IDNA) form, as the crawl normalises links (``bücher.example`` is
    ``xn--bcher-kva.example``). A name that has none is returned as it is, for the caller to refuse."""
    name = name.strip().rstrip(".")
    if name.isascii():
        return name.lower()
    try:
        return name.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return name


@dataclass(frozen=True, slots=True)
class Pinned:
    """One rule: *host* (lower case) on *port* connects to *addresses*, in order."""

    host: str
    port: int
    addresses: tuple[str, ...]

    def __str__(self) -> str:
        shown = ",".join(f"[{a}]" if ":" in a else a for a in self.addresses)
        return f"{self.host}:{self.port}:{shown}"


def read_pinned(text: str) -> Pinned:
    """One ``HOST:PORT:ADDRESS[,ADDRESS...]`` rule (an IPv6 address in brackets); ``ValueError``
    saying what is wrong."""
    host, _, rest = text.strip().partition(":")
    port_text, _, addresses_text = rest.partition(":")
    if not host or not port_text or not addresses_text:
        raise ValueError(f"{text!r} is not HOST:PORT:ADDRESS (e.g. www.example.com:443:127.0.0.1)")
    if not HOST_NAME.fullmatch(ascii_host(host)):
        raise ValueError(f"{text!r}: {host!r} is not one host name (curl's * and + forms are not taken)")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r}: the port {port_text!r} is not a number from 1 to 65535")
    addresses = []
    for part in addresses_text.split(","):
        try:
            addresses.append(str(ipaddress.ip_address(part.strip().strip("[]"))))
        except ValueError:
            raise ValueError(f"{text!r}: {part!r} is not an IP address (a host name is not resolved here)") from None
    return Pinned(ascii_host(host), int(port_text), tuple(addresses))


def pinned_address(rules: tuple[Pinned, ...], host: str, port: int) -> tuple[str, ...] | None:
    """The addresses *host*:*port* connects to by a rule, or ``None`` (ask DNS)."""
    host = host.lower().rstrip(".")
    return next((rule.addresses for rule in rules if rule.host == host and rule.port == port), None)
