"""What sits in the output folder or beside it cannot make a run write or serve elsewhere (issue 37):
a lock file that is a symlink is refused (one line, exit 2) and its target left as it was; a
shard or index replaced by a symlink is replaced by the run's own file, even when its content
did not change. Real crawls through the CLI against tests/server.py's site."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import crawl, sitemap_locs
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
