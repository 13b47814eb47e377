"""Benchmark (not a test): what ``--render auto`` costs and finds on real builds, against ``never``.

Three sites, each served by a private nginx on 127.0.0.1:

- the test suite's Docusaurus 3 build and MkDocs Material build (``tests/realapps``: cached under
  ``.pytest_cache/d/realapps``, built there with the tests' own functions when absent), with nginx's
  default configuration, as the tests serve them;
- a Vite + React + react-router single-page app (:data:`PAGES`, 21 routes, nested layouts, one
  route linked only from another route's component), built with npm once per :data:`SPA_VERSION`
  and cached under ``.pytest_cache/d/bench-spa``, served with the usual SPA fallback
  (``try_files $uri /index.html``).

Each site is crawled by the CLI (``crawl ORIGIN/ --out DIR --no-state -q --render MODE``, the
default ``--render-pages 4``) with ``never`` and ``auto`` (and ``always`` on the app), ``--repeat``
times each, the order alternating; medians are printed. Per run: wall seconds; CPU (the CLI and every
descendant it reaped); the peak memory of the whole process tree (the CLI, Playwright's driver and
Chromium's processes): the sum of their RSS read from /proc/PID/statm every 0.1 s in a thread, and
the sum of their PSS from /proc/PID/smaps_rollup every 0.5 s (Chromium's processes share pages,
which the RSS sum counts once per process); the HTML pages rendered of those read (the report
lines' ``render`` objects); the listed set (the sitemap files).

Targets (issue 36, item 6): under auto, at most 10% of the HTML pages rendered on Docusaurus and
MkDocs, the same listed set as never, wall and peak memory within 1.5x of never, peak memory under
1.5 GB; on the app, auto and always list every route, and auto costs within 1.5x of always (never
reads the shell alone and starts no browser there, so auto/never is printed but is no target). No
request of any crawl has ``q=`` in its query.

    python bench/render_auto.py [--repeat 3] [--only docusaurus|mkdocs|spa]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402  (the build helpers report a missing tool with pytest.skip)

from bench.real_apps import _stop, fresh, machine, table  # noqa: E402
from tests.realapps.docusaurus import _npm_env, docusaurus_build  # noqa: E402
from tests.realapps.mkdocs import mkdocs_build  # noqa: E402
from tests.realapps.nginx import Nginx, NginxRequest  # noqa: E402
from tests.realapps.static import report_lines, run_build_step, served, sitemap_entries  # noqa: E402

BIN = Path(sys.executable).parent
CACHE = ROOT / ".pytest_cache" / "d"  # where pytest keeps its cache.mkdir() folders
MB = 1024 * 1024
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
SAMPLE_EVERY = 0.1  # seconds between two sums of the tree's RSS
PSS_EVERY = 5  # PSS (smaps_rollup, dearer to read) every this many samples
RUN_TIMEOUT = 600.0  # one crawl of these small sites takes seconds; past this it is stopped
GB = 1024.0  # MB

# -- the single-page app --------------------------------------------------------------------------

#: Exact versions, so every machine builds the same app.
SPA_PACKAGES = {
    "react": "18.3.1",
    "react-dom": "18.3.1",
    "react-router-dom": "6.30.1",
    "vite": "6.3.5",
    "@vitejs/plugin-react": "4.5.2",
}
#: path -> (title, text, links in the page's body); sections' layouts add their own menus.
PAGES: dict[str, tuple[str, str, list[str]]] = {
    "/": ("Home", "Welcome to the harbour almanac, a guide to tides and lights.", ["/about", "/pricing"]),
    "/about": ("About us", "Three keepers wrote this almanac on a rainy island.", ["/team"]),
    "/pricing": ("Pricing", "The almanac costs nothing; printed charts cost four shillings.", ["/contact"]),
    "/contact": ("Contact", "Write to the keepers by carrier pigeon or by post.", []),
    "/team": ("The team", "Ada reads the tides, Bo trims the lamps, Cy draws the charts.", ["/careers"]),
    "/faq": ("Questions", "Why is the lamp red? Because the rocks are near.", []),
    "/press": ("Press", "The Gazette called the almanac indispensable in spring.", []),
    "/blog": ("Blog", "Notes from the lighthouse, written at the turn of each tide.", []),
    "/blog/hello-world": ("Hello, world", "The first post: the lamp was lit at dusk.", ["/docs/install"]),
    "/blog/release-notes": ("Release notes", "Version two adds the neap tides of the northern coast.", []),
    "/blog/roadmap": ("Roadmap", "Next winter: fog signals and a table of moon phases.", []),
    "/docs": ("Documentation", "How to read the almanac, from the first table to the last.", []),
    "/docs/install": ("Installing", "Unfold the chart and pin it above the chart table.", []),
    "/docs/configure": ("Configuring", "Set the port's latitude and the almanac does the rest.", []),
    "/docs/guides/deploy": (
        "Deploying",
        "Carry the almanac aboard in a waxed canvas bag.",
        ["/docs/guides/monitoring"],
    ),
    "/docs/guides/monitoring": ("Monitoring", "Check the barometer each hour and log its reading.", []),
    "/docs/api": ("Reference", "Every symbol of the charts, from buoys to wrecks.", []),
    "/careers": (
        "Careers",
        "The island is hiring keepers for the winter season.",
        ["/careers/engineer", "/careers/designer"],
    ),
    "/careers/engineer": ("Lamp engineer", "Trim wicks, polish lenses, wind the clockwork.", []),
    "/careers/designer": ("Chart designer", "Draw coastlines in ink that survives salt spray.", []),
    "/careers/engineer/referral": ("Referral bonus", "Bring a friend who can climb stairs: a barrel of tea.", []),
}
#: Linked only from the component of /careers/engineer (and from no data above).
HIDDEN = "/careers/engineer/referral"
NAV = ["/", "/about", "/pricing", "/blog", "/docs", "/team", "/careers", "/contact"]
FOOTER = ["/faq", "/press"]

_INDEX_HTML = """<!doctype html>
<html lang="en">
  <head><meta charset="UTF-8"><meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>Harbour almanac</title></head>
  <body><div id="root"></div><script type="module" src="/src/main.jsx"></script></body>
</html>
"""
_VITE_CONFIG = """import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({ plugins: [react()], build: { outDir: "dist", emptyOutDir: true } });
"""
_MAIN_JSX = """import React, { useEffect } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter, Link, Outlet, Route, Routes } from "react-router-dom";
import { FOOTER, NAV, PAGES } from "./pages.js";

function Page({ path, children }) {
  const [title, text, links] = PAGES[path];
  useEffect(() => { document.title = `${title} | Harbour almanac`; }, [title]);
  return (
    <article>
      <h1>{title}</h1>
      <p>{text}</p>
      {links.length > 0 && (
        <ul>{links.map((to) => <li key={to}><Link to={to}>{PAGES[to][0]}</Link></li>)}</ul>
      )}
      {children}
    </article>
  );
}

function Menu({ paths }) {
  return <ul>{paths.map((to) => <li key={to}><Link to={to}>{PAGES[to][0]}</Link></li>)}</ul>;
}

function Layout() {
  return (
    <>
      <nav><Menu paths={NAV} /></nav>
      <main><Outlet /></main>
      <footer><Menu paths={FOOTER} /></footer>
    </>
  );
}

const under = (section) => Object.keys(PAGES).filter((path) => path.startsWith(section + "/"));

function DocsLayout() {
  const menu = ["/docs", ...under("/docs").filter((path) => !path.includes("monitoring"))];
  return <div><aside><Menu paths={menu} /></aside><Outlet /></div>;
}

function BlogLayout() {
  return <div><Outlet /><aside><h2>Recent posts</h2><Menu paths={under("/blog")} /></aside></div>;
}

function CareersLayout() {
  return <section><h2>Work on the island</h2><Outlet /></section>;
}

function Engineer() {
  return <Page path="/careers/engineer"><p>Know someone? <Link to="%(hidden)s">Referral bonus</Link></p></Page>;
}

function NotFound() {
  useEffect(() => { document.title = "Not found | Harbour almanac"; }, []);
  return <p>No such page.</p>;
}

const SECTIONS = { "/docs": DocsLayout, "/blog": BlogLayout, "/careers": CareersLayout };
const TOP = Object.keys(PAGES).filter((path) => !path.slice(1).includes("/") && !(path in SECTIONS));

function App() {
  return (
    <BrowserRouter>
      <Routes>
        <Route element={<Layout />}>
          {TOP.map((path) => <Route key={path} path={path} element={<Page path={path} />} />)}
          {Object.entries(SECTIONS).map(([section, Section]) => (
            <Route key={section} path={section} element={<Section />}>
              <Route index element={<Page path={section} />} />
              {under(section).map((path) => (
                <Route
                  key={path}
                  path={path.slice(section.length + 1)}
                  element={path === "/careers/engineer" ? <Engineer /> : <Page path={path} />}
                />
              ))}
            </Route>
          ))}
          <Route path="*" element={<NotFound />} />
        </Route>
      </Routes>
    </BrowserRouter>
  );
}

createRoot(document.getElementById("root")).render(<App />);
"""


def _spa_sources() -> dict[str, str]:
    """Every file of the app, by path in its folder."""
    package = {
        "name": "bench-spa",
        "private": True,
        "version": "1.0.0",
        "type": "module",
        "dependencies": {name: version for name, version in SPA_PACKAGES.items() if name.startswith("react")},
        "devDependencies": {name: version for name, version in SPA_PACKAGES.items() if not name.startswith("react")},
    }
    pages = (
        f"export const PAGES = {json.dumps(PAGES, indent=1)};\n"
        f"export const NAV = {json.dumps(NAV)};\nexport const FOOTER = {json.dumps(FOOTER)};\n"
    )
    return {
        "package.json": json.dumps(package, indent=2) + "\n",
        "index.html": _INDEX_HTML,
        "vite.config.js": _VITE_CONFIG,
        "src/main.jsx": _MAIN_JSX % {"hidden": HIDDEN},
        "src/pages.js": pages,
    }


#: The build's cache key: the sources and the pinned versions.
SPA_VERSION = hashlib.sha256(json.dumps(_spa_sources(), sort_keys=True).encode()).hexdigest()[:16]


def spa_build() -> Path:
    """The app's dist folder, from the cache when built from these very sources, else built now."""
    base = CACHE / "bench-spa"
    dist = base / f"dist-{SPA_VERSION}"
    stamp = dist / ".bench-spa-version"
    if stamp.is_file() and stamp.read_text("utf-8") == SPA_VERSION:
        return dist
    app = base / "app"  # node_modules kept between builds: a new source only rebuilds
    for name, text in _spa_sources().items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_text(text, "utf-8")
    env = _npm_env()
    print(f"building the app (vite {SPA_PACKAGES['vite']}, react {SPA_PACKAGES['react']})...", flush=True)
    run_build_step(["npm", "install", "--no-audit", "--no-fund", "--save-exact"], app, env, timeout=900)
    run_build_step(["npx", "--no-install", "vite", "build"], app, env)
    staging = base / f".dist.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(app / "dist", staging)
    (staging / ".bench-spa-version").write_text(SPA_VERSION, "utf-8")
    for old in base.glob("dist-*"):
        shutil.rmtree(old, ignore_errors=True)
    staging.rename(dist)
    return dist


class SpaNginx(Nginx):
    """The tests' private nginx with the fallback every single-page app is deployed with."""

    def config(self) -> str:
        text = super().config()
        index = "        index index.html;\n"
        assert text.count(index) == 1, "tests/realapps/nginx.py's config changed"
        return text.replace(index, index + "        location / { try_files $uri /index.html; }\n")


@dataclass(frozen=True)
class Site:
    name: str
    origin: str
    server: Nginx
    modes: tuple[str, ...]
    routes: frozenset[str] = frozenset()  # the app's own route list (for recall); empty for the others
    target_renders: bool = False  # whether the at-most-10%-rendered target applies


@contextmanager
def spa_served(dist: Path, folder: Path) -> Iterator[Nginx]:
    server = SpaNginx(dist, folder / "nginx")
    try:
        yield server.start()
    finally:
        server.stop()


class _Cache:
    """What ``cached_build`` needs of pytest's config: ``cache.mkdir(name)``, the folder pytest uses."""

    def mkdir(self, name: str) -> Path:
        folder = CACHE / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder


class _Config:
    cache = _Cache()


# -- one crawl ------------------------------------------------------------------------------------


def _tree(root: int) -> list[int]:
    """*root* and every live descendant of it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError):
        return 0


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class PeakMemory(threading.Thread):
    """The peak, over the life of process *pid*, of its tree's summed RSS (and summed PSS)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.done = threading.Event()
        self.rss = 0
        self.pss = 0
        self.processes = 0

    def run(self) -> None:
        samples = 0
        while True:  # until the crawl ends (set by the caller, itself bounded by RUN_TIMEOUT)
            pids = _tree(self.pid)
            self.rss = max(self.rss, sum(_rss(pid) for pid in pids))
            self.processes = max(self.processes, len(pids))
            if samples % PSS_EVERY == 0:
                self.pss = max(self.pss, sum(_pss(pid) for pid in pids))
            samples += 1
            if self.done.wait(SAMPLE_EVERY):
                return


@dataclass
class Run:
    site: str
    mode: str
    seconds: float
    cpu: float
    rss_mb: float
    pss_mb: float
    processes: int
    code: int
    html: int  # HTML pages read: report lines with a "render" object (never: 200 pages)
    rendered: int
    listed: frozenset[str]
    renders: list[dict[str, object]] = field(default_factory=list)  # each HTML page's line
    requests: list[NginxRequest] = field(default_factory=list)
    stderr: str = ""


def crawl(site: Site, mode: str, work: Path) -> Run:
    """One CLI crawl of *site* with ``--render mode``, measured."""
    out = work / f"out-{site.name}-{mode}"
    fresh(out)
    before = len(site.server.requests())
    command = [
        str(BIN / "sitemap-crawler"), "crawl", f"{site.origin}/", "--out", str(out), "--no-state", "-q",
        "--render", mode, "--render-pages", "4",
    ]  # fmt: skip
    err_path = work / "crawl.err"
    with err_path.open("w") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        sampler = PeakMemory(process.pid)
        sampler.start()
        deadline = started + RUN_TIMEOUT
        while True:  # bounded by RUN_TIMEOUT
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        sampler.done.set()
        sampler.join(timeout=10)
    process.returncode = os.waitstatus_to_exitcode(status)
    lines = report_lines(out) if (out.parent / f"{out.name}.crawl-report.jsonl").exists() else []
    pages = [line for line in lines if line["outcome"] != "warning"]
    renders = [line for line in pages if isinstance(line.get("render"), dict)]
    html = len(renders) if mode != "never" else sum(1 for line in pages if line.get("status") == 200)
    rendered = sum(1 for line in renders if cast("dict[str, object]", line["render"]).get("rendered"))
    listed = frozenset(sitemap_entries(out)) if out.is_dir() else frozenset()
    return Run(
        site=site.name,
        mode=mode,
        seconds=seconds,
        cpu=usage.ru_utime + usage.ru_stime,
        rss_mb=sampler.rss / MB,
        pss_mb=sampler.pss / MB,
        processes=sampler.processes,
        code=process.returncode,
        html=html,
        rendered=rendered,
        listed=listed,
        renders=renders,
        requests=site.server.requests()[before:],
        stderr=err_path.read_text("utf-8", "replace"),
    )


def bench_site(site: Site, repeat: int, work: Path) -> list[Run]:
    """Every mode *repeat* times, the order alternating (never, auto, ... then ..., auto, never)."""
    runs: list[Run] = []
    for turn in range(repeat):
        order = site.modes if turn % 2 == 0 else tuple(reversed(site.modes))
        for mode in order:
            run = crawl(site, mode, work)
            runs.append(run)
            print(
                f"  {site.name:10} {mode:6} #{turn + 1}: {run.seconds:6.2f} s wall, CPU {run.cpu:6.2f} s,"
                f" peak tree RSS {run.rss_mb:5.0f} MB / PSS {run.pss_mb:5.0f} MB ({run.processes} processes),"
                f" rendered {run.rendered}/{run.html} HTML, listed {len(run.listed)}, exit {run.code}",
                flush=True,
            )
            if run.code != 0:
                print(f"    stderr: {run.stderr.strip()[-800:]}")
    return runs


# -- what the runs show ---------------------------------------------------------------------------


def median(runs: list[Run], attribute: str) -> float:
    return statistics.median(float(getattr(run, attribute)) for run in runs)


def render_of(line: dict[str, object]) -> dict[str, object]:
    return cast("dict[str, object]", line["render"])


def decisions(run: Run) -> Counter[str]:
    """The report's because/skipped values of one run."""
    counts: Counter[str] = Counter()
    for line in run.renders:
        render = render_of(line)
        if render.get("rendered"):
            counts[f"because {render.get('because')}"] += 1
        elif render.get("failed"):
            counts[f"failed {render.get('failed')} (because {render.get('because')})"] += 1
        else:
            counts[f"skipped {render.get('skipped')}"] += 1
    return counts


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def explain_auto(run: Run, limit: int = 12) -> None:
    """What auto rendered and why: the samples and re-checks with what rendering changed, then the rest."""
    learnt = [line for line in run.renders if render_of(line).get("because") in ("sampled", "re-check")]
    for line in learnt:
        render = render_of(line)
        extra = {key: render[key] for key in ("links_added", "canonical", "noindex") if key in render}
        print(
            f"    {render.get('because'):9} {path_of(str(line['url']))}: changed {render.get('changed')}"
            f" (why {render.get('why')}; {extra}); report canonical {line.get('canonical')}"
        )
    others = [
        line
        for line in run.renders
        if render_of(line).get("rendered") and render_of(line).get("because") not in ("sampled", "re-check")
    ]
    if others:
        shown = ", ".join(f"{path_of(str(line['url']))} ({render_of(line).get('because')})" for line in others[:limit])
        more = f", ... {len(others) - limit} more" if len(others) > limit else ""
        print(f"    also rendered ({len(others)}): {shown}{more}")


def queries_with_q(runs: list[Run]) -> list[str]:
    return sorted(
        {
            f"{request.method} {request.uri} {request.status}"
            for run in runs
            for request in run.requests
            if "q=" in urlsplit(request.uri).query
        }
    )


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def describe(site: Site, runs: list[Run]) -> list[dict[str, str]]:
    """Print the site's targets and details; return its rows of the summary table."""
    by_mode = {mode: [run for run in runs if run.mode == mode] for mode in site.modes}
    rows = []
    for mode, mine in by_mode.items():
        rendered, html = median(mine, "rendered"), median(mine, "html")
        rows.append(
            {
                "site": site.name,
                "mode": mode,
                "runs": str(len(mine)),
                "wall s (median; all)": f"{median(mine, 'seconds'):.2f}; "
                + ", ".join(f"{run.seconds:.2f}" for run in mine),
                "CPU s": f"{median(mine, 'cpu'):.2f}",
                "peak tree RSS MB": f"{median(mine, 'rss_mb'):.0f}",
                "peak tree PSS MB": f"{median(mine, 'pss_mb'):.0f}",
                "rendered / HTML read": f"{rendered:.0f} / {html:.0f}" + (f" = {rendered / html:.0%}" if html else ""),
                "listed": f"{statistics.median(len(run.listed) for run in mine):.0f}",
                "exit": ",".join(sorted({str(run.code) for run in mine})),
            }
        )
    print(f"\n{site.name} ({site.origin}):")
    never, auto = by_mode["never"], by_mode["auto"]
    share = median(auto, "rendered") / max(median(auto, "html"), 1)
    goal = " (target <= 10%: " + verdict(share <= 0.10) + ")" if site.target_renders else ""
    print(f"  renders under auto: {median(auto, 'rendered'):.0f} of {median(auto, 'html'):.0f} = {share:.0%}{goal}")
    for mode, mine in by_mode.items():
        if len({run.listed for run in mine}) > 1:
            print(f"  NOTE: {mode}'s listed set differs between its runs: {sorted(len(r.listed) for r in mine)}")
    same = never[0].listed == auto[0].listed
    print(
        f"  auto lists the same set as never: {'yes' if same else 'no'}"
        f" ({len(auto[0].listed)} vs {len(never[0].listed)})"
        + ("" if site.routes else f" (target: same: {verdict(same)})")
    )
    if not same and not site.routes:  # on the app never lists the start page only: the recall below tells
        for url in sorted(auto[0].listed - never[0].listed):
            print(f"    only auto:  {url}")
        for url in sorted(never[0].listed - auto[0].listed):
            print(f"    only never: {url}")
    # On the app, never reads one page and starts no browser: its ratios are no target, auto/always is.
    against = "always" if site.routes else "never"
    other = by_mode[against]
    wall = median(auto, "seconds") / median(other, "seconds")
    rss = median(auto, "rss_mb") / median(other, "rss_mb")
    pss = median(auto, "pss_mb") / max(median(other, "pss_mb"), 1)
    peak = median(auto, "rss_mb")
    if site.routes:
        never_wall = median(auto, "seconds") / median(never, "seconds")
        never_rss = median(auto, "rss_mb") / median(never, "rss_mb")
        print(f"  auto/never (no target: never reads the shell only): wall {never_wall:.2f}x, RSS sum {never_rss:.2f}x")
    print(f"  wall auto/{against}: {wall:.2f}x (target <= 1.5x: {verdict(wall <= 1.5)})")
    print(
        f"  peak memory auto/{against}: RSS sum {rss:.2f}x (target <= 1.5x: {verdict(rss <= 1.5)}), PSS sum {pss:.2f}x"
    )
    print(
        f"  peak memory at auto: RSS sum {peak:.0f} MB, PSS sum {median(auto, 'pss_mb'):.0f} MB"
        f" (target < 1.5 GB: {verdict(peak < 1.5 * GB)})"
    )
    if site.routes:
        for mode in ("never", "auto", "always"):
            mine = by_mode[mode]
            found = site.routes & mine[0].listed
            recall = len(found) / len(site.routes)
            goal = "" if mode == "never" else f" (target 1.0: {verdict(recall == 1.0)})"
            print(
                f"  recall of {mode} vs the app's {len(site.routes)} routes: {recall:.2f}{goal};"
                f" rendered {median(mine, 'rendered'):.0f} of {median(mine, 'html'):.0f} HTML pages"
            )
            missing = sorted(path_of(url) for url in site.routes - mine[0].listed)
            extra = sorted(path_of(url) for url in mine[0].listed - site.routes)
            if mode != "never" and missing:
                print(f"    missing: {', '.join(missing)}")
            if extra:
                print(f"    listed, not a route: {', '.join(extra)}")
    for mode in site.modes:
        if mode == "never":
            continue
        counts = {tuple(sorted(decisions(run).items())) for run in by_mode[mode]}
        for pairs in sorted(counts):
            print(f"  {mode} because/skipped: {', '.join(f'{key} {count}' for key, count in pairs) or 'none'}")
    print("  auto, first run, what it rendered and why:")
    explain_auto(auto[0])
    asked = queries_with_q(runs)
    print(f"  requests with q= in the query (must be none): {len(asked)}")
    for request in asked[:10]:
        print(f"    {request}")
    return rows


@contextmanager
def sites(only: str | None, work: Path) -> Iterator[list[Site]]:
    """The sites asked for, built (or taken from the cache) and served until the block ends."""
    config = cast("pytest.Config", _Config())
    chosen: list[Site] = []
    with ExitStack() as servers:
        for name, build in (("docusaurus", docusaurus_build), ("mkdocs", mkdocs_build)):
            if only not in (None, name):
                continue
            folder = work / name
            folder.mkdir()
            built = build(config)
            static = servers.enter_context(served(built, folder))
            print(f"{name}: {built} served at {static.origin}")
            chosen.append(Site(name, static.origin, static.server, ("never", "auto"), target_renders=True))
        if only in (None, "spa"):
            dist = spa_build()
            server = servers.enter_context(spa_served(dist, work / "spa"))
            routes = frozenset(server.origin + path for path in PAGES)
            print(f"spa: {dist} ({len(PAGES)} routes) served at {server.origin} with try_files $uri /index.html")
            chosen.append(Site("spa", server.origin, server, ("never", "auto", "always"), routes=routes))
        yield chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each mode per site (3; at least 2)")
    parser.add_argument("--only", choices=("docusaurus", "mkdocs", "spa"))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    if shutil.which("chromium-headless-shell") is None:
        raise SystemExit("chromium-headless-shell is needed: apt-get install chromium-headless-shell")
    tool = subprocess.run(
        [str(BIN / "sitemap-crawler"), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {tool.stdout.strip()}")
    print(f"machine at start: {machine()}")
    print(
        f"memory: peak over the run of the summed RSS of the CLI and all its descendants (/proc/PID/statm,"
        f" every {SAMPLE_EVERY} s), and of their summed PSS (/proc/PID/smaps_rollup, every"
        f" {SAMPLE_EVERY * PSS_EVERY:.1f} s)"
    )
    began = time.perf_counter()
    rows: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="render-auto-") as folder:
        work = Path(folder)
        work.chmod(0o755)  # nginx's workers may run as another user
        try:
            with sites(args.only, work) as chosen:
                results = [(site, bench_site(site, max(args.repeat, 1), work)) for site in chosen]
                for site, runs in results:
                    rows += describe(site, runs)
        except pytest.skip.Exception as why:  # a tool missing (node, npm, mkdocs) or a registry out of reach
            raise SystemExit(f"a site cannot be built here: {why}") from None
    table(rows)
    print(f"\nmachine at end: {machine()}")
    print(f"the benchmark took {time.perf_counter() - began:.0f} s")
    print(
        "targets: auto renders <= 10% of HTML pages on Docusaurus and MkDocs; auto lists the same set as never;"
        " wall and peak memory auto/never (the app: auto/always) <= 1.5x; peak memory at auto < 1.5 GB; on the app,"
        " recall 1.0 for auto and always; no request with q= in its query"
    )


if __name__ == "__main__":
    main()
