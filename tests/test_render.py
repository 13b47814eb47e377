"""``--render`` end to end: real crawls through the CLI, Debian's chromium-headless-shell, the
single-page shop and the mixed site of tests/spa_server.py, judged by the sitemaps, the report
and the sites' own request logs (SPEC S9).

Without rendering the shop is one page (the app shell links nothing); rendered, every page the
app links is found, what only a script says (noindex, canonical, a navigation) counts, and no
request of Scrapy or of the browser breaks a rule: robots.txt, scope, the User-Agent, once a URL.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from settings import USER_AGENT
from tests.conftest import CLI, CrawlResult, crawl, run_cli
from tests.server import NOT_PAGES
from tests.spa_server import MIXED, MIXED_APP, MIXED_SERVER_RENDERED, SHOP, SHOP_LISTED, Hit, SpaServer

if shutil.which("chromium-headless-shell") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium-headless-shell (apt-get install chromium-headless-shell)")
    pytest.skip("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)",
                allow_module_level=True)  # fmt: skip

SOFT_404 = ("/retired", "/gone")  # two routes the app does not know: the same "Page not found"
NEVER_ASKED = {"/careers", "/api/private.json", "/members", "/static/brand.woff2", "/partner-site"}
SHELL_SIGNS = ["empty-app-root", "no-links", "noscript", "own-script"]
RAW_NOINDEX = "/guide/draft.html"  # its HTML says noindex, and it loads the script that adds a link
TIMER = 4.0  # seconds the app waits before asking for a page's late links (tests/site_spa/static/app.js)


@dataclass
class Run:
    result: CrawlResult
    site: SpaServer
    hits: list[Hit]
    cdn_hits: list[Hit]
    warnings: dict[str, str]  # render-fetch refusals: URL -> detail

    def path(self, url: str) -> str:
        return url.removeprefix(self.site.url(""))

    @property
    def listed(self) -> set[str]:
        return {self.path(url) for url in self.result.listed}

    def line(self, path: str) -> dict[str, object]:
        return self.result.report[self.site.url(path)]

    def render(self, path: str) -> dict[str, Any]:
        """The ``render`` object of *path*'s report line."""
        render = self.line(path)["render"]
        assert isinstance(render, dict), (path, render)
        return render

    def rendered(self) -> set[str]:
        lines = self.result.report.items()
        return {self.path(url) for url, line in lines if isinstance(r := line.get("render"), dict) and r["rendered"]}


@pytest.fixture(scope="module")
def cdn() -> Iterator[SpaServer]:
    server = SpaServer("cdn").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shop(cdn: SpaServer) -> Iterator[SpaServer]:
    server = SpaServer("shop", SHOP, cdn.port).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def mixed(cdn: SpaServer) -> Iterator[SpaServer]:
    server = SpaServer("mixed", MIXED, cdn.port).start()
    yield server
    server.stop()


def run(site: SpaServer, cdn: SpaServer, out: Path, *options: str) -> Run:
    site.reset()
    cdn.reset()
    result = crawl(site.url(), out, "--no-state", "--max-pages", "60", *options)
    assert result.code == 0, result.process.stderr
    noise = ("Traceback", "Task was destroyed", "Future exception was never retrieved", "Exception ignored")
    assert [line for line in result.process.stderr.splitlines() if line.startswith(noise)] == []
    report = out.parent / f"{out.name}.crawl-report.jsonl"
    lines = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    refused = [line for line in lines if line["outcome"] == "warning" and line["reason"] == "render-fetch"]
    warnings = {line["url"]: line["detail"] for line in refused}
    assert len(warnings) == len(refused), "a refused URL reported twice"
    return Run(result, site, site.log(), cdn.log(), warnings)


@pytest.fixture(scope="module")
def shop_never(shop: SpaServer, cdn: SpaServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run(shop, cdn, tmp_path_factory.mktemp("never") / "out", "--render", "never")


@pytest.fixture(scope="module")
def shop_auto(shop: SpaServer, cdn: SpaServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run(shop, cdn, tmp_path_factory.mktemp("auto") / "out", "--render", "auto")


@pytest.fixture(scope="module")
def shop_allowed(shop: SpaServer, cdn: SpaServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``always``, and the CDN's origin allowed: its widget runs (and adds a link)."""
    origin = f"http://127.0.0.1:{cdn.port}"
    return run(
        shop, cdn, tmp_path_factory.mktemp("always") / "out", "--render", "always", "--render-allow-origin", origin
    )


@pytest.fixture(scope="module", params=["auto", "always"])
def shop_rendered(request: pytest.FixtureRequest) -> Run:
    run: Run = request.getfixturevalue("shop_auto" if request.param == "auto" else "shop_allowed")
    return run


@pytest.fixture(scope="module")
def mixed_runs(mixed: SpaServer, cdn: SpaServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    folder = tmp_path_factory.mktemp("mixed")
    return {mode: run(mixed, cdn, folder / mode / "out", "--render", mode) for mode in ("never", "auto", "always")}


# -- the shop: what is found ----------------------------------------------------


def test_without_rendering_the_shop_is_its_start_page(shop_never: Run) -> None:
    """The baseline: recall 1 of 19, so the site does need a browser."""
    assert shop_never.listed == {"/"}
    assert "render" not in shop_never.line("/")
    assert [(hit.method, hit.path) for hit in shop_never.hits if hit.path not in NOT_PAGES] == [("GET", "/")]
    assert shop_never.hits[0].path == "/robots.txt"  # and the conventional sitemap locations, 404 there
    assert shop_never.cdn_hits == [] and shop_never.warnings == {}


def test_a_plain_crawl_of_an_app_shell_suggests_rendering(shop_never: Run) -> None:
    """Rendering off: the browser is never started, and the one line about it says that the start
    page looks like an app shell, which only a browser can read."""
    lines = [line for line in shop_never.result.process.stderr.splitlines() if "render" in line.lower()]
    hint = (
        "1 page looks like an app shell (an empty mount point or a <noscript>, no links): its content is built"
        " by JavaScript, which --render never does not run; try --render auto"
    )
    assert lines == [hint]


def test_rendering_finds_every_page_the_app_links(shop_rendered: Run) -> None:
    run = shop_rendered
    allowed = "always" in run.render("/")["why"]
    kept = [path for path in SOFT_404 if path in run.listed]
    assert len(kept) == 1, run.listed
    assert run.listed == SHOP_LISTED | set(kept) | ({"/partners"} if allowed else set())
    # What the sitemap never lists: a button's target, a hash route, the off-host link, a robots route.
    assert not any("#" in url for url in run.result.report), "a hash route became a page"
    assert run.line("/careers")["reason"] == "robots"
    assert run.result.report[f"http://localhost:{run.site.port}/partner-site"]["reason"] == "out-of-scope"
    assert run.site.url("/members") not in run.result.report


def test_the_soft_404s_are_one_content_from_the_rendered_page(shop_rendered: Run) -> None:
    """Every route's raw HTML is the same shell; only the rendered page tells them apart, and it
    tells the two not-found routes to be one page."""
    run = shop_rendered
    kept, twin = sorted(SOFT_404, key=lambda path: path not in run.listed)
    assert run.line(twin)["reason"] == "duplicate"
    assert run.line(twin)["detail"] == f"same content as {run.site.url(kept)}"
    assert [line["reason"] for line in run.result.report.values()].count("duplicate") == 1


def test_each_page_line_says_it_was_rendered_and_why(shop_auto: Run, shop_allowed: Run) -> None:
    for run, why in ((shop_auto, SHELL_SIGNS), (shop_allowed, ["always"])):
        pages = {url: line for url, line in run.result.report.items() if line["status"] == 200}
        assert len(pages) >= len(SHOP_LISTED) + 4
        for url, line in pages.items():
            render = line["render"]
            assert isinstance(render, dict), url
            assert render["rendered"] is True and render["why"] == why, (url, render)
            assert isinstance(render["links_added"], int), url
            assert render["links_added"] >= 8 or url.endswith("/moved"), (url, render)  # the menu at least
        for n in range(1, 7):  # images the script inserted: listed, never fetched
            assert run.line(f"/products/{n}")["images"] == 1


def test_what_only_a_script_says_counts(shop_rendered: Run) -> None:
    run = shop_rendered
    noindex = run.line("/private-offer")
    assert (noindex["reason"], noindex["detail"]) == ("noindex", "noindex (set by script)")
    assert run.render("/private-offer")["noindex"] == "set by script"
    canonical = run.line("/print/about")
    assert canonical["reason"] == "canonicalised" and canonical["canonical"] == run.site.url("/about")
    assert canonical["detail"] == f"-> {run.site.url('/about')} (set by script)"
    assert run.render("/print/about")["canonical"] == "set by script"
    moved = run.line("/moved")
    assert (moved["reason"], moved["redirect_to"]) == ("redirect", run.site.url("/landing"))
    assert run.render("/moved")["navigated_to"] == run.site.url("/landing")
    assert run.line("/landing")["redirect_chain"] == [run.site.url("/moved")]
    for path in SHOP_LISTED:  # nothing of that on a page whose script said none of it
        assert not {"noindex", "canonical", "navigated_to"} & set(run.render(path)), path


def test_refused_browser_requests_are_reported_once_with_why(shop_auto: Run, shop_allowed: Run) -> None:
    for run in (shop_auto, shop_allowed):
        url = run.site.url
        why = {found: detail.partition(" (asked by ")[0] for found, detail in run.warnings.items()}
        expected = {
            url("/api/private.json"): "disallowed by robots.txt",
            url("/api/track"): "method POST",
            url("/api/config.json"): f"redirect from {url('/api/config.json')} to "
            f"http://localhost:{run.site.port}/api/config.json: off scope",
        }
        if run is shop_auto:
            expected[f"http://127.0.0.1:{run.site.cdn_port}/widget.js"] = "off scope"
        assert why == expected
        for detail in run.warnings.values():
            asker = detail.partition(" (asked by ")[2].removesuffix(")")
            assert run.path(asker) in SHOP_LISTED | set(SOFT_404) | {"/moved", "/private-offer", "/print/about"}


# -- the shop: what was asked for -----------------------------------------------


def test_no_request_breaks_a_rule(shop_rendered: Run) -> None:
    """From the site's own log: every request, Scrapy's or the browser's, carries our User-Agent,
    goes to the site's host, is allowed by robots.txt, is a GET, and is made once (scripts and data
    shared by pages come from the cache); images and fonts are never asked for."""
    hits = shop_rendered.hits
    assert {hit.user_agent for hit in hits} == {USER_AGENT}
    assert {hit.host for hit in hits} == {"127.0.0.1"}
    assert {hit.method for hit in hits} == {"GET"}
    paths = [hit.path for hit in hits]
    assert not NEVER_ASKED & set(paths)
    assert not [path for path in paths if path.startswith("/img/") or path.endswith(".woff2")]
    # A refused redirect is not cached: each page's script asks again, and each time it stops at the first hop.
    twice = {path: n for path, n in Counter(paths).items() if n > 1 and path != "/api/config.json"}
    assert twice == {}
    assert {"/static/app.js", "/static/app.css", "/api/nav.json"} <= set(paths)


def test_the_off_site_server_gets_nothing_unless_allowed(shop_auto: Run, shop_allowed: Run) -> None:
    assert shop_auto.cdn_hits == []
    assert "/partners" not in shop_auto.listed
    # Allowed, its script is fetched by Scrapy (robots.txt first), once, with our User-Agent; its font never.
    asked = [hit.path for hit in shop_allowed.cdn_hits]
    assert asked.count("/widget.js") == 1 and set(asked) <= {"/robots.txt", "/widget.js"}, asked
    assert {hit.user_agent for hit in shop_allowed.cdn_hits} == {USER_AGENT}
    assert shop_allowed.line("/partners")["status"] == 200


def test_timers_run_on_virtual_time(shop_rendered: Run) -> None:
    """The app asks for a page's late links TIMER seconds after its content; on virtual time the
    two requests are close together (a real-time wait would make them TIMER s apart)."""
    first: dict[str, float] = {}
    gaps = {}
    for hit in shop_rendered.hits:
        if hit.path.startswith("/api/pages/"):
            first[hit.path.removeprefix("/api/pages")] = hit.time
        elif hit.path.startswith("/api/related/"):
            slug = hit.path.removeprefix("/api/related")
            gaps[slug] = hit.time - first[slug]
    assert len(gaps) >= len(SHOP_LISTED), gaps
    assert max(gaps.values()) < TIMER / 2, gaps


# -- the mixed site -------------------------------------------------------------


def test_mixed_site_auto_finds_all_rendering_fewer_pages(mixed_runs: dict[str, Run]) -> None:
    never, auto, always = mixed_runs["never"], mixed_runs["auto"], mixed_runs["always"]
    every = MIXED_SERVER_RENDERED | MIXED_APP
    assert len(every) == 12
    # Without rendering: the links of the HTML only (the app's home, none of its pages, no script's link).
    assert never.listed == (MIXED_SERVER_RENDERED - {"/extras/one.html", "/extras/two.html"}) | {"/app"}
    assert auto.listed == every and always.listed == every  # recall 1.0
    assert auto.rendered() == {"/guide/one.html", "/guide/two.html"} | MIXED_APP
    assert always.rendered() == every
    assert len(auto.rendered()) < len(always.rendered())
    for path in ("/guide/one.html", "/guide/two.html"):  # one group: the pages loading /static/extra.js
        render = auto.render(path)
        assert (render["rendered"], render["why"], render["links_added"]) == (True, ["own-script"], 1)
        # a sample whose script added a link, or a page of the group that such a sample made render
        assert render["because"] in ("sampled", "group-needs-it")
        assert render.get("changed", ["links"]) == ["links"]
    for path in MIXED_SERVER_RENDERED - auto.rendered():
        assert auto.render(path) == {"rendered": False, "skipped": "no-sign"}
    for path in MIXED_APP:
        assert auto.render(path)["why"] == SHELL_SIGNS
        assert auto.render(path)["because"] == "app-shell"
    for run in (auto, always):  # a raw noindex wins: never rendered, so its script's link is never found
        assert run.render(RAW_NOINDEX) == {"rendered": False, "skipped": "raw-noindex"}
        assert run.line(RAW_NOINDEX)["reason"] == "noindex"
        assert "/extras/draft.html" not in {hit.path for hit in run.hits}


def test_mixed_site_requests_keep_the_rules(mixed_runs: dict[str, Run]) -> None:
    for mode, run in mixed_runs.items():
        assert {hit.user_agent for hit in run.hits} == {USER_AGENT}, mode
        assert {(hit.host, hit.method) for hit in run.hits} == {("127.0.0.1", "GET")}, mode
        paths = Counter(hit.path for hit in run.hits)
        assert not NEVER_ASKED & set(paths), mode
        assert {path: n for path, n in paths.items() if n > 1 and path != "/api/config.json"} == {}, mode
        assert run.cdn_hits == [], mode


# -- audit ----------------------------------------------------------------------


def test_audit_finds_the_soft_404s_the_app_renders(shop: SpaServer, cdn: SpaServer, tmp_path: Path) -> None:
    """The host answers 200 for any route; only the rendered page says "Page not found". A page
    that is something else (a script redirect) is not one."""
    shop.reset()
    cdn.reset()
    out = tmp_path / "audit"
    process = run_cli(
        "audit", shop.url(), "--out", str(out), "--production-url", "https://shop.example", "--delay", "0",
        "--concurrency", "8", "--max-pages", "60", "--render", "always", "-q",
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    data = json.loads((out / "report.json").read_text("utf-8"))
    soft = {finding["url"].removeprefix(shop.url("")) for finding in data["findings"] if finding["kind"] == "soft-404"}
    assert soft == set(SOFT_404)
    hits = shop.log()
    assert {hit.user_agent for hit in hits} == {USER_AGENT}
    assert not NEVER_ASKED & {hit.path for hit in hits}
    assert cdn.log() == []


# -- shared crawl -----------------------------------------------------------------


def test_workers_of_a_shared_crawl_render_with_their_own_browser(
    shop: SpaServer, cdn: SpaServer, redis_url: str, tmp_path: Path
) -> None:
    """A worker renders its leased pages in its own Chromium (``worker --chromium``, a wrapper that
    logs each launch); what it found comes to the coordinator's report and sitemaps, and its
    browser's fetches keep the rules as one process's do."""
    launches = tmp_path / "launches"
    wrapper = tmp_path / "chromium"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> {launches}\nexec {shutil.which("chromium-headless-shell")} "$@"\n')
    wrapper.chmod(0o755)
    shop.reset()
    cdn.reset()
    worker = subprocess.Popen(
        [str(CLI), "worker", redis_url, "--wait", "30", "--chromium", str(wrapper)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out = tmp_path / "shared"
    # A site-wide pace slow enough for the worker, which joins within a second, to take its share.
    options = ("--no-state", "--max-pages", "60", "--render", "auto", "--delay", "0.2", "--render-pages", "1")
    shared = crawl(shop.url(), out, *options, "--distributed", redis_url)
    _, stderr = worker.communicate(timeout=60)
    assert shared.code == 0 and worker.returncode == 0, shared.process.stderr + stderr
    assert launches.exists() and launches.read_text().split(), "the worker rendered nothing in its own browser"
    listed = {url.removeprefix(shop.url("")) for url in shared.listed}
    assert listed >= SHOP_LISTED
    for path in SHOP_LISTED:
        render = shared.report[shop.url(path)]["render"]
        assert isinstance(render, dict) and render["rendered"] and render["why"] == SHELL_SIGNS, (path, render)
    hits = shop.log()
    assert {hit.user_agent for hit in hits} == {USER_AGENT}
    assert not NEVER_ASKED & {hit.path for hit in hits}
    pages = Counter(hit.path for hit in hits if not hit.path.startswith(("/api/", "/static/")))
    assert max(pages.values()) == 1, pages  # no page fetched twice by the two processes
    assert cdn.log() == []
