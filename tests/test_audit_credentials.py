"""Staging credentials (basic auth, a header and a cookie at once) reach the staging
origin only, proven where a request really leaves for another one (SPEC S7).

One kind of request leaves: a request pushed through the audit's own
downloader middleware chain by a probe spider (tests/credential_probe.py). The
other server must receive it, bare. Everything scope keeps away (links,
redirects, canonicals, hreflang alternates, sitemap entries, images, robots.txt
``Sitemap:`` lines, a robots.txt redirected to another port or host) must leave
the other server's log empty.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.robots_rules import redirect_followed
from crawler.validate.sets import check_set
from tests.conftest import run_cli
from tests.staging_site import PASSWORD, PROD, USER, Request, StagingServer, page

TOKEN, COOKIE = "t0k3n-Qz81", "stage=c00kie-Wv27"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = (PASSWORD, BASIC.split()[1], TOKEN, COOKIE.split("=")[1])
CREDENTIALS = {"authorization": BASIC, "x-staging-token": TOKEN, "cookie": COOKIE}
HTML = {"Content-Type": "text/html; charset=utf-8"}
TEXT = {"Content-Type": "text/plain"}
Routes = dict[str, tuple[int, dict[str, str], str]]


def headers(hit: Request) -> dict[str, str]:
    return {name.lower(): value for name, value in hit.headers}


def bare(hit: Request) -> bool:
    """No credential header, and no secret anywhere in what was sent."""
    sent = headers(hit)
    return not sent.keys() & CREDENTIALS.keys() and not any(s in hit.path + str(sent) for s in SECRETS)


def carries_all(hit: Request) -> bool:
    sent = headers(hit)
    return all(sent.get(name) == value for name, value in CREDENTIALS.items())


@pytest.fixture
def other() -> Iterator[StagingServer]:
    """Another origin (another port of 127.0.0.1), no login: it logs whatever reaches it."""
    server = StagingServer({"/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /kept-out\n")}, password=False)
    yield server.start()
    server.stop()


def serve(routes: Routes, blocker: str | None = None) -> StagingServer:
    return StagingServer(routes, header_blocker=blocker == "header").start()


def audit(program: list[str], server: StagingServer, out: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> Any:
    monkeypatch.setenv("AUDIT_PASSWORD", PASSWORD)
    options = ["audit", server.url, "--out", str(out), "--user", USER, "--password-env", "AUDIT_PASSWORD",
               "--header", f"X-Staging-Token: {TOKEN}", "--cookie", COOKIE, "--production-url", PROD,
               "--delay", "0", *extra]  # fmt: skip
    result = run_cli(*options) if not program else run_program(program, options)
    assert "Traceback" not in result.stderr, result.stderr
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    for secret in SECRETS:
        assert secret not in result.stdout + result.stderr
        assert secret.encode() not in written
    return result


def run_program(program: list[str], options: list[str]) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parent.parent  # where ``-m tests.credential_probe`` is found
    return subprocess.run([*program, *options], capture_output=True, text=True, timeout=120, check=False, cwd=root)


def rows(out: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((out / "report.json").read_text())
    return {row["url"]: row for row in data["urls"]}


def audit_behind_robots_redirect(
    host: str, other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> StagingServer:
    """An audit (it succeeds) of a site whose robots.txt answers 301 to the one of *other*, named by *host*."""
    elsewhere = f"http://{host}:{other.server_address[1]}/robots.txt"
    site = serve({
        "/robots.txt": (301, {"Location": elsewhere}, ""),
        "/": (200, HTML, page("Home", '<a href="/about">About</a> <a href="/kept-out">Out</a>')),
        "/about": (200, HTML, page("About", '<a href="/">Home</a>')),
        "/kept-out": (200, HTML, page("Kept out", "")),
    })  # fmt: skip
    try:
        result = audit([], site, tmp_path / "out", monkeypatch)
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr
    return site


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_robots_txt_redirected_to_another_port_or_host_is_not_followed_by_an_audit(
    host: str, other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another port could be any service of the machine, ``localhost`` another name of it
    (another host may be production): the redirect is not followed, by the preflight (its own
    HTTP client) or the crawl, as if robots.txt had none (everything allowed)."""
    site = audit_behind_robots_redirect(host, other, tmp_path, monkeypatch)
    assert other.log == []
    assert [hit.path for hit in site.log].count("/robots.txt") == 2  # the redirect was met by both
    assert all(carries_all(hit) for hit in site.log)
    assert rows(tmp_path / "out")[site.url + "kept-out"]["outcome"] == "listed"
    assert check_set(tmp_path / "out" / "sitemap.xml", PROD) == []


def test_a_request_to_another_origin_through_the_audits_middleware_chain_is_stripped(
    other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = serve({"/probe": (200, HTML, page("Probe", ""))})
    monkeypatch.setenv("PROBE_OTHER_URL", f"http://127.0.0.1:{other.server_address[1]}/probe")
    try:
        result = audit([sys.executable, "-m", "tests.credential_probe"], site, tmp_path / "out", monkeypatch)
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr
    probes = [hit for hit in site.log if hit.path == "/probe"]
    assert len(probes) == 1 and carries_all(probes[0])  # what the copy sent to the other origin started with
    assert [hit.path for hit in other.log] == ["/robots.txt", "/probe"]  # it left, after that origin's robots.txt
    assert all(bare(hit) for hit in other.log)
    assert all(carries_all(hit) for hit in site.log)


def aimed_away(other: str) -> Routes:
    """A staging site pointing at *other* in every way a crawl could be led there."""
    urlset = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{PROD}/</loc></url><url><loc>{other}/listed</loc></url></urlset>\n"
    )
    home = (
        f'<a href="{other}/linked">away</a> <a href="{other.replace("127.0.0.1", "localhost")}/host">host</a> '
        '<a href="/away">redirect</a> <a href="/canon">canon</a> '
        f'<a href="/en/">en</a> <img src="{other}/image.png" alt="">'
    )
    hreflang = f'<link rel="alternate" hreflang="de" href="{other}/de/">'
    robots = f"User-agent: *\nAllow: /\nSitemap: {other}/sitemap.xml\nSitemap: {PROD}/sitemap.xml\n"
    return {
        "/robots.txt": (200, TEXT, robots),
        "/sitemap.xml": (200, {"Content-Type": "application/xml"}, urlset),
        "/": (200, HTML, page("Home", home, f'<link rel="canonical" href="{PROD}/">')),
        "/away": (302, {"Location": f"{other}/redirected"}, ""),
        "/canon": (200, HTML, page("Canon", "", f'<link rel="canonical" href="{other}/canonical">')),
        "/en/": (200, HTML, page("English", "", f'<link rel="alternate" hreflang="en" href="{PROD}/en/">{hreflang}')),
    }  # fmt: skip


def test_every_way_off_the_origin_leaves_the_other_origin_untouched(
    other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    away = f"http://127.0.0.1:{other.server_address[1]}"
    site = serve(aimed_away(away))
    try:
        result = audit([], site, tmp_path / "out", monkeypatch)
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr
    assert other.log == []
    assert all(carries_all(hit) for hit in site.log)
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    report = {row["url"]: row for row in data["urls"]}
    for url in ("/linked", "/redirected", "/listed", "/canonical", "/de/"):
        assert report[away + url]["reason"] == "out-of-scope", url
    assert report[away.replace("127.0.0.1", "localhost") + "/host"]["reason"] == "out-of-scope"
    assert report[site.url + "canon"]["reason"] == "canonicalised"
    explained = {(f["kind"], f["url"]): f["detail"] for f in data["findings"]}
    assert explained["canonical-not-indexable", site.url + "canon"].endswith("is out-of-scope")
    assert explained["hreflang-errors", site.url + "en/"].endswith("is out-of-scope")
    assert data["sitemaps"]["sources"] == [site.url + "sitemap.xml"]  # the other origin's is not read, but named
    assert any(away + "/sitemap.xml" in f["detail"] for f in data["findings"] if f["kind"] == "sitemap-errors")
    crawl = [json.loads(line) for line in (tmp_path / "out" / "crawl-report.jsonl").read_text().splitlines()]
    assert {"url": away + "/sitemap.xml", "outcome": "warning", "reason": "sitemap-other-origin",
            "detail": "named in robots.txt; not read"} in crawl  # fmt: skip
    assert check_set(tmp_path / "out" / "sitemap.xml", PROD) == []


@pytest.mark.parametrize("blocker", ["header", "meta", "robots"])
def test_each_staging_blocker_is_found_with_credentials_that_stay_on_staging(
    blocker: str, other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """robots.txt redirected on the origin: the blocker (there, for ``robots``) found; a link
    to another origin never followed."""
    rules = "User-agent: *\n" + ("Disallow: /\n" if blocker == "robots" else "Disallow: /kept-out\n")
    meta = '<meta name="robots" content="noindex">' if blocker == "meta" else ""
    elsewhere = f"http://127.0.0.1:{other.server_address[1]}"
    site = serve({
        "/robots.txt": (301, {"Location": "/staging/robots.txt"}, ""),
        "/staging/robots.txt": (200, TEXT, rules),
        "/": (200, HTML, page("Home", f'<a href="/about">About</a> <a href="{elsewhere}/linked">away</a>', meta)),
        "/about": (200, HTML, page("About", '<a href="/">Home</a>', meta)),
    }, blocker)  # fmt: skip
    try:
        blocked = audit([], site, tmp_path / "blocked", monkeypatch, "--fail-on", "staging-blocker")
        preview = audit([], site, tmp_path / "preview", monkeypatch, "--as-if-no-blocker")
    finally:
        site.stop()
    assert blocked.returncode == 4, blocked.stderr
    data = json.loads((tmp_path / "blocked" / "report.json").read_text())
    assert [b["kind"] for b in data["blockers"]] == [blocker]
    assert preview.returncode == 0, preview.stderr
    assert rows(tmp_path / "preview")[site.url + "about"]["outcome"] == "listed"
    assert check_set(tmp_path / "preview" / "sitemap.xml", PROD) == []
    # The preflight and the crawl of each run read the redirected file, with credentials.
    assert [hit.path for hit in site.log].count("/staging/robots.txt") == 4
    assert other.log == []
    assert all(carries_all(hit) for hit in site.log)


@pytest.mark.parametrize(
    ("target", "crawl", "audit"),
    [
        ("https://staging.example.com/robots/robots.txt", True, True),  # another path
        ("http://staging.example.com/robots.txt", True, True),  # https to http, default ports
        ("https://staging.example.com:8443/robots.txt", False, False),  # another port: any service
        ("https://www.example.com/robots.txt", True, False),  # the same site, another host: production
        ("https://www.example.com:6379/robots.txt", False, False),
        ("https://user:pw@www.example.com/robots.txt", False, False),  # credentials from the site
        ("https://www.example.com:99999/robots.txt", False, False),
        ("https://other.org/robots.txt", False, False),
        ("file:///etc/passwd", False, False),
    ],
)
def test_which_robots_txt_redirects_are_followed(target: str, crawl: bool, audit: bool) -> None:
    origin = "https://staging.example.com/"
    assert redirect_followed(origin, target) is crawl
    assert redirect_followed(origin, target, same_host=True) is audit


def test_the_preflight_sends_no_credentials_on_a_robots_txt_hop_to_https() -> None:
    """The one robots.txt hop the preflight follows off its origin is http to https on the same
    host (the default ports): it goes without the credentials, which were given for the origin
    alone. Default ports cannot be opened here, so the fetcher is a recording stand-in."""
    from crawler.audit.preflight import _robots
    from crawler.services.http import Fetched

    asked: list[tuple[str, dict[str, str]]] = []

    def get(url: str, *, max_bytes: int, headers: dict[str, str]) -> Fetched:
        asked.append((url, dict(headers)))
        if url.startswith("http://"):
            return Fetched(url, 301, (("Location", "https://staging.example.com/robots.txt"),), b"")
        return Fetched(url, 200, (("Content-Type", "text/plain"),), b"User-agent: *\nAllow: /\n")

    robots = _robots(get, "http://staging.example.com/", {"Authorization": "Basic c2VjcmV0"})
    assert robots.status == 200
    assert asked == [
        ("http://staging.example.com/robots.txt", {"Authorization": "Basic c2VjcmV0"}),
        ("https://staging.example.com/robots.txt", {}),
    ]
