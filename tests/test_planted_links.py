"""What sits in the output folder or beside it cannot make a run write or serve elsewhere (issue 37):
a lock file that is a symlink is refused (one line, exit 2) and its target left as it was; a
shard or index replaced by a symlink is replaced by the run's own file, even when its content
did not change. Real crawls through the CLI against tests/server.py's site."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crawler.audit.changes import MAX_REPORT_BYTES, read_previous
from tests.conftest import crawl, run_cli, sitemap_locs
from tests.server import SiteServer


@pytest.mark.parametrize("lock", ["out.lock", "out.state.sqlite.lock"])
def test_a_lock_file_that_is_a_symlink_is_refused(server: SiteServer, tmp_path: Path, lock: str) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / lock).symlink_to(target)
    result = crawl(server.url("/"), tmp_path / "out")
    assert result.code == 2, result.process.stderr
    lines = [line for line in result.process.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "is a symlink" in lines[0], lines
    assert "Traceback" not in result.process.stderr
    assert target.read_text() == "keep me\n"
    assert not (tmp_path / "out" / "sitemap.xml").exists()


def test_a_shard_or_index_replaced_by_a_symlink_is_replaced_by_our_file(server: SiteServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert crawl(server.url("/"), out).code == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("sitemap-1.xml", "sitemap.xml"):  # the same bytes, elsewhere: the run would keep them
        (outside / name).write_bytes((out / name).read_bytes())
        (out / name).unlink()
        (out / name).symlink_to(outside / name)
    again = crawl(server.url("/"), out)
    assert again.code == 0, again.process.stderr
    for name in ("sitemap-1.xml", "sitemap.xml"):
        assert not (out / name).is_symlink() and (out / name).is_file(), name
    assert (out / "sitemap-1.xml").read_bytes() == (outside / "sitemap-1.xml").read_bytes()  # ours, same URLs
    assert sitemap_locs(out, server.url("").rstrip("/"))  # the index names our files, all valid


def _climbing_index(folder: Path, origin: str) -> Path:
    """A local index whose entries name files above its folder: /etc/passwd, and an encoded /etc/hostname."""
    index = folder / "a" / "b" / "sitemap.xml"
    index.parent.mkdir(parents=True)
    entries = "".join(f"<sitemap><loc>{origin}/{path}</loc></sitemap>" for path in ("etc/passwd", "%2Fetc%2Fhostname"))
    index.write_text(f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>')
    return index


def test_a_local_index_cannot_make_validate_or_the_audit_read_above_its_folder(
    server: SiteServer, tmp_path: Path
) -> None:
    origin = "https://www.example.com"  # the production origin the index's locs name
    index = _climbing_index(tmp_path, origin)
    validated = run_cli("validate", str(index), "--origin", origin)
    assert not [line for line in validated.stdout.splitlines() if line.startswith("/etc/")]  # none read
    assert validated.stdout.count("missing") == 2, validated.stdout
    audited = run_cli(
        "audit", server.url("/"), "--production-url", origin, "--sitemap", str(index), "--out", str(tmp_path / "audit")
    )
    assert audited.returncode in (0, 4), audited.stderr
    report = (tmp_path / "audit" / "report.json").read_text()
    assert '"/etc/passwd"' not in report and "not well-formed" not in report  # never a file it read


@pytest.mark.parametrize(
    "args",
    [
        ["check", "http://u:pw-SECRET@127.0.0.1:9/"],
        ["validate", "http://u:pw-SECRET@127.0.0.1:9/sitemap.xml"],
        ["validate", ".", "--origin", "http://u:pw-SECRET@www.example.com"],
        ["crawl", "http://127.0.0.1:9/", "--render", "auto", "--render-allow-origin", "http://u:pw-SECRET@cdn.example"],
    ],
)
def test_a_url_with_credentials_is_refused_without_echoing_them(args: list[str], tmp_path: Path) -> None:
    process = run_cli(*args, "--out", str(tmp_path / "o")) if args[0] == "crawl" else run_cli(*args, cwd=tmp_path)
    assert process.returncode == 2
    assert "credentials" in process.stderr and "SECRET" not in process.stderr + process.stdout
    assert len(process.stderr.strip().splitlines()) == 1


def _earlier(folder: Path, kind: str) -> Path:
    """An earlier audit's folder whose report.json is a planted thing of *kind*."""
    folder.mkdir()
    report = folder / "report.json"
    if kind == "dev-zero":
        report.symlink_to("/dev/zero")
    elif kind == "symlink":  # to a real report, elsewhere: read through a link, it would pass
        elsewhere = folder.parent / "elsewhere.json"
        elsewhere.write_text(json.dumps({"findings": []}))
        report.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(report)
    elif kind == "deep":
        report.write_text("[" * 200_000 + "]" * 200_000)
    elif kind == "wrong-types":
        report.write_text(json.dumps({"findings": [{"kind": "broken-link", "grouped": ["not", "an", "object"]}]}))
    elif kind == "too-big":
        with report.open("wb") as file:
            file.truncate(MAX_REPORT_BYTES + 1)  # sparse: no disk used
    return folder


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("dev-zero", "symbolic link"),
        ("symlink", "symbolic link"),
        ("fifo", "not a regular file"),
        ("deep", "nested too deep"),
        ("wrong-types", "not an audit report"),
        ("too-big", f"larger than {MAX_REPORT_BYTES:,} bytes"),
    ],
)
def test_an_earlier_audit_that_is_not_one_is_refused_in_one_line(kind: str, why: str, tmp_path: Path) -> None:
    earlier = _earlier(tmp_path / "earlier", kind)
    with pytest.raises(ValueError, match=r"^--compare .*(not readable|not an audit report)") as refused:
        read_previous(earlier)
    assert "\n" not in str(refused.value) and why in str(refused.value), refused.value
    process = run_cli(
        "audit", "http://127.0.0.1:9/", "--production-url", "https://www.example.com",
        "--compare", str(earlier), "--out", str(tmp_path / "out"), timeout=60,
    )  # fmt: skip
    assert process.returncode == 2, process.stderr
    assert len(process.stderr.strip().splitlines()) == 1 and "Traceback" not in process.stderr
