"""The pure rules of rendering: which pages need the browser, which of their requests may be
fetched, how the rendered page joins the raw one, and the settings' checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

from crawler.page.html import parse_html
from crawler.page.rendered import with_rendered
from crawler.render.evidence import Because, Groups, differences, script_group
from crawler.render.guard import BrowserRequest, refusal
from crawler.render.memory import descendants_usage
from crawler.render.signs import render_signs
from settings.render import read_render
from tests.conftest import crawl, run_cli
from tests.server import SiteServer

PAGE = "https://shop.example/catalogue"
ROOTS = frozenset({"https://shop.example/", "https://cdn.example/"})


@pytest.mark.parametrize(
    ("html", "signs"),
    [
        ('<div id="root"></div><a href="/x">x</a>', ["empty-app-root"]),
        ('<div id="__next">  </div><a href="/x">x</a>', ["empty-app-root"]),
        ('<app-root></app-root><a href="/x">x</a>', ["empty-app-root"]),
        ('<div id="root"><p>server-rendered</p></div><a href="/x">x</a>', []),
        ("<p>no link at all</p>", ["no-links"]),
        ('<noscript>You need to enable JavaScript to run this app.</noscript><a href="/x">x</a>', ["noscript"]),
        ('<noscript><img src="/pixel.gif"></noscript><a href="/x">x</a>', []),
        ('<a href="/x">x</a><script src="/static/app.js"></script>', ["own-script"]),
        ('<a href="/x">x</a><script src="https://shop.example/app.js"></script>', ["own-script"]),
        ('<a href="/x">x</a><script src="https://cdn.example/app.js"></script>', ["own-script"]),  # allowed CDN
        ('<a href="/x">x</a><script src="https://tracker.example/t.js"></script>', []),
        ('<a href="/x">x</a><script>inline()</script>', []),
        ('<base href="https://tracker.example/"><a href="/x">x</a><script src="t.js"></script>', []),
    ],
)
def test_the_signs_of_a_page_built_by_script(html: str, signs: list[str]) -> None:
    body = f"<html><head></head><body>{html}</body></html>".encode()
    assert render_signs(body, PAGE, "utf-8", {"https://cdn.example/"}).signs == signs


def test_the_raw_meta_is_read_for_a_raw_noindex() -> None:
    raw = render_signs(b'<html><head><meta name="ROBOTS" content="noindex"></head></html>', PAGE, "utf-8")
    assert raw.meta == {"robots": ["noindex"]}
    assert render_signs(b"", PAGE, "utf-8").signs == []


@pytest.mark.parametrize(
    ("url", "method", "kind", "why"),
    [
        ("https://shop.example/app.js", "GET", "script", None),
        ("https://shop.example/api/nav.json", "GET", "fetch", None),
        ("https://shop.example/api/nav.json", "get", "xhr", None),
        ("https://shop.example/frame.html", "GET", "document", None),
        ("https://shop.example/site.css", "HEAD", "stylesheet", None),
        ("https://cdn.example/bundle.js", "GET", "script", None),
        ("https://shop.example/logo.png", "GET", "image", "resource type image"),
        ("https://shop.example/font.woff2", "GET", "font", "resource type font"),
        ("https://shop.example/clip.mp4", "GET", "media", "resource type media"),
        ("https://shop.example/beacon", "POST", "ping", "resource type ping"),
        ("https://shop.example/api/cart", "POST", "fetch", "method POST"),
        ("https://shop.example/api/cart", "DELETE", "xhr", "method DELETE"),
        ("https://tracker.example/t.js", "GET", "script", "off scope"),
        ("http://shop.example/app.js", "GET", "script", "off scope"),  # another scheme
        ("https://shop.example:8443/app.js", "GET", "script", "off scope"),  # another port
        ("data:text/javascript,1", "GET", "script", "not http(s): data"),
    ],
)
def test_the_guard(url: str, method: str, kind: str, why: str | None) -> None:
    assert refusal(BrowserRequest(url, method, kind), ROOTS) == why


def test_the_rendered_page_keeps_the_raw_links_and_adds_its_own() -> None:
    raw = parse_html(b'<a href="/a">a</a><a href="/b">b</a><title>shell</title>', PAGE, anchors=True)
    shown = parse_html(b'<a href="/b">B</a><a href="/c">c</a><title>Catalogue</title>', PAGE, anchors=True)
    page, added = with_rendered(raw, shown)
    assert page.links == ["https://shop.example/a", "https://shop.example/b", "https://shop.example/c"]
    assert added == 1
    assert page.title == "Catalogue"
    assert page.anchors["https://shop.example/b"] == "b"  # the raw page's words first


def settings(**values: object) -> Settings:
    result = Settings()
    result.setmodule("settings")
    for name, value in values.items():
        result.set(name, value)
    return result


def test_render_settings_are_checked() -> None:
    assert read_render(settings(), PAGE).enabled is False
    with pytest.raises(ValueError, match="SITEMAP_RENDER must be one of never, auto, always"):
        read_render(settings(SITEMAP_RENDER="sometimes"), PAGE)
    with pytest.raises(ValueError, match="is not an origin"):
        read_render(settings(SITEMAP_RENDER_ALLOW_ORIGINS=["https://cdn.example/js/"]), PAGE)
    allowed = read_render(settings(SITEMAP_RENDER_ALLOW_ORIGINS=["HTTPS://CDN.example:443", PAGE[:20]]), PAGE)
    assert allowed.allow_origins == ("https://cdn.example/",)  # normalised; the site's own left out
    with pytest.raises(ValueError, match="no executable file there"):
        read_render(settings(SITEMAP_RENDER="auto", SITEMAP_CHROMIUM="/nonexistent/chromium"), PAGE)


def test_no_browser_is_a_usage_error_before_anything_is_fetched(tmp_path: Path) -> None:
    """Without Chromium, --render auto stops with exit 2 and says how to get one."""
    empty = tmp_path / "bin"
    empty.mkdir()
    python_dir = os.path.dirname(os.path.realpath(sys.executable))
    env = {"PATH": f"{empty}{os.pathsep}{python_dir}"}
    result = run_cli("crawl", "http://127.0.0.1:9/", "--render", "auto", "--out", str(tmp_path / "o"), env=env)
    assert result.returncode == 2, result.stderr
    assert "chromium-headless-shell" in result.stderr and "--chromium PATH" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_cli("crawl", "http://127.0.0.1:9/", "--render", "sometimes", "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_the_memory_of_child_processes_is_read_and_shared_pages_are_split() -> None:
    """A child and its grandchild are both counted; their PSS, which splits shared pages, is below their RSS."""
    before = descendants_usage()
    script = (
        "import subprocess, sys; g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        " print(g.pid, flush=True); g.wait()"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip().isdigit()  # the grandchild is there
        usage = descendants_usage()
        assert usage.processes >= before.processes + 2
        assert usage.rss > before.rss + 2 * 4 * 1024 * 1024  # two Pythons, several MB each
        assert 0 < usage.pss < usage.rss and usage.used == usage.pss
        assert descendants_usage(child.pid).processes == 1  # the grandchild only
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        child.stdout.close()


def test_a_browser_that_cannot_start_stops_the_crawl_and_keeps_the_previous_set(
    server: SiteServer, tmp_path: Path
) -> None:
    """Without its browser a --render crawl would publish the site as seen without JavaScript: it
    stops instead, says why once, and the set published before stays as it was."""
    out = tmp_path / "out"
    first = crawl(server.url(), out, "--no-state", "--delay", "0")
    assert first.code == 0, first.process.stderr
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\necho 'error while loading shared libraries: libatomic.so.1' >&2\nexit 127\n")
    broken.chmod(0o755)
    result = crawl(server.url(), out, "--no-state", "--delay", "0", "--render", "always", "--chromium", str(broken))
    stderr = result.process.stderr
    assert result.code == 1, stderr
    assert stderr.count("Chromium did not start") == 2, stderr  # the log line, and the summary's reason
    assert "previous sitemaps kept" in stderr.splitlines()[-1] and "Traceback" not in stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


# -- auto: groups learnt by evidence ---------------------------------------------


def test_a_group_is_sampled_then_read_raw_with_a_recheck_every_fifty_pages() -> None:
    groups = Groups(sample=3, recheck_every=50)
    assert [groups.plan("g") for _ in range(4)] == [Because.SAMPLED] * 3 + [Because.WAIT]
    groups.learn("g", None)  # a sample whose render failed teaches nothing: another page samples
    assert groups.plan("g") is Because.SAMPLED
    for _ in range(3):
        groups.learn("g", [])
    plans = [groups.plan("g") for _ in range(100)]
    assert plans.count(Because.RECHECK) == 2 and plans[49] is Because.RECHECK
    assert set(plans) == {Because.GROUP_UNCHANGED, Because.RECHECK}
    groups.learn("g", ["links"])  # a re-check that shows a change: the whole group from now on
    groups.learn("g", [])
    assert groups.plan("g") is Because.GROUP_NEEDS_IT
    assert groups.plan("other") is Because.SAMPLED  # groups are learnt apart


def test_one_change_in_a_sample_renders_the_group() -> None:
    groups = Groups(sample=3)
    assert groups.plan("g") is Because.SAMPLED
    groups.learn("g", ["title"])
    assert [groups.plan("g") for _ in range(5)] == [Because.GROUP_NEEDS_IT] * 5


def test_a_group_is_its_own_scripts_with_the_build_hashes_blanked() -> None:
    docs = script_group(["/assets/js/main.eae0e4ff.js", "/assets/js/runtime~main.3f587b41.js"])
    rebuilt = script_group(["/assets/js/runtime~main.77aa1b2c.js", "/assets/js/main.0123abcd.js"])
    assert docs == rebuilt
    assert script_group(["/static/shop.js"]) != docs


@pytest.mark.parametrize(
    ("shown", "changed"),
    [
        ("<title>T</title><a href='/a'>a</a>", []),
        ("<title>T</title><a href='/a'>a</a><a href='https://other.example/'>x</a>", []),  # off the site
        ("<title>T</title><a href='/a'>a</a><form><a href='?q='>share</a></form>", []),  # a search box's
        ("<title>T</title><a href='/a'>a</a><a href='/b'>b</a>", ["links"]),
        ("<title>T</title><link rel=canonical href='/c'><a href='/a'>a</a>", ["canonical"]),
        ("<title>T</title><meta name=robots content=noindex><a href='/a'>a</a>", ["robots"]),
        ("<title>T</title><link rel=alternate hreflang=de href='/de'><a href='/a'>a</a>", ["links", "hreflang"]),
        ("<title>Other</title><a href='/a'>a</a>", ["title"]),
    ],
)
def test_what_rendering_changed_is_what_a_sitemap_depends_on(shown: str, changed: list[str]) -> None:
    raw = parse_html(b"<title>T</title><a href='/a'>a</a>", PAGE)
    rendered = parse_html(shown.encode(), PAGE, form_links=False)
    assert differences(raw, rendered, PAGE, "googlebot") == changed


def test_a_script_that_points_the_canonical_at_the_page_it_redirected_to_changes_nothing() -> None:
    """Docusaurus behind nginx: the HTML says /docs/intro, nginx redirects it to /docs/intro/, and
    the page's script rewrites its canonical and alternate to the URL it is on."""
    page = "https://docs.example/docs/intro/"
    raw = parse_html(
        b"<link rel=canonical href='/docs/intro'><link rel=alternate hreflang=en href='/docs/intro'>", page
    )
    shown = parse_html(
        b"<link rel=canonical href='/docs/intro/'><link rel=alternate hreflang=en href='/docs/intro/'>", page
    )
    assert differences(raw, shown, page, "googlebot", ["https://docs.example/docs/intro"]) == []
    assert differences(raw, shown, page, "googlebot") == ["links", "canonical", "hreflang"]  # reached directly


def test_two_urls_of_a_group_with_the_same_raw_html_make_the_group_render() -> None:
    groups = Groups(sample=3)
    assert groups.plan("g", b"index.html") is Because.SAMPLED
    groups.learn("g", [])
    assert groups.plan("g", b"other") is Because.SAMPLED
    assert groups.plan("g", b"index.html") is Because.GROUP_NEEDS_IT  # one document, two URLs
