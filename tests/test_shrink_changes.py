"""A sudden shrink is refused, and each run says what changed (SPEC S10).

A site of a home page and twelve articles is crawled, then most articles go
noindex overnight (a bad deploy): the next crawl publishes nothing, exits with
the shrink status, keeps the previous set byte-identical and names what the
lost URLs became; ``--accept-shrink`` publishes it once. The changes file of
each run lists every URL added, changed or removed with what it was and is.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.sitemaps.shrink import shrink_refusal
from crawler.state.changes import Change, ChangeCounts, Kind, state_word
from tests.conftest import CrawlResult, crawl
from tests.server import SiteServer

ARTICLES = 12
NOINDEX = '<meta name="robots" content="noindex">'
EXIT_SHRINK = 5


class Site:
    """Files under *root* that a test rewrites between runs, served by a SiteServer."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "site" / "news"
        self.folder.mkdir(parents=True)
        (self.folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")
        self.server = SiteServer(sites={"127.0.0.1": "news"}, root=root / "site")

    def write(self, *, noindex: set[int] = frozenset(), missing: set[int] = frozenset(), edited: int = -1) -> None:  # type: ignore[assignment]
        links = "".join(f'<a href="/a{n}.html">article {n}</a>' for n in range(ARTICLES))
        (self.folder / "index.html").write_text(f"<html><head><title>Home</title></head><body>{links}</body></html>")
        for n in range(ARTICLES):
            page = self.folder / f"a{n}.html"
            if n in missing:
                page.unlink(missing_ok=True)
                continue
            head = f"<title>Article {n}</title>{NOINDEX if n in noindex else ''}"
            text = f"Article {n}{' (edited)' if n == edited else ''}."
            page.write_text(f"<html><head>{head}</head><body><p>{text}</p></body></html>")

    def url(self, path: str = "/") -> str:
        return self.server.url(path)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    site = Site(tmp_path)
    site.write()
    site.server.start()
    yield site
    site.server.stop()


def files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def changes(out: Path) -> list[dict[str, str]]:
    path = out.with_name(f"{out.name}.changes.jsonl")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_a_set_that_loses_most_of_its_urls_overnight_is_not_published(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = crawl(site.url(), out)
    assert first.code == 0 and len(first.listed) == ARTICLES + 1, first.process.stderr
    before = files(out)
    site.write(noindex=set(range(9)))  # 9 of 13 URLs go noindex: a 69% shrink
    refused = crawl(site.url(), out)
    stderr = refused.process.stderr
    assert refused.code == EXIT_SHRINK, stderr
    assert files(out) == before  # the previous set, byte for byte
    last = stderr.splitlines()[-1]
    assert "shrink by 69% (13 -> 4 URLs), more than --max-shrink 50%" in last, last
    assert "the URLs lost are now noindex 9" in last and "previous sitemaps kept" in last
    assert "--accept-shrink" in last
    accepted = crawl(site.url(), out, "--accept-shrink")
    assert accepted.code == 0, accepted.process.stderr
    assert len(accepted.listed) == ARTICLES + 1 - 9
    removed = [line for line in changes(out) if line["change"] == "removed"]
    assert len(removed) == 9 and {(line["from"], line["to"]) for line in removed} == {("listed", "noindex")}
    assert "Changes: 9 removed (listed -> noindex 9)" in accepted.process.stderr
    # The next run compares with what was published last: back from noindex, the URLs are added.
    site.write()
    back = crawl(site.url(), out)
    assert back.code == 0 and len(back.listed) == ARTICLES + 1
    assert Counter((line["change"], line["from"]) for line in changes(out)) == {("added", "noindex"): 9}


def test_without_a_state_store_the_refusal_names_what_this_run_left_out(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert crawl(site.url(), out, "--no-state").code == 0
    before = files(out)
    site.write(noindex=set(range(6)), missing={6, 7, 8})
    refused = crawl(site.url(), out, "--no-state")
    assert refused.code == EXIT_SHRINK, refused.process.stderr
    assert files(out) == before
    last = refused.process.stderr.splitlines()[-1]
    assert "(13 -> 4 URLs)" in last and "noindex 6, status 3" in last, last
    assert not out.with_name("out.changes.jsonl").exists()  # what changed needs a state store


def test_a_shrink_within_the_limit_or_with_the_guard_off_is_published(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert crawl(site.url(), out).code == 0
    site.write(noindex=set(range(6)))  # 46%: within the default 50
    assert crawl(site.url(), out).code == 0
    site.write(noindex=set(range(ARTICLES)))  # 6 -> 1 URLs: 83%, the guard off
    off = crawl(site.url(), out, "--max-shrink", "0")
    assert off.code == 0 and off.listed == [site.url()], off.process.stderr
    tight = crawl(site.url(), tmp_path / "other", "--max-shrink", "101")
    assert tight.code == 2 and "--max-shrink" in tight.process.stderr


def test_the_changes_file_says_what_each_url_was_and_is(site: Site, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = crawl(site.url(), out)
    assert first.code == 0
    lines = changes(out)
    assert {(line["change"], line["from"], line["to"]) for line in lines} == {("added", "new", "listed")}
    assert len(lines) == ARTICLES + 1
    site.write(noindex={0}, missing={1}, edited=2)
    second: CrawlResult = crawl(site.url(), out)
    assert second.code == 0, second.process.stderr
    by_url = {line["url"]: (line["change"], line["from"], line["to"]) for line in changes(out)}
    assert by_url == {
        site.url("/a0.html"): ("removed", "listed", "noindex"),
        site.url("/a1.html"): ("removed", "listed", "status 404"),
        site.url("/a2.html"): ("changed", "listed", "listed"),
    }
    assert "Changes: 1 changed, 2 removed (listed -> noindex 1, listed -> status 404 1)" in second.process.stderr


def test_the_change_model_in_words() -> None:
    assert state_word(None, None, None) == "new"
    assert state_word("excluded", "status", 410) == "status 410"
    assert state_word("gone", "not linked any more", None) == "gone"
    counts = ChangeCounts.of(
        [
            Change("u1", Kind.ADDED, "new", "listed"),
            Change("u2", Kind.ADDED, "noindex", "listed"),
            Change("u3", Kind.CHANGED, "listed", "listed"),
            *(Change(f"r{n}", Kind.REMOVED, "listed", f"status {400 + n}") for n in range(5)),
        ]
    )
    assert counts.words(top=2).startswith("2 added (new -> listed 1, noindex -> listed 1), 1 changed, 5 removed (")
    assert counts.words(top=2).endswith(", 3 more)")
    assert counts.summary()["changed"] == {"content changed": 1}
    assert ChangeCounts.of([]).words() == ""


def test_the_shrink_rule() -> None:
    lost = Counter({"noindex": 60, "robots": 1})
    assert shrink_refusal(None, 0, 50, lost) is None  # nothing published yet
    assert shrink_refusal(100, 50, 50, lost) is None  # exactly the limit
    assert shrink_refusal(100, 10, 0, lost) is None  # off
    why = shrink_refusal(100, 39, 50, lost)
    assert why is not None and "61% (100 -> 39 URLs)" in why and "noindex 60, robots 1" in why
