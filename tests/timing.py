"""Timing assertions on a server's own request log, with tolerances a loaded 2-core machine keeps.

A server thread scheduled late records one arrival late, which shortens the gap after it and
lengthens the gap before: single gaps move, the rate does not. So the rules are the rate (the
mean gap) and the share of gaps far below the delay, never the smallest gap.
"""

from __future__ import annotations

import itertools

__all__ = ["assert_paced"]

#: The mean gap may fall this far below the delay (the first and last arrivals may move too).
MEAN_SLACK = 0.95
#: A gap below this share of the delay is a request sent early, unless the log moved it ...
SHORT = 0.75
#: ... which happens to at most one gap in this many.
SHORT_ONE_IN = 10


def assert_paced(times: list[float], delay: float, short: float = SHORT) -> None:
    """The arrivals *times* (seconds, the server's clock) keep *delay* between requests; a gap under
    *short* x *delay* counts as short (lower it where more than the server moves arrivals: the
    workers of a shared crawl are granted their turn in Redis, then each sends its request)."""
    times = sorted(times)
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert gaps, "fewer than two requests: nothing to time"
    mean = (times[-1] - times[0]) / len(gaps)
    assert mean >= MEAN_SLACK * delay, f"mean gap {mean:.3f} s for a delay of {delay} s: {sorted(gaps)[:5]}"
    early = [gap for gap in gaps if gap < short * delay]
    assert len(early) <= max(1, len(gaps) // SHORT_ONE_IN), f"{len(early)} of {len(gaps)} gaps short: {early}"
