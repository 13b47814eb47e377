"""--stylesheet (SPEC S4): an XSL beside the set and a processing instruction in every file, so a
person opening sitemap.xml in a browser sees a table. Checked in real Chromium (Debian's, headless,
its DOM dumped), and the files stay valid for validate and the official schemas."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from lxml import etree, html

from crawler.sitemaps.stylesheet import STYLESHEET
from crawler.validate.sets import check_set
from tests.conftest import crawl
from tests.server import SiteServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-headless-shell")
INSTRUCTION = b'<?xml-stylesheet type="text/xsl" href="sitemap.xsl"?>'


class _Quiet(SimpleHTTPRequestHandler):
    extensions_map = {".xml": "application/xml", ".xsl": "text/xsl"}  # noqa: RUF012 - the stdlib's own attribute

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over HTTP on 127.0.0.1 (a web root the set is published into)."""
    root = tmp_path / "public"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def rendered(url: str, profile: Path) -> etree._Element:
    """The DOM Chromium builds for *url*: what a person sees."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI needs Debian's chromium (make test-tools installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", "--dump-dom", url,
    ]  # fmt: skip
    process = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert process.returncode == 0, process.stderr[-2000:]
    return html.fromstring(process.stdout)


def test_a_browser_shows_the_set_as_tables_and_the_files_stay_valid(
    server: SiteServer, served: tuple[Path, str], tmp_path: Path
) -> None:
    out, public = served  # the web root the set is published into, on a server of its own
    result = crawl(server.url(), out, "--stylesheet", "--max-urls-per-file", "5")
    assert result.code == 0, result.process.stderr
    shards = sorted(out.glob("sitemap-*.xml"), key=lambda path: int(path.stem.rsplit("-", 1)[1]))
    assert len(shards) >= 2 and (out / "sitemap.xsl").read_bytes() == STYLESHEET
    for document in [out / "sitemap.xml", *shards]:
        assert document.read_bytes().splitlines()[1] == INSTRUCTION, document
    assert check_set(out / "sitemap.xml", server.url().rstrip("/")) == []  # every file, schema and all

    index = rendered(public + "sitemap.xml", tmp_path / "profile")
    links = index.xpath("//table[@id='entries']//a/@href")
    assert links == [server.url() + shard.name for shard in shards]  # the index names the site's URLs
    first = rendered(public + shards[0].name, tmp_path / "profile")
    locs = [loc.text for loc in etree.parse(str(shards[0])).iter("{*}loc")]
    assert first.xpath("//table[@id='entries']//a/text()") == locs
    assert first.xpath("string(//p[@id='count'])") == f"{len(locs)} URLs"

    again = crawl(server.url(), out, "--max-urls-per-file", "5")  # turned off again
    assert again.code == 0, again.process.stderr
    assert not (out / "sitemap.xsl").exists()
    assert all(INSTRUCTION not in document.read_bytes() for document in out.glob("sitemap*.xml"))
