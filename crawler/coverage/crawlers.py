"""Which crawler a request came from, counted only when its address is in that crawler's
operator's published ranges (pure apart from reading the ranges file).

A user agent is a claim anyone can make; the address is what the operator vouches for. The
ranges ship as a dated snapshot (``data/crawler-ranges.json``: each crawler's ranges and the
operator's sources they were read from), and ``--bot-ranges FILE`` replaces it with a file of
the same shape (``python -m crawler.coverage.refresh`` writes one from the sources).
"""

from __future__ import annotations

import ipaddress
import json
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

__all__ = ["AGENT_TOKENS", "CrawlerRanges", "crawler_of", "load_ranges"]

#: Each crawler and the user agent tokens that name it (matched without regard to case); a
#: token of one never appears in another's agent. Google's and Bing's media and preview
#: crawlers are theirs: they come from the same ranges.
AGENT_TOKENS: dict[str, tuple[str, ...]] = {
    "Googlebot": ("googlebot", "google-inspectiontool", "storebot-google", "googleother"),
    "Bingbot": ("bingbot", "bingpreview", "adidxbot", "microsoftpreview"),
    "Applebot": ("applebot",),
    "GPTBot": ("gptbot",),
    "OAI-SearchBot": ("oai-searchbot",),
    "ChatGPT-User": ("chatgpt-user",),
    "ClaudeBot": ("claudebot", "claude-searchbot", "claude-user"),
    "PerplexityBot": ("perplexitybot",),
    "Perplexity-User": ("perplexity-user",),
    "DuckDuckBot": ("duckduckbot",),
    # Operators that publish no ranges: verifiable by DNS only (--verify-dns, coverage/dnscheck.py).
    "YandexBot": ("yandexbot", "yandeximages", "yandexmobilebot"),
    "Baiduspider": ("baiduspider",),
    "Amazonbot": ("amazonbot",),
    "PetalBot": ("petalbot",),
    "SeznamBot": ("seznambot",),
}
_TOKENS = tuple((token, name) for name, tokens in AGENT_TOKENS.items() for token in tokens)


@lru_cache(maxsize=65_536)  # a log has few agents, each on many lines
def crawler_of(agent: str) -> str | None:
    """The crawler *agent* claims to be, or ``None`` for any other client."""
    lowered = agent.lower()
    for token, name in _TOKENS:
        if token in lowered:
            return name
    return None


@dataclass(slots=True)
class _Networks:
    """Address ranges of one IP version as sorted, merged (first, last) integer pairs."""

    firsts: list[int] = field(default_factory=list)
    lasts: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, networks: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> _Networks:
        merged: list[list[int]] = []
        for first, last in sorted((int(n.network_address), int(n.broadcast_address)) for n in networks):
            if merged and first <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        return cls([first for first, _ in merged], [last for _, last in merged])

    def __contains__(self, number: int) -> bool:
        at = bisect_right(self.firsts, number) - 1
        return at >= 0 and number <= self.lasts[at]


@dataclass(frozen=True, slots=True)
class CrawlerRanges:
    """Each crawler's published ranges, and where and when they were read."""

    collected: str  # the day the ranges were read from their sources
    sources: Mapping[str, tuple[str, ...]]
    _v4: Mapping[str, _Networks]
    _v6: Mapping[str, _Networks]

    def vouches(self, crawler: str, address: str) -> bool:
        """Whether *address* is in *crawler*'s published ranges (an IPv4 address mapped into
        IPv6, as dual-stack servers log it, counts as the IPv4 one)."""
        try:
            parsed = ipaddress.ip_address(address.strip("[]"))
        except ValueError:
            return False
        if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
            parsed = parsed.ipv4_mapped
        table = self._v4 if parsed.version == 4 else self._v6
        networks = table.get(crawler)
        return networks is not None and int(parsed) in networks

    @property
    def crawlers(self) -> tuple[str, ...]:
        return tuple(self.sources)


def load_ranges(path: Path | None = None) -> CrawlerRanges:
    """The ranges of *path* (the ``--bot-ranges`` file), else the shipped snapshot;
    ``ValueError`` in one line when the file is not such a document."""
    where = "the shipped crawler ranges" if path is None else str(path)
    source = files("crawler.coverage") / "data" / "crawler-ranges.json" if path is None else path
    try:
        document = json.loads(source.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ValueError(f"{where}: not readable as JSON ({error})") from None
    crawlers = document.get("crawlers") if isinstance(document, dict) else None
    if not isinstance(crawlers, dict) or not crawlers:
        shape = "see crawler/coverage/data/crawler-ranges.json for the shape"
        raise ValueError(f'{where}: no "crawlers" object ({shape})')
    sources: dict[str, tuple[str, ...]] = {}
    v4: dict[str, _Networks] = {}
    v6: dict[str, _Networks] = {}
    for name, entry in crawlers.items():
        ranges = entry.get("ranges") if isinstance(entry, dict) else None
        if name not in AGENT_TOKENS:
            raise ValueError(f"{where}: unknown crawler {name!r} (known: {', '.join(AGENT_TOKENS)})")
        if not isinstance(ranges, list):
            raise ValueError(f'{where}: {name} has no "ranges" list')  # noqa: TRY004 - a file's content, in one line
        try:
            networks = [ipaddress.ip_network(str(text), strict=False) for text in ranges]
        except ValueError as error:
            raise ValueError(f"{where}: {name}: {error}") from None
        v4[name] = _Networks.of(n for n in networks if isinstance(n, ipaddress.IPv4Network))
        v6[name] = _Networks.of(n for n in networks if isinstance(n, ipaddress.IPv6Network))
        listed = entry.get("sources")
        sources[name] = tuple(str(s) for s in listed) if isinstance(listed, list) else ()
    return CrawlerRanges(str(document.get("collected") or "unknown"), sources, v4, v6)
