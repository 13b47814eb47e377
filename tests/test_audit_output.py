"""The audit's output, built aside and swapped in whole (issue 23, item 11): a failed,
blocked or interrupted audit leaves the previous output byte for byte, and says so."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from crawler.audit import staged
from crawler.audit.staged import StagedFolder
from crawler.cli.audit_output import AuditOutput
from crawler.validate.sets import check_set
from tests.audit_site import audit, routes, site
from tests.conftest import CLI
from tests.staging_site import PASSWORD, PROD, USER, StagingServer

__all__ = ["site"]  # the fixture, used by name

# --- the audit's output, swapped in whole -----------------------------------------------------------


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")
            if p.is_file()}  # fmt: skip


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if ".audit-" in p.name)


def test_a_failed_audit_leaves_the_previous_output_byte_for_byte(site: StagingServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = audit(site, out, "--production-url", PROD)
    assert first.returncode == 0, first.stderr
    assert check_set(out / "sitemap.xml", PROD) == []
    before = hashes(out)
    assert {"report.json", "report.html", "urls.csv", "sitemap.xml", "crawl-report.jsonl"} <= before.keys()
    assert not any(".audit-new-" in (out / name).read_text("utf-8", "replace") for name in before)
    finished = json.loads((out / "report.json").read_text())["audit"]["finished"]
    refused = audit(site, out, "--production-url", PROD, password="wrong-" + PASSWORD)
    assert refused.returncode == 1, refused.stderr
    assert hashes(out) == before
    assert f"the previous audit output in {out} was left as it was (written {finished})" in refused.stderr
    assert leftovers(out) == []


def test_a_blocked_audit_replaces_the_whole_folder(site: StagingServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert audit(site, out, "--production-url", PROD).returncode == 0
    assert (out / "sitemap.xml").exists()
    site.routes = routes(noindex=True)
    blocked = audit(site, out, "--production-url", PROD)
    assert blocked.returncode == 0, blocked.stderr
    assert "No production sitemap" in blocked.stderr
    assert not list(out.glob("sitemap*")), "a stale sitemap of the earlier run is left"
    data = json.loads((out / "report.json").read_text())
    assert data["summary"]["outcomes"].get("listed", 0) == 0
    assert leftovers(out) == []


class _Stalled(dict[str, tuple[int, dict[str, str], str]]):
    """Routes whose ``/b`` answers only once released: the crawl is surely running then."""

    def __init__(self) -> None:
        super().__init__(routes())
        self.reached, self.release = threading.Event(), threading.Event()

    def get(self, key: str, default: Any = None) -> Any:
        if key == "/b":
            self.reached.set()
            self.release.wait(60)
        return super().get(key, default)


def test_an_interrupted_audit_leaves_the_previous_output(site: StagingServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert audit(site, out, "--production-url", PROD).returncode == 0
    before = hashes(out)
    stalled = _Stalled()
    site.routes = stalled
    command = [str(CLI), "audit", site.url, "--out", str(out), "--production-url", PROD, "--user", USER,
               "--password-env", "AUDIT_PASSWORD", "--delay", "0"]  # fmt: skip
    env = {**os.environ, "AUDIT_PASSWORD": PASSWORD}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert stalled.reached.wait(60), "the crawl never asked for /b"
        process.send_signal(signal.SIGTERM)
    finally:
        stalled.release.set()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert hashes(out) == before
    assert "the previous audit output" in stderr and leftovers(out) == []


def test_a_folder_that_is_not_an_audits_is_refused(site: StagingServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("mine")
    result = audit(site, out, "--production-url", PROD)
    assert result.returncode == 2 and "holds files that are not an audit's output" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and site.log == []
    assert hashes(out) == {"index.html": hashlib.sha256(b"mine").hexdigest()} and leftovers(out) == []


@pytest.mark.parametrize("atomic", [True, False])
def test_the_swap_exchanges_the_folders_or_falls_back_to_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, atomic: bool
) -> None:
    if not atomic:
        monkeypatch.setattr(staged, "exchange", lambda first, second: False)
    elif sys.platform == "linux":  # the atomic way is the one taken here (glibc 2.28+, any local filesystem)
        a, b = tmp_path / "a", tmp_path / "b"
        a.mkdir(), b.write_text("b")
        assert staged.exchange(a, b) is True and a.read_text() == "b" and b.is_dir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    folder = StagedFolder.begin(out)
    (folder.staging / "new.txt").write_text("new")
    folder.swap_in()
    assert hashes(out).keys() == {"new.txt"} and leftovers(out) == []


def test_an_exception_leaves_out_as_it_was(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text(json.dumps({"audit": {"finished": "2026-01-02T03:04:05+00:00"}}))
    before = hashes(out)
    settings = Settings({"SITEMAP_REPORT_PATH": str(out / "crawl-report.jsonl")})
    with pytest.raises(RuntimeError), AuditOutput(settings, out) as output:
        (output.folder / "report.json").write_text("{}")
        assert settings.get("SITEMAP_OUTPUT_DIR") == str(output.folder)
        assert settings.get("SITEMAP_REPORT_PATH") == str(output.folder / "crawl-report.jsonl")
        raise RuntimeError
    assert hashes(out) == before and leftovers(out) == []
    assert "left as it was (written 2026-01-02T03:04:05+00:00)" in capsys.readouterr().err
