"""``--verify-dns``: a crawler's address confirmed by reverse and forward DNS, as Google, Bing,
Apple, Yandex and Baidu tell site owners to: the address's name must be in the operator's
domain, and that name must resolve back to the address. It is how an operator that publishes
no ranges is told from a forgery, and how an address newer than the ranges snapshot is.

Bounded: each address is looked up once (cached), each lookup gets ``timeout`` seconds (it
runs on a daemon thread, so a resolver that never answers holds nothing), and after
``give_up_after`` unanswered lookups in a row, or ``budget`` seconds of DNS in all, no more
are made: the rest is counted as not verifiable, with the reason.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field

__all__ = ["DNS_DOMAINS", "DnsCheck"]

#: The domains each operator's crawler names end with, as the operator documents them.
DNS_DOMAINS: dict[str, tuple[str, ...]] = {
    "Googlebot": ("googlebot.com", "google.com", "googleusercontent.com"),
    "Bingbot": ("search.msn.com",),
    "Applebot": ("applebot.apple.com",),
    "YandexBot": ("yandex.ru", "yandex.net", "yandex.com"),
    "Baiduspider": ("baidu.com", "baidu.jp"),
    "Amazonbot": ("crawl.amazonbot.amazon",),
    "PetalBot": ("petalsearch.com", "aspiegel.com"),
    "SeznamBot": ("seznam.cz",),
}
_UNANSWERED = object()
#: h_errno of an address the name service says has no name: HOST_NOT_FOUND, NO_DATA, and 0 (a
#: hosts file without it). TRY_AGAIN and NO_RECOVERY say it could not tell.
_NO_NAME = (1, 4, 0)


def _in_domain(name: str, domains: tuple[str, ...]) -> bool:
    name = name.lower().rstrip(".")
    return any(name.endswith("." + domain) for domain in domains)


def _same(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped
    return parsed


def _confirmed_name(address: str, domains: Iterable[tuple[str, ...]]) -> str:
    """The name of *address* that reverse and forward DNS agree on, when it is in one of the
    *domains*; ``""`` when DNS says there is none; ``OSError`` when it could not tell."""
    try:
        name = socket.gethostbyaddr(address)[0]
    except socket.herror as error:
        if error.errno in _NO_NAME:
            return ""  # no name for the address: no operator vouches for it
        raise  # TRY_AGAIN, NO_RECOVERY: DNS could not tell
    if not any(_in_domain(name, each) for each in domains):
        return ""  # nobody's crawler: not worth a forward lookup
    try:
        answers = socket.getaddrinfo(name, None)
    except socket.gaierror as error:
        if error.errno == socket.EAI_NONAME:
            return ""
        raise
    return name if any(_same(str(info[4][0])) == _same(address) for info in answers) else ""


@dataclass(slots=True)
class DnsCheck:
    timeout: float = 2.0
    budget: float = 120.0
    give_up_after: int = 3
    domains: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DNS_DOMAINS))
    confirmed: int = 0  # (crawler, address) pairs DNS confirmed
    refused: int = 0
    unanswered: int = 0  # addresses DNS did not answer for
    lookups: int = 0  # addresses asked (each once, however many crawlers claim it)
    gave_up: str | None = None  # why no more lookups are made
    _names: dict[str, str | None] = field(default_factory=dict)  # address -> confirmed name, "" or None
    _verdicts: set[tuple[str, str]] = field(default_factory=set)
    _spent: float = 0.0
    _in_a_row: int = 0

    def knows(self, crawler: str) -> bool:
        return crawler in self.domains

    def vouches(self, crawler: str, address: str) -> bool | None:
        """Whether DNS confirms *address* as *crawler*'s; ``None`` when it could not tell."""
        parsed = _same(address)
        if parsed is None:
            return False
        key = str(parsed)  # ::ffff:1.2.3.4, [1.2.3.4] and 1.2.3.4 are one address
        if key not in self._names:
            self._names[key] = self._look_up(key)
        name = self._names[key]
        if name is None:
            return None
        verdict = _in_domain(name, self.domains[crawler]) if name else False
        if (crawler, key) not in self._verdicts:
            self._verdicts.add((crawler, key))
            self.confirmed += verdict
            self.refused += not verdict
        return verdict

    def _look_up(self, address: str) -> str | None:
        if self.gave_up is not None:
            return None
        self.lookups += 1
        answer: list[object] = [_UNANSWERED]

        def look() -> None:
            with suppress(OSError):  # DNS could not tell: left unanswered
                answer[0] = _confirmed_name(address, self.domains.values())

        began = time.monotonic()
        thread = threading.Thread(target=look, name="verify-dns", daemon=True)
        thread.start()
        thread.join(self.timeout)
        self._spent += time.monotonic() - began
        result = answer[0]
        if result is _UNANSWERED:
            self.unanswered += 1
            self._in_a_row += 1
            if self._in_a_row >= self.give_up_after:
                self.gave_up = f"{self._in_a_row} lookups in a row unanswered within {self.timeout:g} s"
        else:
            self._in_a_row = 0
        if self.gave_up is None and self._spent > self.budget:
            self.gave_up = f"{self.budget:g} s of DNS lookups spent"
        return result if isinstance(result, str) else None

    def figures(self) -> dict[str, object]:
        return {
            "lookups": self.lookups, "confirmed": self.confirmed, "refused": self.refused,
            "unanswered": self.unanswered, "gave_up": self.gave_up,
        }  # fmt: skip
