"""What the static-site tests share: a build cached across sessions, the site published for one
port, the application's own sitemap, and the checks that need the pages themselves.

The generators write absolute URLs (canonical, og:image, hreflang, sitemap.xml) from their
configured site URL, but the port of the test server changes every session. So the build is made
once with :data:`PLACEHOLDER` as its URL and copied for each session with the real origin put in.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

import lxml.etree
import lxml.html
import pytest

from tests.realapps.nginx import APT_PACKAGE, Nginx, nginx_binary

__all__ = [
    "PLACEHOLDER",
    "TEST_AGENT",
    "ServedSite",
    "app_sitemap",
    "cached_build",
    "differences",
    "image_entries",
    "listed_duplicates",
    "publish",
    "report_count_mismatches",
    "report_lines",
    "run_build_step",
    "served",
    "sitemap_entries",
    "unavailable",
    "warning_lines",
]

#: The site URL every build is made with, replaced by ``http://127.0.0.1:PORT`` when published.
PLACEHOLDER = "http://sitemap-crawler-placeholder.invalid"
#: The files whose text may carry the site URL.
_TEXT_SUFFIXES = {".html", ".xml", ".xsl", ".js", ".json", ".txt", ".css", ".webmanifest"}
_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
_IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
_XHTML_NS = "http://www.w3.org/1999/xhtml"
#: npm and pip messages that mean the registry could not be reached (skip, not a failure).
_OFFLINE = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|getaddrinfo|"
    r"Temporary failure in name resolution|Network is unreachable|Failed to establish a new connection"
)


def unavailable(why: str) -> NoReturn:
    """A real-application test that cannot run: skipped on a developer's machine, a failure in CI."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the real-application tests: {why}")
    pytest.skip(why)


def run_build_step(command: Sequence[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> None:
    """One step of a one-time build; a registry out of reach makes the test unavailable, not red."""
    try:
        done = subprocess.run(
            list(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        unavailable(f"{' '.join(command)} took more than {timeout:.0f} s (a slow or unreachable registry?)")
    if done.returncode != 0:
        output = f"{done.stdout}\n{done.stderr}"
        if _OFFLINE.search(output):
            unavailable(f"{' '.join(command)} could not reach its registry:\n{output[-2000:]}")
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}):\n{output[-6000:]}")


def cached_build(config: pytest.Config, name: str, version: str, build: Callable[[Path, Path], None]) -> Path:
    """The built site, from pytest's cache when it was built with *version*, else built now.

    ``build(work, output)`` makes the site in *output* using the scratch folder *work* (thrown
    away: node_modules and sdists are hundreds of MB). The cache holds only the output, swapped in
    whole, so an interrupted build is never taken for a finished one.
    """
    cache: pytest.Cache | None = getattr(config, "cache", None)  # absent with -p no:cacheprovider
    base = cache.mkdir("realapps") if cache is not None else Path(tempfile.mkdtemp(prefix="realapps-cache-"))
    target = base / f"{name}-build"
    stamp = target / ".realapps-version"
    if stamp.is_file() and stamp.read_text("utf-8") == version:
        return target
    work = Path(tempfile.mkdtemp(prefix=f"realapps-{name}-"))
    staging = base / f".{name}-build.{os.getpid()}.tmp"
    try:
        output = work / "output"
        build(work, output)
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(output, staging)
        (staging / ".realapps-version").write_text(version, "utf-8")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
    return target


def publish(build: Path, dest: Path, origin: str) -> Path:
    """A copy of *build* in *dest* whose absolute URLs name *origin* (``http://127.0.0.1:PORT``)."""
    shutil.copytree(build, dest, ignore=shutil.ignore_patterns(".realapps-version"))
    placeholder, real = PLACEHOLDER.encode(), origin.encode()
    for path in dest.rglob("*"):
        if not path.is_file():
            continue
        if path.suffix in _TEXT_SUFFIXES:
            data = path.read_bytes()
            if placeholder in data:
                path.write_bytes(data.replace(placeholder, real))
        elif path.name.endswith(".xml.gz"):  # mkdocs' sitemap.xml.gz
            data = gzip.decompress(path.read_bytes())
            path.write_bytes(gzip.compress(data.replace(placeholder, real), mtime=0))
    return dest


@dataclass(frozen=True)
class ServedSite:
    """A published build and the nginx serving it."""

    server: Nginx
    root: Path

    @property
    def origin(self) -> str:
        return self.server.origin

    def crawler_paths(self) -> list[str]:
        """The paths the crawler requested, oldest first (the tests' own requests left out)."""
        return [each.uri for each in self.server.requests() if each.agent != TEST_AGENT]


@contextmanager
def served(build: Path, folder: Path) -> Iterator[ServedSite]:
    """*build* published for a fresh port and served by a private nginx until the block ends."""
    if nginx_binary() is None:
        unavailable(f"nginx is not installed (apt-get install -y {APT_PACKAGE})")
    server = Nginx(folder / "root", folder / "nginx")
    root = publish(build, folder / "root", server.origin)
    try:
        yield ServedSite(server.start(), root)
    finally:
        server.stop()


def app_sitemap(root: Path) -> list[str]:
    """The locs of the application's own ``sitemap.xml`` (a urlset, as both generators write)."""
    tree = lxml.etree.parse(root / "sitemap.xml")
    locs = [str(loc.text).strip() for loc in tree.iter(f"{{{_SITEMAP_NS}}}loc")]
    assert locs, f"{root / 'sitemap.xml'} lists nothing"
    return locs


def report_lines(out: Path) -> list[dict[str, object]]:
    """Every line of the crawl report, warnings included (conftest.read_report drops those)."""
    path = out.parent / f"{out.name}.crawl-report.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def warning_lines(out: Path, code: str) -> list[dict[str, object]]:
    """The report's whole-site findings with *code*."""
    return [line for line in report_lines(out) if line["outcome"] == "warning" and line["reason"] == code]


def sitemap_entries(out: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Each listed URL's ``image:image`` locs and ``xhtml:link`` hrefs, from every shard of the set."""
    entries: dict[str, tuple[list[str], list[str]]] = {}
    for shard in sorted(out.iterdir()):
        if shard.name in {"sitemap.xml", "sitemap.xml.gz"} or not shard.name.endswith((".xml", ".xml.gz")):
            continue
        data = shard.read_bytes()
        if shard.name.endswith(".gz"):
            data = gzip.decompress(data)
        root = lxml.etree.fromstring(data)
        for url in root.iter(f"{{{_SITEMAP_NS}}}url"):
            loc = url.findtext(f"{{{_SITEMAP_NS}}}loc", default="").strip()
            images = [str(each.text).strip() for each in url.iter(f"{{{_IMAGE_NS}}}loc")]
            alternates = [str(each.get("href")) for each in url.iter(f"{{{_XHTML_NS}}}link")]
            entries[loc] = (images, alternates)
    return entries


def image_entries(out: Path) -> dict[str, list[str]]:
    """Each listed URL's ``image:image`` locs."""
    return {loc: images for loc, (images, _) in sitemap_entries(out).items()}


def report_count_mismatches(out: Path) -> list[str]:
    """Listed report lines whose sitemap entry holds more images or alternates than the line counts.

    The report format says these count what the page rules kept (crawler/extensions/report.py): the
    sitemap may leave out more (site-wide images, one-language clusters), never add.
    """
    entries = sitemap_entries(out)
    wrong: list[str] = []
    for line in report_lines(out):
        if line["outcome"] != "listed":
            continue
        images, alternates = entries.get(str(line["url"]), ([], []))
        found_images, found_alternates = line.get("images", 0), line.get("alternates", 0)
        assert isinstance(found_images, int) and isinstance(found_alternates, int)
        if len(images) > found_images or len(alternates) > found_alternates:
            wrong.append(
                f"{line['url']}: report images {line.get('images')} alternates {line.get('alternates')}, "
                f"sitemap images {len(images)} alternates {len(alternates)}"
            )
    return wrong


#: The User-Agent of the tests' own requests, so the server's log tells them from the crawler's.
TEST_AGENT = "realapps-test"


def differences(
    app_locs: Iterable[str],
    listed: Iterable[str],
    report: dict[str, dict[str, object]],
    extra_kinds: dict[str, Callable[[str], bool]],
) -> tuple[list[str], list[str]]:
    """The differences between the application's sitemap and ours: (explained, unexplained).

    An application URL we do not list is explained only by a ``redirect`` whose target (the URL
    with the trailing slash a static server adds) is listed. A URL we list that the application
    leaves out is explained only by being that target, or by one of the named *extra_kinds*.
    """
    app, ours = set(app_locs), set(listed)
    explained: list[str] = []
    unexplained: list[str] = []
    for loc in sorted(app - ours):
        line = report.get(loc)
        target = loc if loc.endswith("/") else f"{loc}/"
        if line is not None and line["reason"] == "redirect" and target in ours:
            explained.append(f"{loc}: in its sitemap, reported redirect, its target {target} listed")
        elif line is None:
            unexplained.append(f"{loc}: in its sitemap, never met by the crawl")
        else:
            described = {key: line.get(key) for key in ("status", "outcome", "reason", "detail", "canonical")}
            unexplained.append(f"{loc}: in its sitemap, not listed: {described}")
    slashless = {loc.rstrip("/") for loc in app}
    for url in sorted(ours - app):
        kind = next((name for name, matches in extra_kinds.items() if matches(url)), None)
        if url.endswith("/") and url.rstrip("/") in slashless:
            explained.append(f"{url}: listed, the redirect target of its sitemap's {url.rstrip('/')}")
        elif kind is not None:
            explained.append(f"{url}: listed, not in its sitemap: {kind}")
        else:
            unexplained.append(f"{url}: listed, not in its sitemap, of no named kind")
    return explained, unexplained


def _fetch(url: str) -> tuple[int, bytes]:
    """GET over plain http.client: no proxy, no redirect followed (a listed URL must answer 200)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=30)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", target, headers={"User-Agent": TEST_AGENT})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def page_identity(url: str) -> tuple[str, str]:
    """What a reader sees of a page: its ``<title>`` and the text of ``<main>`` (else ``<article>``, else body)."""
    status, body = _fetch(url)
    assert status == 200, f"listed {url} answers {status}"
    document = lxml.html.document_fromstring(body)
    title = " ".join(document.findtext(".//title", default="").split())
    for path in (".//main", ".//article", ".//body"):
        found = document.findall(path)
        if found:
            text = " ".join(" ".join(element.text_content().split()) for element in found)
            return title, text
    return title, ""


def listed_duplicates(urls: Iterable[str]) -> list[list[str]]:
    """Groups of listed URLs that show the same title and main text: one page listed twice."""
    urls = sorted(set(urls))
    with ThreadPoolExecutor(max_workers=8) as pool:
        identities = list(pool.map(page_identity, urls))
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for url, identity in zip(urls, identities, strict=True):
        groups[identity].append(url)
    return [group for group in groups.values() if len(group) > 1]
