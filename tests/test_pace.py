"""The site's pace (crawler/pace.py, pure): one table over its inputs, and what each gives."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crawler.pace import MIN_BACKOFF, Pace

Step = Callable[[Pace], object]


def fixed(delay: float = 0.5, concurrency: int = 4) -> Pace:
    return Pace(fixed=True, base=delay, concurrency=concurrency, cap=30.0)


def adaptive(concurrency: int = 4, start: float = 0.25, target: float = 2.0) -> Pace:
    return Pace(fixed=False, base=0.0, concurrency=concurrency, cap=30.0, start=start, target=target)


# (what happens, the pace, the inputs in order, then: delay, requests in flight, exact at moment 0)
CASES: list[tuple[str, Pace, list[Step], float, int, bool]] = [
    ("a fixed delay as given", fixed(0.5), [], 0.5, 4, False),
    ("a fixed delay ignores latency", fixed(0.5), [lambda p: p.latency(4.0, 200, 0)], 0.5, 4, False),
    ("the adaptive delay starts at its start", adaptive(), [], 0.25, 4, False),
    ("the adaptive delay follows a slow server", adaptive(), [lambda p: p.latency(2.0, 200, 0)], 1.0, 4, False),
    ("half-way to a fast server", adaptive(start=1.0), [lambda p: p.latency(0.2, 200, 0)], 0.55, 4, False),
    ("a fast error page does not speed up", adaptive(start=1.0), [lambda p: p.latency(0.0, 404, 0)], 1.0, 4, False),
    ("the adaptive delay stops at its ceiling", adaptive(), [lambda p: p.latency(600.0, 200, 0)], 30.0, 4, False),
    ("Crawl-delay is a floor with one in flight", fixed(0.1), [lambda p: p.robots(2.0)], 2.0, 1, True),
    ("Crawl-delay over a longer fixed delay", fixed(5.0), [lambda p: p.robots(2.0)], 5.0, 1, True),
    ("Crawl-delay is capped", fixed(0.1), [lambda p: p.robots(3600.0)], 30.0, 1, True),
    ("the adaptive delay never goes under Crawl-delay", adaptive(),
     [lambda p: p.robots(1.5), lambda p: p.latency(0.0, 200, 0)], 1.5, 1, True),
    ("trouble doubles the delay", fixed(0.5), [lambda p: p.trouble(0)], 1.0, 4, False),
    ("trouble from no delay starts at the first step", fixed(0.0), [lambda p: p.trouble(0)], MIN_BACKOFF, 4, False),
    ("trouble stops at the cap", fixed(20.0), [lambda p: p.trouble(0)], 30.0, 4, False),
    ("Retry-After sets the delay and holds the site", fixed(0.5), [lambda p: p.trouble(0, 10.0)], 10.0, 4, True),
    ("Retry-After is capped", fixed(0.5), [lambda p: p.trouble(0, 3600.0)], 30.0, 4, True),
    ("a good answer halves a raised fixed delay", fixed(0.5), [lambda p: p.trouble(0, None), lambda p: p.trouble(0),
                                                               lambda p: p.answered(0)], 1.0, 4, False),
    ("never below the floor", fixed(0.5), [lambda p: p.trouble(0), lambda p: p.answered(0), lambda p: p.answered(0)],
     0.5, 4, False),
    ("nothing lowers the delay during a hold", fixed(0.5), [lambda p: p.trouble(0, 10.0), lambda p: p.answered(5)],
     10.0, 4, True),
    ("the adaptive delay may not drop during a hold", adaptive(),
     [lambda p: p.trouble(0, 10.0), lambda p: p.latency(0.0, 200, 5)], 10.0, 4, True),
    ("but it may rise", adaptive(), [lambda p: p.trouble(0, 10.0), lambda p: p.latency(40.0, 200, 5)], 20.0, 4, True),
    ("after the hold a good answer lowers it", fixed(0.5), [lambda p: p.trouble(0, 10.0), lambda p: p.answered(11)],
     5.0, 4, True),
    ("a worker keeps its share of the limit", fixed(0.0, 6), [lambda p: setattr(p, "share", 2)], 0.0, 2, False),
    ("a share never exceeds the limit", fixed(0.0, 2), [lambda p: setattr(p, "share", 5)], 0.0, 2, False),
    ("Crawl-delay keeps one in flight whatever the share", fixed(0.0, 6),
     [lambda p: setattr(p, "share", 3), lambda p: p.robots(0.2)], 0.2, 1, True),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_the_pace_over_its_inputs(case: tuple[str, Pace, list[Step], float, int, bool]) -> None:
    _, pace, steps, delay, in_flight, exact = case
    for step in steps:
        step(pace)
    assert (round(pace.delay, 6), pace.in_flight, pace.exact(0.0)) == (delay, in_flight, exact)
