"""Benchmark (not a test): ``crawl`` and ``audit`` side by side on the test suite's real WordPress
(``tests/realapps/wordpress.py``: Debian's WordPress 6.1, MariaDB, php-fpm and nginx, all private, on
127.0.0.1), with pretty permalinks, then plain ones.

Why: planted sites hide what a real CMS costs. Two targets are about such a site: the audit within
1.5x the crawl's wall time (it was 5x while the audit profile had a fixed 0.1 s delay), and at least
half of the responses a crawl costs the site listed or listable (listed, or left out as a duplicate or
a canonicalised copy; it was 21% when feeds and JSON alternates were fetched). The denominator is what
the site's own nginx access log shows for the crawl, so requests the report does not explain count too.

Crawl and audit take turns (``--repeat`` each), so the machine's load falls on both alike; the ratio
is of the medians, the fastest of each is printed beside. The install is built once (minutes) and
cached under ``bench/.work/realapps``; each run starts on a copy of its database.

    python bench/real_apps.py [--repeat 3] [--pretty-only] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pytest  # noqa: E402  (the fixture reports a missing package with pytest.skip)

from bench.measure import Measured, measure  # noqa: E402
from tests.realapps.wordpress import WordPress, wordpress_site  # noqa: E402

WORK = HERE / ".work"
BIN = Path(sys.executable).parent
#: The audit writes every loc on this origin; it must differ from the crawled (staging) one.
PRODUCTION = "https://www.example.com"
#: Left out, but a copy of a page that is (or could be) listed: a fetch that served the sitemap.
LISTABLE = {"duplicate", "canonicalised"}
#: One crawl or audit of this ~200-page site takes seconds; past this it is stopped and reported.
RUN_TIMEOUT = 600.0
STRUCTURES = {"pretty": "/%postname%/", "plain": ""}
REQUEST = re.compile(r'"(?P<method>[A-Z]+) (?P<target>\S+) HTTP/[\d.]+" (?P<status>\d{3}) ')


@dataclass(frozen=True)
class Run:
    """One command's run: what ``measure`` saw, its report's lines by outcome and reason, and the
    requests nginx logged while it ran (method, target, status)."""

    measured: Measured
    report: Counter[str]
    requests: list[tuple[str, str, int]]

    @property
    def listable(self) -> int:
        return sum(n for key, n in self.report.items() if key == "listed" or key.split(" ")[-1] in LISTABLE)


def fresh(out: Path) -> None:
    """No output of an earlier run: the folder and its siblings (report, changes, state)."""
    shutil.rmtree(out, ignore_errors=True)
    for leftover in out.parent.glob(f"{out.name}.*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink()


def command(kind: str, url: str, out: Path) -> list[str]:
    """The issue's two commands, defaults otherwise."""
    tool = str(BIN / "sitemap-crawler")
    if kind == "crawl":
        return [tool, "crawl", url, "--out", str(out), "--no-state", "-q"]
    return [tool, "audit", url, "--production-url", PRODUCTION, "--out", str(out), "-q"]


def run_once(kind: str, site: WordPress, out: Path) -> Run:
    """Run *kind* against *site*; the access log is read from where it stood before the run."""
    fresh(out)
    log = site.run / "nginx-access.log"
    start = log.stat().st_size if log.exists() else 0
    measured = measure(command(kind, site.origin, out), timeout=RUN_TIMEOUT)
    with log.open("rb") as handle:  # nginx writes each line when the response is sent: all there now
        handle.seek(start)
        lines = handle.read().decode("utf-8", "replace").splitlines()
    requests = [(m["method"], m["target"], int(m["status"])) for m in map(REQUEST.search, lines) if m is not None]
    report: Counter[str] = Counter()
    report_path = out.parent / f"{out.name}.crawl-report.jsonl"
    if report_path.exists():
        for line in report_path.open(encoding="utf-8"):
            entry = json.loads(line)
            outcome = entry["outcome"]
            report[outcome if outcome == "listed" else f"{outcome} {entry.get('reason')}"] += 1
    return Run(measured, report, requests)


def kind_of(target: str) -> str:
    """What a request asked WordPress for, to show where a crawl's requests go."""
    path, _, query = target.partition("?")
    if path == "/robots.txt" or re.search(r"(^|&)robots=", query):
        return "robots.txt"
    if ("sitemap" in path and path.endswith((".xml", ".xsl"))) or re.search(r"(^|&)sitemap", query):
        return "sitemap"
    if "/feed" in path or re.search(r"(^|&)feed=", query):
        return "feed"
    if path.startswith("/wp-json") or "rest_route=" in query or "oembed" in target:
        return "json/oembed"
    if path.startswith(("/wp-content/", "/wp-includes/")):
        return "file"
    if path.startswith(("/wp-admin", "/wp-login", "/xmlrpc", "/wp-comments-post")):
        return "admin/login"
    return "page"


def seconds(runs: list[Run]) -> tuple[float, float]:
    times = [run.measured.seconds for run in runs]
    return statistics.median(times), min(times)


def by_kind(requests: list[tuple[str, str, int]]) -> str:
    kinds = Counter(f"{kind_of(target)} {status}" for _, target, status in requests)
    return ", ".join(f"{key} {count}" for key, count in sorted(kinds.items(), key=lambda item: (-item[1], item[0])))


def audit_extra(crawl: Run, audit: Run) -> None:
    """What the audit asked the site for beyond the crawl: requests it costs that the crawl does not."""
    remaining = Counter((method, target) for method, target, _ in crawl.requests)
    extra = []
    for method, target, status in audit.requests:
        if remaining[method, target] > 0:
            remaining[method, target] -= 1
        else:
            extra.append((method, target, status))
    print(f"  the audit's requests beyond the crawl's ({len(extra)}): {by_kind(extra) or 'none'}")
    for method, target, status in extra[:4]:
        print(f"    e.g. {method} {target} {status}")


def describe(name: str, site: WordPress, crawls: list[Run], audits: list[Run]) -> dict[str, str]:
    """Print one structure's details; return its row of the summary table."""
    crawl_median, crawl_min = seconds(crawls)
    audit_median, audit_min = seconds(audits)
    first = crawls[0]
    print(f"\n{name} permalinks ({site.origin}):")
    for label, runs in (("crawl", crawls), ("audit", audits)):
        times = ", ".join(f"{run.measured.seconds:.2f}" for run in runs)
        cpu = statistics.median(run.measured.cpu for run in runs)
        codes = sorted({run.measured.code for run in runs})
        counts = sorted({len(run.requests) for run in runs})
        print(f"  {label}: {times} s; CPU {cpu:.2f} s (median); exit {codes}; nginx requests per run {counts}")
        for run in runs:
            if run.measured.code != 0:
                print(f"    stderr (exit {run.measured.code}): {run.measured.stderr.strip()[-600:]}")
                break
    print(f"  crawl report (first run), {sum(first.report.values())} lines:")
    for key, count in sorted(first.report.items(), key=lambda item: (-item[1], item[0])):
        mark = "  <- listable" if key == "listed" or key.split(" ")[-1] in LISTABLE else ""
        print(f"    {key:32} {count:5}{mark}")
    print(f"  nginx access log of that crawl, {len(first.requests)} requests, by kind and status:")
    print(f"    {by_kind(first.requests)}")
    audit_extra(first, audits[0])
    differs = {(run.listable, len(run.requests)) for run in crawls}
    if len(differs) > 1:
        print(f"  NOTE: the crawls differ run to run (listable, requests): {sorted(differs)}")
    share = first.listable / len(first.requests) if first.requests else 0.0
    return {
        "permalinks": name,
        "crawl median (min)": f"{crawl_median:.2f} s ({crawl_min:.2f})",
        "audit median (min)": f"{audit_median:.2f} s ({audit_min:.2f})",
        "audit/crawl median (min)": f"{audit_median / crawl_median:.2f}x ({audit_min / crawl_min:.2f}x)",
        "listable / nginx responses": f"{first.listable} / {len(first.requests)} = {share:.0%}",
    }


def table(rows: list[dict[str, str]]) -> None:
    """A Markdown table, as docs/benchmarks.md has them."""
    headers = list(rows[0])
    print("\n| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(row[header] for header in headers) + " |")


def bench(site: WordPress, name: str, repeat: int) -> dict[str, str]:
    """Crawl and audit taking turns, *repeat* times each, on the permalinks *site* has now."""
    folder = WORK / "real-apps"
    folder.mkdir(parents=True, exist_ok=True)
    crawls: list[Run] = []
    audits: list[Run] = []
    for _ in range(repeat):
        crawls.append(run_once("crawl", site, folder / "crawl-out"))
        audits.append(run_once("audit", site, folder / "audit-out"))
    return describe(name, site, crawls, audits)


def settings_diff(url: str) -> None:
    """The effective settings where the audit differs from the crawl (``config show``): where a pace
    or delay difference would show."""
    shown: list[dict[str, str]] = []
    for kind, extra in (("crawl", []), ("audit", ["--production-url", PRODUCTION])):
        done = subprocess.run(
            [str(BIN / "sitemap-crawler"), "config", "show", "--for", kind, url, *extra],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        pairs = (line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        shown.append({name.strip(): value.strip() for name, value in pairs})
    crawl, audit = shown
    print("\nsettings of the audit that differ from the crawl's (config show --for audit / crawl):")
    for name in sorted(crawl.keys() | audit.keys()):
        if crawl.get(name) != audit.get(name):
            print(f"  {name}: crawl {crawl.get(name)}; audit {audit.get(name)}")


def machine() -> str:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    cores = len(os.sched_getaffinity(0))
    return f"{platform.machine()}, nproc {cores}, load average {load}, Python {platform.python_version()}"


def _stop(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends the run like Ctrl-C: the fixture's servers are stopped by PID on the way out."""
    raise SystemExit(128 + signum)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command per structure (3)")
    parser.add_argument("--pretty-only", action="store_true", help="leave out plain permalinks")
    parser.add_argument("--cache", type=Path, default=WORK / "realapps", help="where the built install is kept")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    args.cache.mkdir(parents=True, exist_ok=True)
    tool = subprocess.run(
        [str(BIN / "sitemap-crawler"), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {tool.stdout.strip()}")
    print(f"machine at start: {machine()}")
    rows = []
    try:
        with wordpress_site(args.cache, STRUCTURES["pretty"]) as site:
            settings_diff(site.origin)
            for name, structure in STRUCTURES.items():
                if name != "pretty" and args.pretty_only:
                    continue
                site.set_permalinks(structure)
                rows.append(bench(site, name, args.repeat))
    except pytest.skip.Exception as why:  # a package missing and no root to install it
        raise SystemExit(f"WordPress cannot run here: {why}") from None
    table(rows)
    print(f"\nmachine at end: {machine()}")
    print(
        "targets: audit/crawl <= 1.5x (was 5x with the audit's fixed 0.1 s delay); listable (listed, or left"
        " out as duplicate or canonicalised) >= 50% of the responses nginx logged for the crawl (was 21%)"
    )


if __name__ == "__main__":
    main()
