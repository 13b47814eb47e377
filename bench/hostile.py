"""Hostile-site benchmark (not a test): each trap of issue 11 at full size.

Runs ``sitemap-crawler crawl`` (state store on, as a scheduled run would)
against the trap server of the tests on 127.0.0.1 and prints, per case, the
exit status, wall time, the crawl's peak RSS, the sizes of the report and
the state store, and how many requests the trap received.

    python bench/hostile.py [--only NAME]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.run import BIN, WORK, run_measured  # noqa: E402
from tests.traps import TrapHandler, TrapServer, robots_text  # noqa: E402


def _seed_robots(handler: TrapHandler) -> tuple[int, dict[str, str], bytes]:
    port = handler.server.port
    lines = "".join(f"Sitemap: http://127.0.0.1:{port}/sm/{i}.xml\n" for i in range(20))
    return 200, {"Content-Type": "text/plain"}, f"User-agent: *\nAllow: /\n{lines}".encode()


_HUGE_ROBOTS = "User-agent: *\n" + "".join(f"Disallow: /rule-{i}/x\n" for i in range(600_000))
#: name -> (server factory, start path, extra options)
CASES: dict[str, tuple[Callable[[], TrapServer], str, tuple[str, ...]]] = {
    "link farm (10,000 new links a page)": (lambda: TrapServer(farm_links=10_000), "/farm/0", ("--max-pages", "2000")),
    "20 seed sitemaps x 50,000 URLs": (lambda: TrapServer(_seed_robots), "/", ("--max-pages", "2000")),
    "10 MB robots.txt (600,000 rules)": (lambda: TrapServer(robots_text(_HUGE_ROBOTS)), "/", ()),
    "fresh jsessionid and sid on every link": (TrapServer, "/sess/start", ()),
    "endless redirect chain": (TrapServer, "/rc/0", ()),
    "1,000 image URLs of 2,000 apostrophes": (
        lambda: TrapServer(image_url_length=2000),
        "/big-images.html",
        ("--max-bytes-per-file", "10485760"),
    ),
    "gzip bomb page (40 MB of zeros)": (TrapServer, "/bomb.html", ()),
}


def run_case(name: str) -> None:
    factory, path, options = CASES[name]
    server = factory().start()
    out = WORK / "hostile" / "out"
    shutil.rmtree(out.parent, ignore_errors=True)
    out.parent.mkdir(parents=True)
    command = [str(BIN / "sitemap-crawler"), "crawl", server.url(path), "--out", str(out), "-q", "--delay", "0"]
    try:
        elapsed, rss, _ = run_measured([*command, *options], timeout=1200, check=False)
        status = "published" if (out / "sitemap.xml").exists() else "nothing"
    finally:
        server.stop()
    report = out.parent / "out.crawl-report.jsonl"
    state = out.parent / "out.state.sqlite"
    sizes = [p.stat().st_size / 1e6 if p.exists() else 0.0 for p in (report, state)]
    print(
        f"{name:40} {status:10.10} {elapsed:6.1f} s  peak RSS {rss:4.0f} MB  report {sizes[0]:5.1f} MB"
        f"  state {sizes[1]:5.1f} MB  {len(server.requested()):>6} requests",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(CASES))
    args = parser.parse_args()
    for name in [args.only] if args.only else CASES:
        run_case(name)
    print("targets: peak RSS <= 300 MB, report and state store a few MB, every crawl ends by itself")


if __name__ == "__main__":
    main()
