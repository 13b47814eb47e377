"""``--render auto`` by evidence (issue 36, SPEC S9): a page that only loads the site's own script
is rendered while its group (the pages loading the same scripts) has not shown whether rendering
changes anything the sitemap depends on. Real crawls through the CLI with Debian's
chromium-headless-shell, judged on the report, the sitemaps and the site's own request log.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import crawl
from tests.render_hostile_site import HostileSite, index

if shutil.which("chromium-headless-shell") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI needs chromium-headless-shell (apt-get install chromium-headless-shell)")
    pytest.skip("chromium-headless-shell is not installed (apt-get install chromium-headless-shell)",
                allow_module_level=True)  # fmt: skip

PAGES = [f"/p/{n}" for n in range(1, 12)]
SAMPLE = 3  # crawler.render.evidence.Groups.sample
#: A generator's script: it decorates the page and fills a search box's share link from what a
#: user would type (empty here), as MkDocs Material's does; nothing a sitemap depends on.
DECORATES = """
document.body.classList.add('js');
const form = document.createElement('form');
form.setAttribute('role', 'search');
form.innerHTML = '<input name="q"><a href="?q=">Share</a>';
document.body.appendChild(form);
"""
#: A script that adds a link of its own on every page: rendering matters for the whole group.
ADDS = "const a = document.createElement('a'); a.href = '/extra' + location.pathname; document.body.appendChild(a);"


def page(title: str, script: str) -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title><script src='{script}' defer></script></head>"
        f"<body><main><h1>{title}</h1><p>The text of {title}.</p><a href='/'>Home</a></main></body></html>"
    )


def site(script_text: str) -> HostileSite:
    script = "/assets/app.5f9d56c1.js"  # a build hash, as generators name their bundles
    pages = {path: page(path, script) for path in PAGES}
    pages["/"] = index(PAGES)
    pages |= {
        f"/extra{path}": f"<html><body><p>More about {path}.</p><a href='/'>Home</a></body></html>" for path in PAGES
    }
    return HostileSite(pages, {script: script_text}).start()


@pytest.fixture
def generator() -> Iterator[HostileSite]:
    server = site(DECORATES)
    yield server
    server.stop()


def renders(result_report: dict[str, dict[str, object]]) -> dict[str, str]:
    """URL path -> why it was rendered or not (``because`` or ``skipped``)."""
    found = {}
    for url, line in result_report.items():
        render = line.get("render")
        if isinstance(render, dict):
            found[url.split("/", 3)[3]] = str(render.get("because") or render.get("skipped"))
    return found


def test_a_group_whose_samples_change_nothing_is_read_raw(generator: HostileSite, tmp_path: Path) -> None:
    never = crawl(generator.url(), tmp_path / "never", "--no-state")
    generator.hits.clear()
    auto = crawl(generator.url(), tmp_path / "auto", "--no-state", "--render", "auto")
    assert auto.code == 0, auto.process.stderr
    assert sorted(auto.listed) == sorted(never.listed) and len(auto.listed) == 1 + len(PAGES)
    why = renders(auto.report)
    assert why.pop("") == "no-sign"  # the home page loads no script
    assert sorted(why.values()) == ["group-unchanged"] * (len(PAGES) - SAMPLE) + ["sampled"] * SAMPLE
    for url, line in auto.report.items():
        if isinstance(render := line.get("render"), dict) and render.get("because") == "sampled":
            assert render["changed"] == [], url  # the share link is in a form: no link of the site
    assert not [path for path in generator.paths() if "?q=" in path]  # never followed
    summary = f"Rendered {SAMPLE} of {1 + len(PAGES)} HTML pages (sampled {SAMPLE}; not rendered: group-unchanged"
    assert summary in auto.process.stderr


def test_a_group_whose_script_adds_links_is_rendered_whole(tmp_path: Path) -> None:
    server = site(ADDS)
    try:
        auto = crawl(server.url(), tmp_path / "auto", "--no-state", "--render", "auto")
    finally:
        server.stop()
    assert auto.code == 0, auto.process.stderr
    assert {server.url(f"/extra{path}") for path in PAGES} <= set(auto.listed)  # recall 1.0
    why = {path: because for path, because in renders(auto.report).items() if path.startswith("p/")}
    assert len(why) == len(PAGES) and set(why.values()) <= {"sampled", "group-needs-it"}, why
    assert "group-needs-it" in why.values()


def test_one_document_served_for_every_route_is_rendered_whatever_the_samples_showed(tmp_path: Path) -> None:
    """An app host answers every route with the same index.html (static menu, a placeholder in its
    mount point): raw, its pages are duplicates of each other; only its script tells them apart,
    while it adds no link, canonical or title a sample could show."""
    script = "/assets/app.0a1b2c3d.js"
    shell = (
        "<!doctype html><html><head><title>App</title><script src='/assets/app.0a1b2c3d.js' defer></script>"
        f"</head><body><nav>{''.join(f'<a href={path!r}>{path}</a>' for path in PAGES)}</nav>"
        "<div id='root'><p>Loading the app, one moment please.</p></div></body></html>"
    )
    text = "document.getElementById('root').innerHTML = '<h1>Page ' + location.pathname + '</h1><p>Its own text.</p>';"
    server = HostileSite({"/": index(PAGES), **dict.fromkeys(PAGES, shell)}, {script: text}).start()
    try:
        auto = crawl(server.url(), tmp_path / "auto", "--no-state", "--render", "auto")
    finally:
        server.stop()
    assert auto.code == 0, auto.process.stderr
    assert {server.url(path) for path in PAGES} <= set(auto.listed)  # none left out as a duplicate
    why = {path: because for path, because in renders(auto.report).items() if path.startswith("p/")}
    assert "group-needs-it" in why.values() and "group-unchanged" not in why.values(), why
