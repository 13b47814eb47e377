"""Unit tests: the Scrapy-free writer, spool, publisher and validator."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from lxml import etree

from crawler.protocol import MAX_URLS, SITEMAP_NS, is_w3c_datetime, w3c_datetime
from crawler.sitemaps.publish import MANIFEST_NAME, SitemapPublisher
from crawler.sitemaps.shards import write_sitemaps
from crawler.sitemaps.spool import UrlSpool
from crawler.sitemaps.writer import ShardedUrlsetWriter, UrlEntry, render_index
from crawler.sitemaps.xml import xml_escape
from crawler.validate.document import check_document
from crawler.validate.sets import check_set

ORIGIN = "https://e.com"
NS = {"s": SITEMAP_NS}


def entries(count: int, start: int = 0) -> list[UrlEntry]:
    return [
        UrlEntry(f"{ORIGIN}/page-{i:05d}?a=1&b=2", f"2026-11-{1 + i % 28:02d}T10:00:00Z")
        for i in range(start, start + count)
    ]


def shard_locs(path: Path) -> list[str]:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    report = check_document(data, path.name, ORIGIN)
    assert report.findings == [], report.findings
    return report.locs


def test_split_by_count(tmp_path: Path) -> None:
    writer = ShardedUrlsetWriter(tmp_path, max_urls=10)
    writer.extend(entries(25))
    shards = writer.close()
    assert [s.url_count for s in shards] == [10, 10, 5]
    assert [s.name for s in shards] == ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"]
    locs = [loc for s in shards for loc in shard_locs(s.path)]
    assert locs == [e.loc for e in entries(25)]


def test_split_by_bytes_is_exact_and_greedy(tmp_path: Path) -> None:
    chunk = len(entries(1)[0].render())
    writer = ShardedUrlsetWriter(tmp_path, max_bytes=1000)
    writer.extend(entries(40))
    shards = writer.close()
    assert len(shards) > 1
    for shard in shards:
        size = shard.path.stat().st_size
        assert size == shard.size <= 1000
    for shard in shards[:-1]:
        assert shard.size + chunk > 1000  # the next entry really did not fit
    assert sum(s.url_count for s in shards) == 40


def test_entry_larger_than_a_file_is_refused(tmp_path: Path) -> None:
    writer = ShardedUrlsetWriter(tmp_path, max_bytes=1024)
    with pytest.raises(ValueError, match="more than a sitemap"):
        writer.add(UrlEntry(ORIGIN + "/" + "x" * 2000))


@pytest.mark.parametrize(
    ("kwargs"), [{"max_urls": 0}, {"max_urls": MAX_URLS + 1}, {"max_bytes": 10}, {"max_bytes": 52_428_801}]
)
def test_limits_cannot_exceed_the_protocol(tmp_path: Path, kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        ShardedUrlsetWriter(tmp_path, **kwargs)


def test_gzip_round_trip_and_reproducible(tmp_path: Path) -> None:
    plain_dir, gz_dir, gz_dir2 = tmp_path / "p", tmp_path / "g", tmp_path / "g2"
    for folder in (plain_dir, gz_dir, gz_dir2):
        folder.mkdir()
    plain = ShardedUrlsetWriter(plain_dir, max_urls=7)
    plain.extend(entries(20))
    packed = ShardedUrlsetWriter(gz_dir, max_urls=7, gzip_level=6)
    packed.extend(entries(20))
    again = ShardedUrlsetWriter(gz_dir2, max_urls=7, gzip_level=6)
    again.extend(entries(20))
    for p, g, g2 in zip(plain.close(), packed.close(), again.close(), strict=True):
        assert g.name == p.name + ".gz"
        assert gzip.decompress(g.path.read_bytes()) == p.path.read_bytes()
        assert g.sha256 == p.sha256
        assert g.path.read_bytes() == g2.path.read_bytes()


def test_escaping_round_trip(tmp_path: Path) -> None:
    nasty = ORIGIN + "/a?x=1&y=<b>&z='q'&w=\"d\"\x01\x0b"
    writer = ShardedUrlsetWriter(tmp_path)
    writer.add(UrlEntry(nasty, "2026-01-01"))
    (shard,) = writer.close()
    tree = etree.parse(str(shard.path))
    assert tree.findtext("s:url/s:loc", namespaces=NS) == nasty.replace("\x01", "").replace("\x0b", "")
    assert b"&amp;y=&lt;b&gt;&amp;z=&apos;q&apos;&amp;w=&quot;d&quot;" in shard.path.read_bytes()
    assert xml_escape("plain") == "plain"


def test_w3c_datetime() -> None:
    assert w3c_datetime(datetime(2026, 1, 2, 3, 4, 5, 678)) == "2026-01-02T03:04:05Z"
    assert (
        w3c_datetime(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))) == "2026-01-02T03:04:05+02:00"
    )
    assert w3c_datetime(date(2026, 1, 2)) == "2026-01-02"
    for good in ("2026", "2026-11", "2026-11-30", "2026-11-30T10:00Z", "2026-11-30T10:00:00.5+01:00"):
        assert is_w3c_datetime(good), good
    for bad in ("2026-11-30T10:00:00", "30/11/2026", "2026-13-01", "2026-11-30 10:00:00Z", ""):
        assert not is_w3c_datetime(bad), bad


def test_index_render_and_limit() -> None:
    data = render_index([(ORIGIN + "/sitemap-1.xml", "2026-01-01"), (ORIGIN + "/s&2.xml", None)])
    report = check_document(data, "index", ORIGIN)
    assert report.kind == "sitemapindex" and report.findings == []
    assert report.locs == [ORIGIN + "/sitemap-1.xml", ORIGIN + "/s&2.xml"]
    with pytest.raises(ValueError, match="protocol limit"):
        render_index((f"{ORIGIN}/s-{i}.xml", None) for i in range(MAX_URLS + 1))


def test_spool_sorts_and_deduplicates(tmp_path: Path) -> None:
    spool = UrlSpool(tmp_path / "spool.db")
    for loc in ("https://e.com/b", "https://e.com/a", "https://e.com/b", "https://e.com/c"):
        spool.add(UrlEntry(loc))
    assert len(spool) == 3
    assert [s.entry.loc for s in spool] == ["https://e.com/a", "https://e.com/b", "https://e.com/c"]
    spool.close()
    assert not (tmp_path / "spool.db").exists()


def publish(publisher: SitemapPublisher, items: list[UrlEntry], now: str, max_urls: int = 10):  # type: ignore[no-untyped-def]
    staging = publisher.stage()
    writer = ShardedUrlsetWriter(staging, max_urls=max_urls)
    writer.extend(items)
    return publisher.publish(staging, writer.close(), now)


def test_publish_keeps_unchanged_shards_and_their_lastmod(tmp_path: Path) -> None:
    out = tmp_path / "public"
    out.mkdir()
    (out / "index.html").write_text("not ours")
    publisher = SitemapPublisher(out, ORIGIN + "/")
    first = publish(publisher, entries(25), "2026-11-01T00:00:00Z")
    assert first.written == ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml"]
    assert check_set(first.index_path, ORIGIN) == []
    os.utime(out / "sitemap-1.xml", ns=(5, 5))
    # Second run: shard 2 changes, shard 3 disappears.
    second = publish(publisher, [*entries(10), *entries(9, start=100)], "2026-11-02T00:00:00Z")
    assert second.unchanged == ["sitemap-1.xml"]
    assert second.written == ["sitemap-2.xml"]
    assert second.removed == ["sitemap-3.xml"]
    assert (out / "sitemap-1.xml").stat().st_mtime_ns == 5
    assert not (out / "sitemap-3.xml").exists()
    assert (out / "index.html").read_text() == "not ours"
    index = check_document((out / "sitemap.xml").read_bytes(), "index", ORIGIN)
    assert index.locs == [ORIGIN + "/sitemap-1.xml", ORIGIN + "/sitemap-2.xml"]
    text = (out / "sitemap.xml").read_text()
    assert "<loc>https://e.com/sitemap-1.xml</loc><lastmod>2026-11-01T00:00:00Z</lastmod>" in text
    assert "<loc>https://e.com/sitemap-2.xml</loc><lastmod>2026-11-02T00:00:00Z</lastmod>" in text
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST_NAME,
        "index.html",
        "sitemap-1.xml",
        "sitemap-2.xml",
        "sitemap.xml",
    ]


def test_an_extra_another_step_writes_outlives_the_next_publish_until_it_is_dropped(tmp_path: Path) -> None:
    """The index of every host (--index-host) is written after its host's set: the next publish of
    that set keeps it in place (a reader never finds it gone) until no step keeps it any more."""
    out = tmp_path / "public"
    keeping = SitemapPublisher(out, ORIGIN + "/", kept_extras=("sitemap-hosts.xml",))
    publish(keeping, entries(3), "2026-11-01T00:00:00Z")
    assert keeping.add_extra("sitemap-hosts.xml", b"<sitemapindex/>") is True
    assert keeping.add_extra("sitemap-hosts.xml", b"<sitemapindex/>") is False  # unchanged: not rewritten
    again = publish(keeping, entries(4), "2026-11-02T00:00:00Z")
    assert (out / "sitemap-hosts.xml").read_bytes() == b"<sitemapindex/>"
    assert "sitemap-hosts.xml" in again.extras and "sitemap-hosts.xml" not in again.removed
    assert SitemapPublisher(out, ORIGIN + "/").foreign(["sitemap-hosts.xml"]) == []  # ours, by the manifest
    dropped = publish(SitemapPublisher(out, ORIGIN + "/"), entries(4), "2026-11-03T00:00:00Z")
    assert dropped.removed == ["sitemap-hosts.xml"] and not (out / "sitemap-hosts.xml").exists()


def test_manifest_cannot_delete_files_outside_the_set(tmp_path: Path) -> None:
    out = tmp_path / "public"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / MANIFEST_NAME).write_text(json.dumps({"files": {"../victim.txt": {"sha256": "x"}, ".htaccess": {}}}))
    (out / ".htaccess").write_text("keep")
    publish(SitemapPublisher(out, ORIGIN + "/"), entries(3), "2026-11-01T00:00:00Z")
    assert victim.read_text() == "keep me"
    assert (out / ".htaccess").read_text() == "keep"


def test_failed_export_leaves_previous_set_intact(tmp_path: Path) -> None:
    from settings.config import SitemapConfig

    out = tmp_path / "public"
    publisher = SitemapPublisher(out, ORIGIN + "/")
    publish(publisher, entries(25), "2026-11-01T00:00:00Z")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def failing() -> Iterator[UrlEntry]:
        yield from entries(15, start=500)
        raise OSError(28, "No space left on device")

    config = SitemapConfig.from_settings(_settings(out))
    staging = publisher.stage()
    with pytest.raises(OSError, match="No space left"):
        write_sitemaps(failing(), publisher, staging, config.layout, "2026-11-02T00:00:00Z")
    publisher.abort(staging)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert check_set(out / "sitemap.xml", ORIGIN) == []


def _settings(out: Path):  # type: ignore[no-untyped-def]
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("settings")
    settings.set("SITEMAP_START_URL", ORIGIN + "/")
    settings.set("SITEMAP_OUTPUT_DIR", str(out))
    settings.set("SITEMAP_MAX_URLS_PER_FILE", 10)
    return settings


# -- the validator on broken samples ----------------------------------------

URLSET = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n{{}}\n</urlset>\n'


def rules(document: str | bytes, origin: str | None = ORIGIN) -> list[str]:
    data = document.encode() if isinstance(document, str) else document
    return [p.rule for p in check_document(data, "t.xml", origin).findings]


def test_validator_accepts_a_good_file() -> None:
    good = URLSET.format(
        "<url><loc>https://e.com/a?x=1&amp;y=2</loc><lastmod>2026-11-30</lastmod>"
        "<changefreq>daily</changefreq><priority>0.8</priority></url>"
    )
    assert rules(good) == []


@pytest.mark.parametrize(
    ("document", "rule"),
    [
        (
            '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>https://e.com/</loc></url></urlset>',
            "namespace",
        ),
        (URLSET.format("<url><loc>/relative</loc></url>"), "loc"),
        (URLSET.format("<url><loc>https://e.com/a?x=1&y=2</loc></url>"), "xml"),
        (URLSET.format("<url><loc>https://e.com/</loc><lastmod>2026-11-30T10:00:00</lastmod></url>"), "lastmod"),
        (URLSET.format("<url><lastmod>2026-11-30</lastmod><loc>https://e.com/</loc></url>"), "order"),
        (URLSET.format("<url><loc>https://other.com/</loc></url>"), "host"),
        (URLSET.format("<url><loc>https://e.com/</loc></url><url><loc>https://e.com/</loc></url>"), "duplicate"),
        (URLSET.format("<url><loc>https://e.com/</loc><priority>2</priority></url>"), "priority"),
        (URLSET.format("<url><loc>https://e.com/</loc><changefreq>often</changefreq></url>"), "changefreq"),
        (URLSET.format("<url><lastmod>2026-11-30</lastmod></url>"), "loc"),
        (URLSET.format("<sitemap><loc>https://e.com/s.xml</loc></sitemap>"), "element"),
        (f'<sitemapindex xmlns="{SITEMAP_NS}"><url><loc>https://e.com/</loc></url></sitemapindex>', "element"),
        ("", "xml"),
    ],
)
def test_validator_finds(document: str, rule: str) -> None:
    assert rule in rules(document)


def test_validator_refuses_entity_expansion() -> None:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]>'
        f'<urlset xmlns="{SITEMAP_NS}"><url><loc>https://e.com/&lol3;</loc></url></urlset>'
    )
    assert rules(laughs) == ["doctype"]


def test_validator_counts_entries() -> None:
    body = "".join(f"<url><loc>https://e.com/{i}</loc></url>" for i in range(MAX_URLS + 1))
    assert "count" in rules(URLSET.format(body))


def test_validate_set_finds_nested_index_missing_file_and_gzip_bomb(tmp_path: Path) -> None:
    (tmp_path / "inner.xml").write_text(
        f'<sitemapindex xmlns="{SITEMAP_NS}"><sitemap><loc>{ORIGIN}/x.xml</loc></sitemap></sitemapindex>'
    )
    (tmp_path / "bomb.xml.gz").write_bytes(gzip.compress(b" " * (52_428_800 + 10), compresslevel=1))
    (tmp_path / "sitemap.xml").write_text(
        f'<sitemapindex xmlns="{SITEMAP_NS}">'
        + "".join(f"<sitemap><loc>{ORIGIN}/{n}</loc></sitemap>" for n in ("inner.xml", "gone.xml", "bomb.xml.gz"))
        + "</sitemapindex>"
    )
    found = {p.rule for p in check_set(tmp_path / "sitemap.xml", ORIGIN)}
    assert {"nested-index", "missing", "size"} <= found


def test_datetime_now_is_valid_lastmod() -> None:
    assert is_w3c_datetime(w3c_datetime(datetime.now(UTC)))
