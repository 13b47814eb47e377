"""Hostile-site benchmark (not a test): each trap of issue 11 at full size.

Runs ``sitemap-crawler crawl`` (state store on, as a scheduled run would)
against the trap server of the tests on 127.0.0.1 and prints, per case, the
exit status, wall and CPU time, the crawl's peak RSS, the sizes of the
report and the state store, and how many requests the trap received.

Two comparisons are printed as ratios in the same run: a 200-page site
behind a 500 KiB robots.txt (RFC 9309's cap, read to its end) against the
same site behind a small robots.txt with the same rules, which is what
matching costs; and, with ``--before DIR``, each case run again on the code
in DIR (another checkout, e.g. ``git archive HEAD | tar -x -C DIR``), as
after/before. The figures depend on the machine and its load: compare the
ratios, each measured under the same conditions.

    python bench/hostile.py [--only NAME] [--before DIR] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.measure import measure  # noqa: E402
from bench.run import BIN, WORK  # noqa: E402
from tests.traps import RING_RULES, TrapHandler, TrapServer, big_robots, robots_text  # noqa: E402


def _seed_robots(handler: TrapHandler) -> tuple[int, dict[str, str], bytes]:
    port = handler.server.port
    lines = "".join(f"Sitemap: http://127.0.0.1:{port}/sm/{i}.xml\n" for i in range(20))
    return 200, {"Content-Type": "text/plain"}, f"User-agent: *\nAllow: /\n{lines}".encode()


_HUGE_ROBOTS = "User-agent: *\n" + "".join(f"Disallow: /rule-{i}/x\n" for i in range(600_000))
FARM = "link farm (10,000 new links a page)"
SMALL_ROBOTS = "200 pages, small robots.txt"
BIG_ROBOTS = "200 pages, 500 KiB robots.txt, same rules"
#: name -> (server factory, start path, extra options)
CASES: dict[str, tuple[Callable[[], TrapServer], str, tuple[str, ...]]] = {
    FARM: (lambda: TrapServer(farm_links=10_000), "/farm/0", ("--max-pages", "2000")),
    "20 seed sitemaps x 50,000 URLs": (lambda: TrapServer(_seed_robots), "/", ("--max-pages", "2000")),
    "10 MB robots.txt (600,000 rules)": (lambda: TrapServer(robots_text(_HUGE_ROBOTS)), "/", ()),
    SMALL_ROBOTS: (lambda: TrapServer(robots_text(f"User-agent: *\n{RING_RULES}")), "/ring/0", ()),
    BIG_ROBOTS: (lambda: TrapServer(robots_text(big_robots(RING_RULES))), "/ring/0", ()),
    "fresh jsessionid and sid on every link": (TrapServer, "/sess/start", ()),
    "endless redirect chain": (TrapServer, "/rc/0", ()),
    "1,000 image URLs of 2,000 apostrophes": (
        lambda: TrapServer(image_url_length=2000),
        "/big-images.html",
        ("--max-bytes-per-file", "10485760"),
    ),
    "gzip bomb page (40 MB of zeros)": (TrapServer, "/bomb.html", ()),
}


@dataclass(frozen=True)
class Figures:
    status: str
    seconds: float
    cpu: float
    rss_mb: float
    report_mb: float
    state_mb: float
    requests: int

    def line(self) -> str:
        return (
            f"{self.status:10.10} {self.seconds:6.1f} s ({self.cpu:5.1f} s CPU)  peak RSS {self.rss_mb:4.0f} MB"
            f"  report {self.report_mb:5.1f} MB  state {self.state_mb:5.1f} MB  {self.requests:>6} requests"
        )


def run_case(name: str, code: Path | None, timeout: float) -> Figures:
    """One crawl of case *name*, with the code in *code* first on the path (``None``: this checkout's)."""
    factory, path, options = CASES[name]
    server = factory().start()
    out = WORK / "hostile" / "out"
    shutil.rmtree(out.parent, ignore_errors=True)
    out.parent.mkdir(parents=True)
    # env execs the crawler in the same process, so its peak RSS and CPU are the crawl's.
    command = ["env", f"PYTHONPATH={code}"] if code is not None else []
    command += [str(BIN / "sitemap-crawler"), "crawl", server.url(path), "--out", str(out), "-q", "--delay", "0"]
    try:
        measured = measure([*command, *options], timeout=timeout)
        if measured.seconds > timeout:
            status = f"killed {timeout:.0f}s"
        else:
            status = "published" if (out / "sitemap.xml").exists() else f"exit {measured.code}"
    finally:
        server.stop()
    report, state = (_megabytes(out.parent / name) for name in ("out.crawl-report.jsonl", "out.state.sqlite"))
    return Figures(status, measured.seconds, measured.cpu, measured.rss_mb, report, state, len(server.requested()))


def _megabytes(path: Path) -> float:
    return path.stat().st_size / 1e6 if path.exists() else 0.0


def ratio(after: float, before: float) -> str:
    return f"{after / before:.2f}x" if before > 0 else "n/a"


def ratios(label: str, of: Figures, to: Figures) -> str:
    return (
        f"{label}: time {ratio(of.seconds, to.seconds)}, CPU {ratio(of.cpu, to.cpu)},"
        f" peak RSS {ratio(of.rss_mb, to.rss_mb)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(CASES), action="append", help="this case only (repeatable)")
    parser.add_argument("--before", type=Path, metavar="DIR", help="also run each case on the code in DIR")
    parser.add_argument("--timeout", type=float, default=900.0, help="stop a crawl after this many seconds")
    args = parser.parse_args()
    if args.before is not None and not (args.before / "crawler" / "__init__.py").is_file():
        parser.error(f"--before: {args.before} holds no checkout of sitemap-crawler")
    runs: dict[str, dict[str, Figures]] = {"before": {}, "after": {}}
    for name in args.only or CASES:
        if args.before is not None:
            before = runs["before"][name] = run_case(name, args.before.resolve(), args.timeout)
            print(f"{name:44} before {before.line()}", flush=True)
        after = runs["after"][name] = run_case(name, None, args.timeout)
        print(f"{name:44} {'after  ' if args.before else ''}{after.line()}", flush=True)
        if args.before is not None:
            print(f"{'':44} {ratios('after/before', after, before)}", flush=True)
    for when, figures in runs.items():
        if SMALL_ROBOTS in figures and BIG_ROBOTS in figures:
            label = f"500 KiB robots.txt / small one{f' ({when})' if args.before else ''}"
            print(ratios(label, figures[BIG_ROBOTS], figures[SMALL_ROBOTS]))
    print("targets: peak RSS <= 300 MB, report and state store a few MB, every crawl ends by itself;")
    print("         the link farm (--max-pages 2000) in under 60 s")


if __name__ == "__main__":
    main()
