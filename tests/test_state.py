"""Unit tests: the state store (schema migrations, lock, shard assignment)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from crawler.state import placement
from crawler.state.placement import ShardAssigner
from crawler.state.schema import MIGRATIONS, SCHEMA_VERSION
from crawler.state.store import Listing, StateLocked, StateStore

NOW = "2026-11-30T10:00:00Z"


def test_new_store_has_the_current_schema(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s.sqlite")
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()


def test_version_1_store_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)

    for statement in MIGRATIONS[1].split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("INSERT INTO page (url, first_seen, last_seen, last_run, outcome) VALUES ('u', 'a', 'a', 1, 'listed')")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    store = StateStore(path)
    try:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert store.db.execute("SELECT url, changed_run FROM page").fetchall() == [("u", None)]
    finally:
        store.close()


def test_version_2_store_moves_facts_to_their_own_table(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    for version in (1, 2):
        for statement in MIGRATIONS[version].split(";"):
            if statement.strip():
                db.execute(statement)
    blob = zlib.compress(json.dumps({"links": ["http://a/x"]}).encode())
    db.execute(
        "INSERT INTO page (url, first_seen, last_seen, last_run, outcome, facts, etag, shard, position, changed_run)"
        " VALUES ('http://a/', 'a', 'b', 1, 'listed', ?, '\"e1\"', 2, 7, 1)",
        (blob,),
    )
    db.execute(
        "INSERT INTO page (url, first_seen, last_seen, last_run, outcome) VALUES ('http://a/n', 'a', 'b', 1, 'x')"
    )
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    store = StateStore(path)
    try:
        columns = [row[1] for row in store.db.execute("PRAGMA table_info(page)")]
        assert "facts" not in columns
        assert store.facts("http://a/") == {"links": ["http://a/x"]}
        assert store.facts("http://a/n") is None
        page = store.get("http://a/")
        assert page is not None and (page.etag, page.shard, page.last_seen) == ('"e1"', 2, "b")
        assert store.db.execute("SELECT position, changed_run FROM page WHERE url = 'http://a/'").fetchone() == (7, 1)
        indexes = {row[1] for row in store.db.execute("PRAGMA index_list(page)")}
        assert {"page_shard", "page_changed_run"} <= indexes
        assert "page_last_run" not in indexes  # dropped by schema 4
        assert store.processed(1) == {"http://a/", "http://a/n"}  # a scan now, still right
    finally:
        store.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(ValueError, match="newer than this program"):
        StateStore(path)


def test_lock_refuses_a_second_holder_and_dies_with_the_process(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = StateStore(path)
    code = """
import pathlib, sys
from crawler.state.store import StateStore, StateLocked
try:
    StateStore(pathlib.Path(sys.argv[1]))
except StateLocked as error:
    print(error)
"""
    other = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert "is in use by pid" in other.stdout
    with pytest.raises(StateLocked):
        StateStore(path)
    store.close()
    StateStore(path).close()  # free again


def test_shards_are_stable_and_filled_in_order(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s.sqlite")
    try:
        run, _ = store.begin_run(NOW, resume=False)
        for i in range(5):
            store.record(run, NOW, f"u{i}", status=200, outcome="listed", reason=None, facts={})
        place = ShardAssigner(store, max_urls=2)
        assert [place(f"u{i}", "") for i in range(5)] == [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0)]
        assert place("u1", "") == (1, 1)  # kept
        assert place("u1", "blog") == (1, 0)  # a new group starts its own shards
        again = ShardAssigner(store, max_urls=2)
        store.record(run, NOW, "u9", status=200, outcome="listed", reason=None, facts={})
        assert again("u9", "") == (3, 1)  # the open shard of the group
    finally:
        store.close()


def test_resume_reuses_the_open_run(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s.sqlite")
    try:
        first, resumed = store.begin_run(NOW, resume=False)
        assert not resumed
        again, resumed = store.begin_run(NOW, resume=True)
        assert (again, resumed) == (first, True)
        store.finish_run(first, "published", NOW)
        fresh, resumed = store.begin_run(NOW, resume=True)
        assert fresh == first + 1 and not resumed  # nothing to resume
    finally:
        store.close()


def _config(**settings: object):  # type: ignore[no-untyped-def]
    from scrapy.settings import Settings

    from settings.config import SitemapConfig

    values = Settings()
    values.setmodule("settings")
    values.set("SITEMAP_START_URL", "https://e.com/")
    for key, value in settings.items():
        values.set(key, value)
    return SitemapConfig.from_settings(values)


def test_shard_groups_by_strategy() -> None:
    from crawler.items import PageFacts
    from crawler.page.news import NewsArticle
    from pipelines.lastmod import shard_group

    page = PageFacts(url="https://e.com/products/item-123456.html", modified_hint="2026-10-03T10:00:00Z")
    assert shard_group(page, _config().shard_strategy, NOW) == ""
    sections = _config(SITEMAP_SHARD_STRATEGY="section", SITEMAP_SHARD_SECTIONS={"products": "/products/"})
    assert shard_group(page, sections.shard_strategy, NOW) == "products"
    assert shard_group(PageFacts(url="https://e.com/about"), sections.shard_strategy, NOW) == ""
    by_date = _config(SITEMAP_SHARD_STRATEGY="date")
    assert shard_group(page, by_date.shard_strategy, NOW) == "2026-10"
    assert shard_group(PageFacts(url="https://e.com/x"), by_date.shard_strategy, NOW) == "2026-11"  # first seen
    news = PageFacts(url="https://e.com/n", news=NewsArticle("2025-01-02T00:00:00Z", "t", "en"))
    assert shard_group(news, by_date.shard_strategy, NOW) == "2025-01"
    by_id = _config(SITEMAP_SHARD_STRATEGY="id", SITEMAP_SHARD_ID_PATTERN=r"item-(\d+)", SITEMAP_SHARD_ID_RANGE=100000)
    assert shard_group(page, by_id.shard_strategy, NOW) == "id-100000"
    assert shard_group(PageFacts(url="https://e.com/about"), by_id.shard_strategy, NOW) == "id-none"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SITEMAP_SHARD_STRATEGY": "random"}, "must be one of"),
        ({"SITEMAP_SHARD_STRATEGY": "id"}, "needs SITEMAP_SHARD_ID_PATTERN"),
        ({"SITEMAP_SHARD_ID_PATTERN": "item-\\d+"}, "needs one group"),
        ({"SITEMAP_SHARD_SECTIONS": {"Bad Name": "/x"}}, "section name"),
        ({"SITEMAP_SHARD_SECTIONS": {"news": "/news/"}}, "not delta or news"),  # the news sitemaps' own names
        ({"SITEMAP_SHARD_SECTIONS": {"delta": "/d/"}}, "not delta or news"),
        ({"SITEMAP_FINGERPRINT_IGNORE": ["div[["]}, "cannot use"),
        ({"SITEMAP_INDEXNOW_KEY": "short"}, "needs both"),
        ({"SITEMAP_INDEXNOW_KEY": "short", "SITEMAP_INDEXNOW_ENDPOINT": "https://i.org/x"}, "8 to 128"),
    ],
)
def test_bad_scheduled_settings(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _config(**settings)


def _listed(store: StateStore, run: int, url: str) -> None:
    listing = Listing(digest="d", lastmod=NOW, last_changed=NOW, changed=True)
    store.record(run, NOW, url, status=200, outcome="listed", reason=None, facts={"links": []}, listing=listing)


def test_carried_urls_count_as_listed_whether_or_not_they_were_read(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s.sqlite")
    try:
        first, _ = store.begin_run(NOW, resume=False)
        for name in ("a", "b", "c"):
            _listed(store, first, f"https://e.com/{name}")
        store.finish_run(first, "published", NOW)
        update, _ = store.begin_run(NOW, resume=False)
        _listed(store, update, "https://e.com/b")  # the one URL the update fetched
        carried = [url for url, *_ in store.carried(update, first)]
        assert carried == ["https://e.com/a", "https://e.com/c"]
        assert store.mark_carried(update, first) == 2  # no iteration needed
        assert list(store.carried(update, first)) == []
        assert list(store.removed_since(update, first)) == []  # nothing the update left out
        assert store.changed_in(update) == ["https://e.com/b"]
    finally:
        store.close()


def test_stored_placements_are_read_a_window_at_a_time_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(placement, "WINDOW", 2)  # windows of two URLs: every boundary is crossed
    store = StateStore(tmp_path / "s.sqlite")
    try:
        run, _ = store.begin_run(NOW, resume=False)
        for i in range(7):
            store.record(run, NOW, f"u{i}", status=200, outcome="listed", reason=None, facts={})
        first = ShardAssigner(store, max_urls=3)
        placed = {f"u{i}": first(f"u{i}", "") for i in range(7)}
        assert list(placed.values()) == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (3, 0)]
        store.record(run, NOW, "u30", status=200, outcome="listed", reason=None, facts={})
        again = ShardAssigner(store, max_urls=3)
        order = ["u0", "u3", "u30", "u4", "u6", "u1", "u5", "u2"]  # forwards, a new URL, backwards
        assert {url: again(url, "") for url in order} == {**placed, "u30": (3, 1)}
        assert again("u30", "") == (3, 1)  # what it placed is remembered
    finally:
        store.close()
