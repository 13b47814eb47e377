"""A sudden shrink of the listed set is refused (SPEC S10).

The most dangerous night of a scheduled crawl is the one after a bad deploy:
a site-wide ``noindex`` or ``Disallow: /`` makes the crawl list a fraction of
the site, and publishing that would replace a good set with an empty one. A
run that would lose more than its limit publishes nothing; the previous set
stays as it was, and the refusal names what the lost URLs became.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["shrink_refusal"]


def shrink_refusal(before: int | None, now: int, limit: float, lost: Counter[str]) -> str | None:
    """Why a set of *now* URLs may not replace one of *before*, or ``None`` when it may.

    *limit* is the share in percent the set may lose (0: any); *lost* counts what the URLs
    that left became (``noindex``, ``robots``, ``status 404``), the most common named.
    """
    if not limit or not before or now >= before * (1 - limit / 100):
        return None
    share = 100 * (before - now) / before
    why = f"the set would shrink by {share:.0f}% ({before:,} -> {now:,} URLs), more than --max-shrink {limit:g}%"
    if lost:
        named = lost.most_common(5)
        rest = sum(lost.values()) - sum(n for _, n in named)
        why += "; the URLs lost are now " + ", ".join(f"{name} {n:,}" for name, n in named)
        why += f", other {rest:,}" if rest else ""
    return why + " (--accept-shrink publishes it anyway)"
