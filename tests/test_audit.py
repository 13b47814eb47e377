"""``sitemap-crawler audit`` on a staging copy of www.example.com behind basic
auth: every planted problem found, production locs only, no secret leaked."""

from __future__ import annotations

import base64
import csv
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.audit.findings import Kind
from crawler.validate.sets import check_set
from settings import USER_AGENT
from tests.conftest import CLI, run_cli
from tests.staging_site import EVIL_TITLE, PASSWORD, PROD, USER, StagingServer, StagingSite

SECRETS = (PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())


@pytest.fixture
def other() -> Iterator[StagingServer]:
    server = StagingServer(password=False).start()
    yield server
    server.stop()


def staging(blocker: str | None, other: StagingServer) -> StagingServer:
    site = StagingSite(blocker, other.server_address[1])
    return StagingServer(site.routes(), header_blocker=blocker == "header").start()


@pytest.fixture
def site(other: StagingServer) -> Iterator[StagingServer]:
    server = staging(None, other)
    yield server
    server.stop()


def audit(server: StagingServer, out: Path, monkeypatch: pytest.MonkeyPatch, *options: str) -> Any:
    monkeypatch.setenv("AUDIT_PASSWORD", PASSWORD)
    result = run_cli(
        "audit", server.url, "--out", str(out), "--user", USER, "--password-env", "AUDIT_PASSWORD",
        "--production-url", PROD, "--delay", "0", "--concurrency", "8", *options,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    for secret in SECRETS:
        assert secret not in result.stdout + result.stderr
    return result


def report(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    return data


def found(data: dict[str, Any], kind: Kind) -> dict[str, dict[str, Any]]:
    """Findings of *kind* by path (staging URLs reduced to their path)."""
    return {"/" + f["url"].split("/", 3)[3]: f for f in data["findings"] if f["kind"] == kind.value}


def paths(urls: list[str]) -> set[str]:
    return {"/" + url.split("/", 3)[3] for url in urls}


def test_an_audit_finds_every_planted_problem(
    site: StagingServer, other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "audit"
    result = audit(site, out, monkeypatch, "--fail-on", "broken-links,redirect-loops")
    assert result.returncode == 4, result.stderr
    assert "--fail-on: broken-links, redirect-loops found" in result.stderr
    data = report(out)
    assert set(found(data, Kind.BROKEN_LINKS)) >= {"/missing", "/gone"}
    assert paths(found(data, Kind.BROKEN_LINKS)["/missing"]["related"]) == {"/"}
    assert found(data, Kind.REDIRECT_CHAINS)["/old-page"]["detail"].startswith("2 hops: 301")
    assert set(found(data, Kind.REDIRECT_LOOPS)) == {"/loop-a"}
    assert set(found(data, Kind.TEMPORARY_REDIRECTS)) == {"/interim", "/temp", "/away"}
    assert paths(found(data, Kind.CANONICAL_CHAINS)["/canon-a"]["related"]) == {"/canon-a", "/canon-b", "/canon-c"}
    assert "is status (HTTP 404)" in found(data, Kind.CANONICAL_NOT_INDEXABLE)["/canon-dead"]["detail"]
    hreflang = [f["detail"] for f in data["findings"] if f["kind"] == Kind.HREFLANG_ERRORS.value]
    assert any("de" in d and "does not link back" in d for d in hreflang)
    assert any("fr" in d and "HTTP 404" in d for d in hreflang)
    assert any("invalid hreflang" in d and "xx" in d for d in hreflang)
    assert set(found(data, Kind.SOFT_404)) == {"/soft"}
    assert set(found(data, Kind.DEEP_PAGES)) == {"/deep/6", "/deep/7"}
    assert found(data, Kind.MIXED_CONTENT)["/"]["related"] == ["http://www.example.com/about"]
    # The comparison with the site's own sitemaps (robots.txt names the production index).
    assert set(found(data, Kind.LISTED_NOT_INDEXABLE)) == {"/old-page", "/missing", "/private", "/canon-a"}
    assert set(found(data, Kind.ORPHANS)) == {"/orphan"}
    assert "/about" in found(data, Kind.LISTED_TWICE)
    assert "/contact" in found(data, Kind.INDEXABLE_NOT_LISTED)
    assert "/orphan" not in found(data, Kind.INDEXABLE_NOT_LISTED)
    assert [f["kind"] for f in data["findings"]].count(Kind.FUTURE_LASTMOD.value) == 1
    assert [f["kind"] for f in data["findings"]].count(Kind.SAME_LASTMOD.value) == 1
    assert not found(data, Kind.STAGING_BLOCKER)
    # Every URL seen is explained.
    rows = {row["url"]: row for row in data["urls"]}
    assert all(row["outcome"] in ("listed", "excluded") for row in rows.values())
    assert all(row["reason"] for row in rows.values() if row["outcome"] == "excluded")
    home = rows[site.url]
    assert (home["title"], home["production_url"], home["in_sitemaps"]) == (EVIL_TITLE, PROD + "/", True)
    assert rows[site.url + "products"]["outcome"] == "listed"  # linked only through a production URL
    with open(out / "urls.csv", newline="") as file:
        assert len(list(csv.DictReader(file))) == len(rows)
    for kind in Kind:
        with open(out / f"findings-{kind.value}.csv", newline="") as file:
            lines = list(csv.DictReader(file))
        count = sum(max(1, len(f["related"])) for f in data["findings"] if f["kind"] == kind.value)
        assert len(lines) == count, kind
    with open(out / "findings-broken-links.csv", newline="") as file:
        broken = {(line["url"], line["related"]) for line in csv.DictReader(file)}
    assert (site.url + "missing", site.url) in broken
    # The production sitemap: production locs only, valid without a warning.
    assert check_set(out / "sitemap.xml", PROD) == []
    text = "".join(p.read_text() for p in out.glob("sitemap*.xml"))
    assert "127.0.0.1" not in text and f"<loc>{PROD}/products</loc>" in text
    # Credentials went to the staging origin only, and nowhere in the output.
    assert other.log == []  # scope kept every link and redirect off it (leaving requests: test_audit_credentials.py)
    assert rows[f"http://127.0.0.1:{other.server_address[1]}/landing"]["reason"] == "out-of-scope"
    assert all(hit.authorization for hit in site.log)
    # The preflight, the crawl and the reading of the site's sitemaps all send the crawler's User-Agent.
    assert {hit.agent for hit in site.log} == {USER_AGENT}
    assert {"/robots.txt", "/sitemap-one.xml"} <= {hit.path for hit in site.log}
    for path in out.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert all(secret.encode() not in content for secret in SECRETS), path


def test_the_html_report_shows_site_strings_as_text(
    site: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "audit"
    assert audit(site, out, monkeypatch).returncode == 0
    html = (out / "report.html").read_text()
    assert html.count("<script") == 2  # the data block and our own script, nothing planted
    assert EVIL_TITLE not in html and "<img src=x" not in html
    assert "\\u003c/script\\u003e\\u003cscript\\u003e" in html  # the title, inside the JSON data block
    assert "default-src 'none'" in html and "http" not in html.split("<script>")[-1]  # no network in our script


@pytest.mark.parametrize("blocker", ["header", "meta", "robots"])
def test_a_staging_blocker_is_found_and_can_be_read_away(
    blocker: str, other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = staging(blocker, other)
    try:
        blocked = audit(server, tmp_path / "blocked", monkeypatch, "--fail-on", "staging-blocker")
        preview = audit(server, tmp_path / "preview", monkeypatch, "--as-if-no-blocker")
    finally:
        server.stop()
    assert blocked.returncode == 4, blocked.stderr
    assert "STAGING BLOCKER" in blocked.stderr
    data = report(tmp_path / "blocked")
    assert [b["kind"] for b in data["blockers"]] == [blocker]
    assert "Staging blocker" in (tmp_path / "blocked" / "report.html").read_text()
    assert data["summary"]["outcomes"].get("listed", 0) == 0
    assert not (tmp_path / "blocked" / "sitemap.xml").exists()
    assert preview.returncode == 0, preview.stderr
    urls = report(tmp_path / "preview")["urls"]
    rows = {"/" + row["url"].split("/", 3)[3]: row for row in urls if row["url"].startswith(server.url)}
    assert rows["/about"]["outcome"] == "listed"
    assert rows["/private"]["reason"] == "noindex"  # its own, different noindex still counts
    assert report(tmp_path / "preview")["audit"]["as_if_no_blocker"] is True
    assert check_set(tmp_path / "preview" / "sitemap.xml", PROD) == []


def test_ignore_robots_is_loud_and_recorded(
    other: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = staging("robots", other)
    try:
        result = audit(server, tmp_path / "out", monkeypatch, "--ignore-robots")
    finally:
        server.stop()
    assert result.returncode == 0
    assert f"robots.txt of {server.url} is IGNORED (--ignore-robots)" in result.stderr
    data = report(tmp_path / "out")
    assert data["audit"]["ignore_robots"] is True
    assert data["summary"]["outcomes"]["listed"] > 5


def test_refused_credentials_stop_the_audit_with_a_message(
    site: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIT_PASSWORD", "wrong-" + PASSWORD)
    result = run_cli(
        "audit", site.url, "--out", str(tmp_path / "out"), "--user", USER, "--password-env", "AUDIT_PASSWORD",
        "--production-url", PROD,
    )  # fmt: skip
    assert result.returncode == 1
    assert "answered HTTP 401: the credentials given were refused" in result.stderr
    assert [(hit.path, hit.agent) for hit in site.log] == [("/", USER_AGENT)]  # the preflight's one request
    assert PASSWORD not in result.stderr and "Traceback" not in result.stderr
    unknown = run_cli("audit", site.url, "--out", str(tmp_path / "x"), "--fail-on", "broken-link")
    assert unknown.returncode == 2 and "unknown finding kind 'broken-link'" in unknown.stderr


def test_secrets_given_on_the_command_line_are_masked_in_ps(site: StagingServer, tmp_path: Path) -> None:
    command = [str(CLI), "audit", site.url, "--out", str(tmp_path / "out"), "--user", USER, "--password", PASSWORD,
               "--cookie", "session=c00kie-value", "--header", "X-Token: t0ken-value", "--delay", "0",
               "--production-url", PROD]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    site.watch_pid = process.pid
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert site.cmdlines and "--password ***" in site.cmdlines[0] and "--cookie ***" in site.cmdlines[0]
    assert "--header ***" in site.cmdlines[0], site.cmdlines
    for secret in (PASSWORD, "c00kie-value", "t0ken-value"):
        assert secret not in site.cmdlines[0] and secret not in stdout + stderr
    assert all(hit.cookie == "session=c00kie-value" for hit in site.log)
    assert all(("X-Token", "t0ken-value") in hit.headers for hit in site.log)


NETSCAPE_COOKIES = """# Netscape HTTP Cookie File
127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tc00kie-value
#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t4102444800\tprefs\tdark
127.0.0.1\tFALSE\t/\tFALSE\t1000000000\texpired\tgone
127.0.0.1\tFALSE\t/\tTRUE\t0\ttls-only\ts3cure-value
.example.org\tTRUE\t/\tFALSE\t0\tforeign\tn0t-for-this-site
"""


def test_secrets_from_the_environment_and_a_cookie_file_reach_the_staging_origin(
    site: StagingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--header-env and --cookie-file keep the secrets off the command line: the staging
    origin gets them on every request (a cookies.txt's cookies for its host, unexpired; that
    they never leave it is test_audit_credentials.py's), and no output or written file shows them."""
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(NETSCAPE_COOKIES)
    monkeypatch.setenv("STAGING_TOKEN", "X-Token: t0ken-value")
    out = tmp_path / "out"
    result = audit(site, out, monkeypatch, "--header-env", "STAGING_TOKEN", "--cookie-file", str(cookies))
    assert result.returncode == 0, result.stderr
    assert site.log and all(hit.cookie == "session=c00kie-value; prefs=dark" for hit in site.log), site.log
    assert all(("X-Token", "t0ken-value") in hit.headers for hit in site.log)
    written = "".join(path.read_text(errors="replace") for path in out.rglob("*") if path.is_file())
    for secret in ("t0ken-value", "c00kie-value"):
        assert secret not in written + result.stdout + result.stderr


def test_a_cookie_file_is_matched_as_a_browser_matches() -> None:
    """Host-only cookies for their host alone, a domain cookie for its subdomains too, Secure
    ones over https only (the end-to-end test above sends none of them over http)."""
    import tempfile

    from settings.secret_sources import cookies_from_file

    lines = [
        "example.com\tFALSE\t/\tFALSE\t0\thost-only\t1",
        ".example.com\tTRUE\t/\tFALSE\t0\tdomain\t2",
        "staging.example.com\tFALSE\t/\tTRUE\t0\tsecure\t3",
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as file:
        file.write("# Netscape HTTP Cookie File\n" + "\n".join(lines) + "\n")
        file.flush()
        assert cookies_from_file(file.name, "https://staging.example.com/") == ["domain=2", "secure=3"]
        assert cookies_from_file(file.name, "http://staging.example.com/") == ["domain=2"]
        assert cookies_from_file(file.name, "http://example.com/") == ["host-only=1", "domain=2"]


def test_a_cookie_file_too_big_is_refused_in_one_line(tmp_path: Path) -> None:
    """A planted cookie file is read to its limit only (a sparse file: no disk used)."""
    from settings.secret_sources import COOKIE_FILE_BYTES, cookies_from_file

    planted = tmp_path / "cookies.txt"
    with planted.open("wb") as file:
        file.truncate(COOKIE_FILE_BYTES + 1)
    with pytest.raises(ValueError, match=f"^cannot read --cookie-file .*: larger than {COOKIE_FILE_BYTES:,} bytes$"):
        cookies_from_file(str(planted), "https://staging.example.com/")


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--header-env", "NO_SUCH_VARIABLE"], "--header-env NO_SUCH_VARIABLE: no such environment variable"),
        (["--header-env", "HOME"], "--header-env HOME: expected 'Name: value' on one line"),
        (["--cookie-file", "/nonexistent/cookies.txt"], "cannot read --cookie-file /nonexistent/cookies.txt"),
        (["--cookie-file", "FIFO"], ": not a regular file"),
        (["--cookie-file", "BAD"], ":2: expected name=value"),
        (["--cookie-file", "LINK"], "cannot read --cookie-file"),
    ],
)
def test_a_secret_source_that_cannot_be_read_is_one_line_without_the_secret(
    site: StagingServer, tmp_path: Path, options: list[str], words: str
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("session=s3cret-value\nno equals sign s3cret-value\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it to read would wait for a writer for ever
    link = tmp_path / "link"
    link.symlink_to(bad)
    names = {"FIFO": str(fifo), "BAD": str(bad), "LINK": str(link)}
    given = [names.get(option, option) for option in options]
    result = run_cli("audit", site.url, "--out", str(tmp_path / "out"), "--production-url", PROD, *given, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.stderr
    assert "s3cret-value" not in result.stderr and not site.log


def test_each_cookie_value_is_masked_on_its_own_in_log_lines() -> None:
    """A log line quoting one cookie of several shows none of it (a value too short to mask
    alone, ``1``, would mask ordinary text, and is left)."""
    import logging

    from crawler.logs import SecretsFilter
    from settings.staging import MASK, StagingAccess

    access = StagingAccess((("http://127.0.0.1/", (("Cookie", "sess=c00kie-one; theme=s3cond-val; n=1"),)),))
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "set %s by the server, n=1", ("s3cond-val",), None)
    SecretsFilter(access.secrets).filter(record)
    assert record.getMessage() == f"set {MASK} by the server, n=1"
