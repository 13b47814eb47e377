"""End to end: images, videos, news and hreflang from a local test site."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lxml import etree

from crawler.protocol import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS
from tests.conftest import CrawlResult, crawl, run_cli
from tests.server import SiteServer

NS = {"s": SITEMAP_NS, "image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS, "xhtml": XHTML_NS}


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlResult, SiteServer, dict[str, etree._Element]]:
    server = SiteServer(sites={"127.0.0.1": "media"}).start()
    try:
        out = tmp_path_factory.mktemp("media") / "public"
        result = crawl(server.url(), out, "--news-name", "The Test Times", "--image-max-pages", "5")
    finally:
        server.stop()
    assert result.code == 0, result.process.stderr
    urls: dict[str, etree._Element] = {}
    for path in sorted(out.glob("sitemap-*.xml")):
        for url in etree.parse(str(path)).getroot().iterfind("s:url", NS):
            urls[f"{path.name}:{url.findtext('s:loc', namespaces=NS)}"] = url
    return result, server, urls


def entry(
    urls: dict[str, etree._Element], server: SiteServer, path: str, file: str = "sitemap-1.xml"
) -> etree._Element:
    return urls[f"{file}:{server.url(path)}"]


def images(element: etree._Element) -> list[str]:
    return [str(loc) for loc in element.xpath("image:image/image:loc/text()", namespaces=NS)]


def test_images_from_every_source(media) -> None:  # type: ignore[no-untyped-def]
    _, server, urls = media
    assets = server.url("/assets/")
    assert images(entry(urls, server, "/images.html")) == [
        assets + "a.jpg",  # relative to <base href>, once although used twice
        assets + "large.jpg",  # the widest srcset candidate
        assets + "small.jpg",
        assets + "x2.jpg",  # the densest srcset candidate
        assets + "x1.jpg",
        assets + "pic-800.webp",  # <picture><source srcset>
        assets + "pic.jpg",
        assets + "lazy.jpg",  # data-src behind a data: placeholder; data: URIs never
        "https://cdn.example.net/photos/cdn.jpg",  # CDN hosts are fine
        "https://cdn.example.net/og.jpg",  # og:image
    ]


def test_logo_on_every_page_is_filtered(media) -> None:  # type: ignore[no-untyped-def]
    _, server, urls = media
    assert all(server.url("/logo.png") not in images(element) for element in urls.values())


def test_at_most_1000_images_and_the_rest_reported(media) -> None:  # type: ignore[no-untyped-def]
    result, server, urls = media
    line = result.report[server.url("/many-images.html")]
    assert line["images"] == 1000  # the logo and the first 999 page images
    assert line["notes"] == ["2 image(s) over the limit of 1000 per URL left out"]
    listed = images(entry(urls, server, "/many-images.html"))
    # The site-wide filter runs after the per-URL cap and takes the logo out.
    assert listed == [server.url(f"/many/{i}.jpg") for i in range(999)]


def video(element: etree._Element, key: str) -> etree._Element:
    for candidate in element.iterfind("video:video", NS):
        if key in (candidate.findtext("video:content_loc", namespaces=NS) or "") + (
            candidate.findtext("video:player_loc", namespaces=NS) or ""
        ):
            return candidate
    raise AssertionError(f"no video {key}")


def children(element: etree._Element) -> list[tuple[str, str]]:
    return [(etree.QName(c).localname, c.text or "") for c in element]


def test_html5_video_with_poster(media) -> None:  # type: ignore[no-untyped-def]
    result, server, urls = media
    page = entry(urls, server, "/video-html.html")
    assert children(video(page, "clip.mp4")) == [
        ("thumbnail_loc", server.url("/media/clip.jpg")),
        ("title", "A short clip"),
        ("description", "A page with two HTML5 videos & one poster."),
        ("content_loc", server.url("/media/clip.mp4")),
    ]
    assert len(page.findall("video:video", NS)) == 1
    notes = result.report[server.url("/video-html.html")]["notes"]
    assert notes == [f"video {server.url('/media/no-poster.mp4')} left out: no thumbnail_loc"]


def test_json_ld_videos_and_embedded_player(media) -> None:  # type: ignore[no-untyped-def]
    result, server, urls = media
    page = entry(urls, server, "/video-jsonld.html")
    assert children(video(page, "full.mp4")) == [
        ("thumbnail_loc", "https://cdn.example.net/thumbs/full.jpg"),
        ("title", "Full video"),
        ("description", "Everything about <sitemaps> & more"),
        ("content_loc", "https://cdn.example.net/videos/full.mp4"),
        ("player_loc", server.url("/player?v=full")),
        ("duration", "90"),
        ("expiration_date", "2030-01-01"),
        ("rating", "4.5"),
        ("view_count", "1234"),
        ("publication_date", "2026-10-01T08:00:00+02:00"),
        ("tag", "sitemaps"),
        ("tag", "crawling"),
        ("family_friendly", "yes"),
    ]
    long = video(page, "embed/long")
    title = long.findtext("video:title", namespaces=NS) or ""
    description = long.findtext("video:description", namespaces=NS) or ""
    assert 0 < len(title) <= 100 and not title.endswith(" ")
    assert "A title that goes on and on A title".startswith(title[:20])
    assert 0 < len(description) <= 2048 and description.endswith("word")  # cut at a word boundary
    assert long.find("video:duration", NS) is None  # 10 hours is over the 8-hour maximum
    youtube = video(page, "youtube.com/embed/dQw4w9WgXcQ")
    assert children(youtube) == [
        ("thumbnail_loc", "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg"),
        ("title", "Embedded YouTube video"),
        ("description", "Videos described in JSON-LD."),
        ("player_loc", "https://www.youtube.com/embed/dQw4w9WgXcQ"),
    ]
    assert len(page.findall("video:video", NS)) == 3  # the map iframe is not a video
    assert "no thumbnail_loc" in result.report[server.url("/video-jsonld.html")]["notes"][0]


def test_news_sitemap_has_only_fresh_articles(media) -> None:  # type: ignore[no-untyped-def]
    result, server, urls = media
    news = {key.split(":", 1)[1]: element for key, element in urls.items() if key.startswith("sitemap-news-1.xml:")}
    assert sorted(news) == [server.url(p) for p in ("/news-fresh.html", "/news-og.html", "/news-zh.html")]
    fresh = news[server.url("/news-fresh.html")].find("news:news", NS)
    assert [etree.QName(c).localname for c in fresh] == ["publication", "publication_date", "title"]
    assert fresh.findtext("news:publication/news:name", namespaces=NS) == "The Test Times"
    assert fresh.findtext("news:publication/news:language", namespaces=NS) == "en"  # from lang="en-US"
    assert fresh.findtext("news:title", namespaces=NS) == "Fresh news & views"
    zh = news[server.url("/news-zh.html")]
    assert zh.findtext("news:news/news:publication/news:language", namespaces=NS) == "zh-tw"
    assert news[server.url("/news-og.html")].findtext("news:news/news:title", namespaces=NS) == "An Open Graph story"
    # The three-day-old article is a normal listed page, but not news.
    assert f"sitemap-1.xml:{server.url('/news-old.html')}" in urls
    index = (result.out / "sitemap.xml").read_text()
    assert "sitemap-news-1.xml" in index


def alternates(element: etree._Element) -> list[tuple[str, str]]:
    return [(link.get("hreflang"), link.get("href")) for link in element.iterfind("xhtml:link", NS)]


def test_hreflang_clusters(media) -> None:  # type: ignore[no-untyped-def]
    result, server, urls = media
    en, de, fr = (server.url(p) for p in ("/en/", "/de/", "/fr/"))
    assert alternates(entry(urls, server, "/en/")) == [("en", en), ("de", de), ("fr", fr), ("x-default", en)]
    # /fr/ does not link back to /de/: that pair is left out and reported.
    assert alternates(entry(urls, server, "/de/")) == [("en", en), ("de", de), ("x-default", en)]
    # /fr/ declares its versions in an HTTP Link header.
    assert alternates(entry(urls, server, "/fr/")) == [("en", en), ("fr", fr)]
    assert alternates(entry(urls, server, "/images.html")) == []
    warnings = [json.loads(line) for line in (result.out.parent / "public.crawl-report.jsonl").read_text().splitlines()]
    warnings = [(w["url"], w["reason"]) for w in warnings if w["outcome"] == "warning"]
    assert (de, "hreflang-not-reciprocal") in warnings
    assert (en, "hreflang-not-indexable") in warnings  # it -> /it/ is noindex
    assert any("'UK' is not an ISO 3166-1 country code" in n for n in result.report[en]["notes"])
    assert "hreflang-not-reciprocal" in result.process.stderr  # in the summary too


def test_noindex_page_media_not_listed(media) -> None:  # type: ignore[no-untyped-def]
    result, server, urls = media
    assert not any("noindex-video" in key for key in urls)
    assert result.report[server.url("/noindex-video.html")]["reason"] == "noindex"


def test_byte_limit_holds_with_heavy_entries(tmp_path: Path) -> None:
    media_server = SiteServer(sites={"127.0.0.1": "media"}).start()
    try:
        result = crawl(media_server.url(), tmp_path / "out", "--max-bytes-per-file", "87000")
    finally:
        media_server.stop()
    assert result.code == 0, result.process.stderr
    shards = list((tmp_path / "out").glob("sitemap-*.xml"))
    assert len(shards) >= 2
    assert all(s.stat().st_size <= 87000 for s in shards)


def test_extensions_can_be_turned_off(tmp_path: Path) -> None:
    media_server = SiteServer(sites={"127.0.0.1": "media"}).start()
    try:
        result = crawl(media_server.url(), tmp_path / "out", "--no-images", "--no-videos", "--no-hreflang")
    finally:
        media_server.stop()
    assert result.code == 0, result.process.stderr
    text = "".join(p.read_text() for p in (tmp_path / "out").glob("sitemap-*.xml"))
    assert "<image:image>" not in text and "<video:video>" not in text and "<xhtml:link" not in text
    assert not list((tmp_path / "out").glob("sitemap-news-*"))  # no --news-name: no news sitemap
    assert len(result.listed) == 12


def test_an_update_keeps_the_media_of_the_urls_it_carries(tmp_path: Path) -> None:
    """URLs an update does not fetch come back from the state store with every extension:
    images, videos, hreflang alternates (their clusters still resolve) and news."""
    server = SiteServer(sites={"127.0.0.1": "media"}).start()
    out = tmp_path / "public"

    def written() -> dict[str, bytes]:
        entries = {}
        for path in sorted(out.glob("sitemap-*.xml")):
            for url in etree.parse(str(path)).getroot().iterfind("s:url", NS):
                entries[f"{path.name}:{url.findtext('s:loc', namespaces=NS)}"] = etree.tostring(url, method="c14n")
        return entries

    try:
        first = crawl(server.url(), out, "--news-name", "The Test Times", "--image-max-pages", "5")
        assert first.code == 0, first.process.stderr
        before = written()
        server.reset()
        gone = server.url("/many-images.html")
        update = run_cli("update", server.url(), "--out", str(out), "-q", "--news-name", "The Test Times",
                         "--image-max-pages", "5", "--remove", gone)  # fmt: skip
        assert update.returncode == 0, update.stderr
        assert server.paths() == []  # nothing was fetched: robots.txt is asked for with a page
    finally:
        server.stop()
    after = written()
    assert after == {key: element for key, element in before.items() if not key.endswith(f":{gone}")}
    kept = b"".join(after.values())
    assert b"<image:image>" in kept and b"<video:video>" in kept and b"<xhtml:link" in kept
    assert b"<news:news>" in kept and len(after) == len(before) - 1
    assert run_cli("validate", str(out)).returncode == 0
