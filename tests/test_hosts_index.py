"""One index of every host's sitemaps on one host (--index-host): cross-submission. Each host
keeps its own set in OUT/HOST/; the index host's folder gets one more index listing every
host's files on their own hosts, which `validate OUT` reads against the sets beside it.

The hosts are names on one server on 127.0.0.1, reached only through --resolve (tests/hosts_site.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from crawler.validate.document import check_document
from crawler.validate.sets import check_set
from tests.conftest import run_cli
from tests.hosts_site import HostsSite, plain, resolve_options

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
HOSTS = ("a.plain.test", "b.plain.test", "c.plain.test", "www.plain.test")


def index_of_hosts(path: Path) -> list[tuple[str, str | None]]:
    """(loc, lastmod) of each entry, after checking the document: a sitemapindex within the
    protocol's limits, well escaped, every entry with a loc first."""
    report = check_document(path.read_bytes(), str(path), None)
    assert [finding for finding in report.findings if finding.rule != "host"] == [], report.findings
    root = etree.parse(str(path)).getroot()
    assert root.tag == SITEMAP + "sitemapindex"
    entries = []
    for sitemap in root:
        assert [child.tag for child in sitemap][:1] == [SITEMAP + "loc"]
        entries.append((sitemap.findtext(SITEMAP + "loc") or "", sitemap.findtext(SITEMAP + "lastmod")))
    return entries


def own_files(out: Path, host: str, port: int) -> list[str]:
    """The files a host's own index lists, checked as a set on that host's origin."""
    index = out / host / "sitemap.xml"
    assert check_set(index, f"http://{host}:{port}") == []
    root = etree.parse(str(index)).getroot()
    return [loc.text or "" for loc in root.iter(SITEMAP + "loc")]


@pytest.fixture
def site() -> Iterator[HostsSite]:
    hosts = plain()
    del hosts["blog.plain.test"]  # linked from nowhere: four hosts, each with a set
    server = HostsSite(hosts).start()
    yield server
    server.stop()


def crawl(site: HostsSite, out: Path, *options: str) -> tuple[int, str, str]:
    pinned = resolve_options([*site.hosts], site.port)
    process = run_cli("crawl", site.root("www.plain.test"), "--out", str(out), "--subdomains", *pinned, *options)
    return process.returncode, process.stdout, process.stderr


def test_the_index_host_lists_every_hosts_files_on_their_own_hosts(site: HostsSite, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = crawl(site, out, "--index-host", "www.plain.test")
    assert code == 0, stderr
    index = out / "www.plain.test" / "sitemap-hosts.xml"
    entries = index_of_hosts(index)
    expected = [file for host in HOSTS for file in own_files(out, host, site.port)]
    own = own_files(out, "www.plain.test", site.port)
    assert [loc for loc, _ in entries] == own + [file for file in expected if file not in own]  # its own first
    assert all(lastmod for _, lastmod in entries)
    url = f"http://www.plain.test:{site.port}/sitemap-hosts.xml"
    assert [line for line in stdout.splitlines() if line.startswith("Sitemap: ")] == [f"Sitemap: {url}"]
    assert "Add to the robots.txt of every host this line" in stderr
    assert f"One index of every host's sitemaps: {url} (--index-host)" in stderr
    manifest = json.loads((out / "www.plain.test" / ".sitemap-manifest.json").read_text("utf-8"))
    assert "sitemap-hosts.xml" in manifest["extras"]  # ours: never taken for another tool's file
    for host in HOSTS[:3]:
        assert not (out / host / "sitemap-hosts.xml").exists()
    process = run_cli("validate", str(out))
    assert process.returncode == 0, process.stdout + process.stderr


def test_a_second_run_keeps_the_index_and_drops_it_with_the_option(site: HostsSite, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert crawl(site, out, "--index-host", "www.plain.test")[0] == 0
    index = out / "www.plain.test" / "sitemap-hosts.xml"
    before = index.read_bytes()
    del site.hosts["c.plain.test"]["/"]  # c's only page goes: its set is withdrawn
    code, _, stderr = crawl(site, out, "--index-host", "www.plain.test", "--accept-shrink")
    assert code == 0, stderr
    after = [loc for loc, _ in index_of_hosts(index)]
    assert after and not [loc for loc in after if "c.plain.test" in loc] and index.read_bytes() != before
    assert crawl(site, out)[0] == 0  # without --index-host: the index goes with the next publish
    assert not index.exists()
    manifest = json.loads((out / "www.plain.test" / ".sitemap-manifest.json").read_text("utf-8"))
    assert "sitemap-hosts.xml" not in manifest["extras"]


def test_validate_finds_an_entry_of_the_index_that_no_host_set_holds(site: HostsSite, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert crawl(site, out, "--index-host", "www.plain.test")[0] == 0
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    index = broken / "www.plain.test" / "sitemap-hosts.xml"
    a_shard, b_shard = (f"http://{host}:{site.port}/sitemap-1.xml" for host in ("a.plain.test", "b.plain.test"))
    text = index.read_text("utf-8").replace(a_shard, a_shard.replace("-1.", "-9."))
    index.write_text(text.replace(b_shard, b_shard.replace("sitemap-1.xml", "sitemap.xml")))
    process = run_cli("validate", str(broken))
    assert process.returncode != 0
    assert f"http://a.plain.test:{site.port}/sitemap-9.xml: not a file of a.plain.test's set" in process.stdout
    assert f"http://b.plain.test:{site.port}/sitemap.xml is an index: an index may not list another" in process.stdout


def test_check_reads_each_hosts_sitemaps_its_robots_txt_vouches_for(site: HostsSite, tmp_path: Path) -> None:
    """Served as written: www's robots.txt names the index of every host; a's and b's name it too,
    so their sitemaps listed there are read on their own hosts; c's does not, which is said."""
    out = tmp_path / "out"
    assert crawl(site, out, "--index-host", "www.plain.test")[0] == 0
    url = f"http://www.plain.test:{site.port}/sitemap-hosts.xml"
    for host in HOSTS:
        for path in (out / host).glob("*.xml"):
            site.hosts[host]["/" + path.name] = (200, {"Content-Type": "application/xml"}, path.read_text("utf-8"))
        named = "" if host == "c.plain.test" else f"Sitemap: {url}\n"
        site.hosts[host]["/robots.txt"] = (200, {"Content-Type": "text/plain"}, f"User-agent: *\nAllow: /\n{named}")
    site.hits.clear()
    pinned = resolve_options([*site.hosts], site.port)
    process = run_cli("check", f"http://www.plain.test:{site.port}/", *pinned, timeout=60)
    assert process.returncode == 1, process.stdout + process.stderr
    findings = process.stdout.strip().splitlines()
    assert len(findings) == 1 and "cross-host" in findings[0], findings
    assert f"lists 1 sitemap on http://c.plain.test:{site.port}, whose robots.txt does not name it" in findings[0]
    fetched = {(hit.host, hit.path) for hit in site.hits}
    assert {("a.plain.test", "/sitemap-1.xml"), ("b.plain.test", "/sitemap-1.xml")} <= fetched
    assert ("c.plain.test", "/sitemap-1.xml") not in fetched  # not vouched for: not read as part of the set
    assert {("a.plain.test", "/robots.txt"), ("c.plain.test", "/robots.txt")} <= fetched
    # c's robots.txt moved (a redirect, followed as the site's own is) and names the index now.
    site.hosts["c.plain.test"]["/robots.txt"] = (301, {"Location": "/robots-new.txt"}, "")
    site.hosts["c.plain.test"]["/robots-new.txt"] = (200, {"Content-Type": "text/plain"}, f"Sitemap: {url}\n")
    vouched = run_cli("check", f"http://www.plain.test:{site.port}/", *pinned, timeout=60)
    assert (vouched.returncode, vouched.stdout) == (0, ""), vouched.stdout + vouched.stderr
    # --expect OUT/www: each host's file is compared with the folder of its own host.
    expect = ("--expect", str(out / "www.plain.test"))
    same = run_cli("check", f"http://www.plain.test:{site.port}/", *expect, *pinned, timeout=60)
    assert (same.returncode, same.stdout) == (0, ""), same.stdout + same.stderr
    status, headers, body = site.hosts["a.plain.test"]["/sitemap-1.xml"]
    site.hosts["a.plain.test"]["/sitemap-1.xml"] = (status, headers, body.replace("</urlset>", "<!-- x --></urlset>"))
    stale = run_cli("check", f"http://www.plain.test:{site.port}/", *expect, *pinned, timeout=60)
    findings = stale.stdout.strip().splitlines()
    assert len(findings) == 1 and f"stale: http://a.plain.test:{site.port}/sitemap-1.xml differs" in findings[0]
    # An entry on a host of another site is never fetched: it stays a host error.
    site.hosts["www.other.test"] = {"/robots.txt": (200, {"Content-Type": "text/plain"}, f"Sitemap: {url}\n")}
    status, headers, body = site.hosts["www.plain.test"]["/sitemap-hosts.xml"]
    foreign = f"http://www.other.test:{site.port}/sitemap-1.xml"
    body = body.replace("</sitemapindex>", f"<sitemap><loc>{foreign}</loc></sitemap></sitemapindex>")
    site.hosts["www.plain.test"]["/sitemap-hosts.xml"] = (status, headers, body)
    site.hits.clear()
    pinned = resolve_options([*site.hosts], site.port)
    elsewhere = run_cli("check", f"http://www.plain.test:{site.port}/", *pinned, timeout=60)
    assert elsewhere.returncode == 1 and f"host: {foreign} is not on" in elsewhere.stdout, elsewhere.stdout
    assert site.hits_of("www.other.test") == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--index-host", "www.plain.test"], "--index-host lists the sitemaps of several hosts"),
        (["--subdomains", "--index-host", "www.other.test"], "--index-host www.other.test is not a host of this"),
        (["--subdomains", "--index-host", "bad host"], "is not a host name (--index-host)"),
    ],
)
def test_a_wrong_index_host_is_one_line_and_exit_2(tmp_path: Path, options: list[str], message: str) -> None:
    process = run_cli("crawl", "http://www.plain.test/", "--out", str(tmp_path / "out"), *options)
    assert process.returncode == 2
    assert message in process.stderr and "Traceback" not in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1, process.stderr


def test_a_file_of_that_name_that_is_not_ours_is_left_alone(site: HostsSite, tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "www.plain.test").mkdir(parents=True)
    mine = out / "www.plain.test" / "sitemap-hosts.xml"
    mine.write_text("<p>the site's own</p>")
    code, stdout, stderr = crawl(site, out, "--index-host", "www.plain.test")
    assert mine.read_text() == "<p>the site's own</p>"
    assert code == 0, stderr  # each host's own set is published; only the index of every host is not
    assert "No index of every host's sitemaps (--index-host):" in stderr and "not written by sitemap-crawler" in stderr
    assert f"http://www.plain.test:{site.port}/sitemap-hosts.xml" not in stdout
