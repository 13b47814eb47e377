"""Rendering benchmark (not a test): what ``--render`` costs, and whether Chromium's memory stays flat.

``crawl``: a generated site (bench/render_site.py: half app shells whose
links come from a script and JSON, half server-rendered pages with a script
of their own) served by nginx on 127.0.0.1 from a temporary folder, crawled
with ``--render never``, ``auto``, ``always`` and ``always`` with
``--render-pages 1/4/8``. Per run: pages listed, pages/s, CPU per crawled
page of the crawl process and of the browser (its descendants: Playwright's
driver and Chromium), peak RSS of both. The crawl process's own CPU is read
from /proc once it has exited and before it is reaped; what it reaped (the
browser) is the rest of its rusage.

``memory``: 500 renders in one :class:`~crawler.render.browser.Chromium`
(each page's script builds a few hundred nodes from a JSON fetch answered
from memory), the browser's RSS sampled every 25 renders, with the default
context recycling (every 500 renders) and with ``recycle_after=100``.

Touches only 127.0.0.1. On a shared machine: ``nice -n 10 python bench/render.py``.

    python bench/render.py [--pages 300] [--concurrency 16] [--only crawl|memory] [--renders 500] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.measure import TICKS  # noqa: E402
from bench.render_site import LOCATIONS, build_render_site  # noqa: E402
from bench.run import crawl_command, start_nginx  # noqa: E402
from crawler.render.browser import Bounds, Chromium, Fulfilment  # noqa: E402
from crawler.render.guard import BrowserRequest  # noqa: E402
from crawler.render.memory import descendants_usage  # noqa: E402

MB = 1024 * 1024
_SAMPLE_EVERY = 0.5  # seconds between two looks at the crawl's memory (a walk of /proc costs CPU too)


@dataclass(frozen=True)
class Run:
    label: str
    listed: int
    crawled: int  # HTML pages fetched (report lines with a status)
    rendered: int
    skipped: int
    seconds: float
    crawl_cpu: float
    browser_cpu: float
    crawl_rss: float  # MB, peak
    browser_rss: float  # MB, peak of the sum over the browser's processes
    browser_pss: float  # MB, peak of the same processes' proportional set size

    def line(self) -> str:
        per = max(self.crawled, 1)
        return (
            f"{self.label:26} {self.listed:4} listed, {self.crawled:4} crawled ({self.rendered} rendered,"
            f" {self.skipped} skipped) in {self.seconds:5.1f} s = {self.crawled / self.seconds:5.1f} pages/s;"
            f" CPU/page: crawl {self.crawl_cpu / per * 1000:4.0f} ms + browser {self.browser_cpu / per * 1000:4.0f} ms"
            f" = {(self.crawl_cpu + self.browser_cpu) / per * 1000:4.0f} ms;"
            f" peak RSS: crawl {self.crawl_rss:3.0f} MB, browser {self.browser_rss:4.0f} MB"
            f" (PSS {self.browser_pss:3.0f} MB)"
        )


def _stat_cpu(pid: int) -> tuple[float, float]:
    """(own, reaped children's) CPU seconds of *pid*, which may be a zombie not yet reaped."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS, (int(fields[13]) + int(fields[14])) / TICKS


def _peak_rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _listed(out: Path) -> int:
    count = 0
    for shard in out.glob("sitemap-*.xml*"):
        data = shard.read_bytes()
        count += len(re.findall(rb"<loc>", gzip.decompress(data) if shard.name.endswith(".gz") else data))
    return count


def crawl_once(label: str, url: str, work: Path, concurrency: int, *extra: str) -> Run:
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    report = work / "report.jsonl"
    report.unlink(missing_ok=True)
    command = crawl_command(url, out, concurrency, "--no-state", "--report", str(report), *extra)
    errors = (work / "crawl.err").open("w")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
    crawl_rss = browser_rss = browser_pss = 0.0
    while os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:  # until it exits
        try:
            crawl_rss = _peak_rss(process.pid)
            usage = descendants_usage(process.pid)
            browser_rss, browser_pss = max(browser_rss, usage.rss / MB), max(browser_pss, usage.pss / MB)
        except OSError:
            pass  # exiting
        time.sleep(_SAMPLE_EVERY)
    own, reaped = _stat_cpu(process.pid)  # a zombie still has its counters
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    errors.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        print((work / "crawl.err").read_text()[-3000:], file=sys.stderr)
        raise SystemExit(f"the {label} crawl failed with exit status {process.returncode}")
    total = usage.ru_utime + usage.ru_stime
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    pages = [line for line in lines if line.get("outcome") != "warning" and line.get("status") is not None]
    renders = [line["render"] for line in pages if isinstance(line.get("render"), dict)]
    return Run(
        label=label,
        listed=_listed(out),
        crawled=len(pages),
        rendered=sum(1 for render in renders if render.get("rendered")),
        skipped=sum(1 for render in renders if not render.get("rendered")),
        seconds=seconds,
        crawl_cpu=own,
        browser_cpu=max(total - own, reaped),
        crawl_rss=crawl_rss,
        browser_rss=browser_rss,
        browser_pss=browser_pss,
    )


def crawl_bench(pages: int, concurrency: int, quick: bool) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise SystemExit("nginx is needed: apt-get install nginx-light (or run `make bench-tools`)")
    with tempfile.TemporaryDirectory(prefix="render-bench-") as folder:
        work = Path(folder)
        work.chmod(0o755)  # nginx's worker may run as another user
        apps, ssr = build_render_site(work / "site", pages)
        print(f"site: {apps} app routes, {ssr} server-rendered pages (every tenth without a script), a home page")
        log = work / "access.log"
        server, port = start_nginx(work / "site", access_log=log, locations=LOCATIONS)
        try:
            url = f"http://127.0.0.1:{port}/"
            runs = [("never", ()), ("auto", ("--render", "auto")), ("always", ("--render", "always"))]
            if not quick:
                runs += [
                    (f"always --render-pages {n}", ("--render", "always", "--render-pages", str(n))) for n in (1, 8)
                ]
            plain: Run | None = None
            for label, extra in runs:
                log.write_text("")
                run = crawl_once(label, url, work, concurrency, *extra)
                print(run.line(), flush=True)
                print(f"{'':26} {_requests(log)}", flush=True)
                if plain is None:
                    plain = run
                elif run.rendered:
                    added = (run.crawl_cpu + run.browser_cpu - plain.crawl_cpu - plain.browser_cpu) / run.rendered
                    print(f"{'':26} rendering cost {added * 1000:.0f} ms CPU a rendered page (over never)")
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(
        "reference (issue 25, this machine): plain fetch 9 ms CPU/page ~34 pages/s;"
        " rendering ~250 ms CPU/page, 2-3 pages/s; aim: within 1.5x (<= 375 ms a rendered page)"
    )


def _requests(log: Path) -> str:
    """What the site served in the last run, by first path segment (pages, app routes, scripts, data)."""
    kinds: dict[str, int] = {}
    for line in log.read_text().splitlines():
        path = line.split('"')[1].split()[1] if '"' in line else "?"
        kind = path.split("/")[1].split(".")[0] or "home"
        kinds[kind] = kinds.get(kind, 0) + 1
    return "site served: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))


# -- memory: 500 renders in one browser ---------------------------------------------------------

ORIGIN = "http://bench.render.invalid/"
PAGE = (
    b'<!DOCTYPE html><html><head><title>memory</title></head><body><div id="root"></div>'
    b'<script src="/static/build.js"></script></body></html>'
)
BUILD_JS = b"""fetch("/api/items.json").then(function (r) { return r.json(); }).then(function (items) {
  var root = document.getElementById("root");
  items.forEach(function (item) {
    var section = document.createElement("section");
    var h = document.createElement("h3"); h.textContent = item.title + " " + location.pathname;
    var p = document.createElement("p"); p.textContent = item.text;
    var a = document.createElement("a"); a.href = item.href; a.textContent = "more";
    section.appendChild(h); section.appendChild(p); section.appendChild(a);
    root.appendChild(section);
  });
});
"""
ITEMS = json.dumps(
    [{"title": f"item {i}", "text": "words " * 40, "href": f"/item/{i}"} for i in range(100)]
).encode()  # 100 sections of 4 elements (and their text): 400 nodes a page
ASSETS = {
    f"{ORIGIN}static/build.js": Fulfilment(200, {"content-type": "application/javascript"}, BUILD_JS),
    f"{ORIGIN}api/items.json": Fulfilment(200, {"content-type": "application/json"}, ITEMS),
}


async def _from_memory(wanted: BrowserRequest) -> Fulfilment:
    return ASSETS.get(wanted.url) or Fulfilment(404, {"content-type": "text/plain"}, b"not here")


async def memory_series(
    executable: str, renders: int, recycle_after: int, parallel: int
) -> list[tuple[int, float, float, int]]:
    """(renders done, browser RSS and PSS in MB, processes) every 25 renders, *parallel* at a time."""
    bounds = Bounds.from_budget(1.0, 300)
    browser = Chromium(executable, "sitemap-crawler-bench", bounds, {ORIGIN}, recycle_after=recycle_after)
    slots = asyncio.Semaphore(parallel)
    samples: list[tuple[int, float, float, int]] = []

    async def one(number: int) -> None:
        async with slots:
            rendered = await browser.render(f"{ORIGIN}page/{number}", {"content-type": "text/html"}, PAGE, _from_memory)
        if rendered.html is None or rendered.html.count("<section>") != 100:
            raise SystemExit(f"render {number} failed: {rendered.error}")

    try:
        started = time.perf_counter()
        for done in range(0, renders, 25):
            await asyncio.gather(*(one(n) for n in range(done, min(done + 25, renders))))
            usage = await asyncio.to_thread(descendants_usage)
            samples.append((min(done + 25, renders), usage.rss / MB, usage.pss / MB, usage.processes))
        seconds = time.perf_counter() - started
    finally:
        await browser.close()
    print(f"  {renders} renders in {seconds:.1f} s ({renders / seconds:.1f}/s), {browser.launches} browser launch(es)")
    return samples


def memory_bench(renders: int, executable: str) -> None:
    for recycle in (500, 100):
        print(f"memory: {renders} renders, context recycled every {recycle}, 4 at a time", flush=True)
        samples = asyncio.run(memory_series(executable, renders, recycle, 4))
        print("  after n renders: RSS/PSS MB (processes): ")
        for row in range(0, len(samples), 5):
            print("   " + ", ".join(f"{n}: {rss:.0f}/{pss:.0f} ({k})" for n, rss, pss, k in samples[row : row + 5]))
        for name, column in (("RSS", 1), ("PSS", 2)):
            plateau = sorted(sample[column] for sample in samples[1:5])  # renders 50-125, after the warm-up
            first = plateau[len(plateau) // 2] if plateau else samples[0][column]
            tail = sorted(sample[column] for sample in samples[-4:])
            last = tail[len(tail) // 2]
            print(f"  {name} last / first plateau (medians of 4): {last:.0f} / {first:.0f} MB = {last / first:.2f}")
    print("target: flat (the issue's reused page grew 475 -> 930 MB, 1.96, over 500 renders)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--renders", type=int, default=500)
    parser.add_argument("--only", choices=("crawl", "memory"))
    parser.add_argument("--quick", action="store_true", help="60 pages, never/auto/always only, 150 renders")
    parser.add_argument("--chromium", default=shutil.which("chromium-headless-shell") or "")
    args = parser.parse_args()
    if not args.chromium:
        raise SystemExit("chromium-headless-shell is needed: apt-get install chromium-headless-shell")
    pages, renders = (60, 150) if args.quick else (args.pages, args.renders)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},"
        f" niceness {os.nice(0)}"
    )
    if args.only in (None, "crawl"):
        crawl_bench(pages, args.concurrency, args.quick)
    if args.only in (None, "memory"):
        memory_bench(renders, args.chromium)


if __name__ == "__main__":
    main()
