"""Unit tests: srcset, durations, text limits, language tags, clusters, JSON-LD."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from crawler.page.images import largest_srcset_candidate
from crawler.page.languages import hreflang_problem, news_language, valid_alternates
from crawler.page.news import detect_article, is_recent
from crawler.page.structured import find_typed, parse_json_ld
from crawler.page.videos import (
    Video,
    check_video,
    iso8601_seconds,
    merge_videos,
    truncate_words,
    videos_from_json_ld,
)
from crawler.protocol import to_w3c
from crawler.sitemaps.clusters import resolve_cluster


@pytest.mark.parametrize(
    ("srcset", "largest"),
    [
        ("a.jpg 480w, b.jpg 1080w, c.jpg 800w", "b.jpg"),
        ("a.jpg, b.jpg 2x, c.jpg 1.5x", "b.jpg"),
        ("a.jpg 2x, b.jpg 100w", "b.jpg"),  # width descriptors win
        ("only.jpg", "only.jpg"),
        (
            "https://cdn.example/img,w_400.jpg 400w, https://cdn.example/img,w_800.jpg 800w",
            "https://cdn.example/img,w_800.jpg",
        ),
        ("  a.jpg   1x ,b.jpg 3x  ", "b.jpg"),
        ("", None),
        (" , ,", None),
    ],
)
def test_srcset(srcset: str, largest: str | None) -> None:
    assert largest_srcset_candidate(srcset) == largest


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("PT1M30S", 90),
        ("PT2H", 7200),
        ("PT0.5S", 0),
        ("P1DT1S", 86401),
        ("pt10m", 600),
        ("PT", None),
        ("90", None),
        (None, None),
    ],
)
def test_iso8601_duration(text: str | None, seconds: int | None) -> None:
    assert iso8601_seconds(text) == seconds


def test_truncate_at_word_boundary() -> None:
    assert truncate_words("short  text\n", 100) == "short text"
    cut = truncate_words("alpha beta gamma delta", 13)
    assert cut == "alpha beta" and len(cut) <= 13
    assert truncate_words("x" * 300, 100) == "x" * 100  # no boundary: hard cut


def test_check_video_rules() -> None:
    video = Video(thumbnail_loc="https://e.com/t.jpg", title="t " * 80, description="d", content_loc="https://e.com/p")
    assert check_video(video, "https://e.com/p") == "video https://e.com/t.jpg left out: no content_loc or player_loc"
    good = Video(
        thumbnail_loc="https://e.com/t.jpg", title="T", description="D", player_loc="https://e.com/pl", duration=99999
    )
    assert check_video(good, "https://e.com/p") is None
    assert good.duration is None


def test_merge_videos_prefers_structured_data() -> None:
    structured = Video(title="From JSON-LD", content_loc="https://e.com/v.mp4")
    html = Video(title="From HTML", thumbnail_loc="https://e.com/poster.jpg", content_loc="https://e.com/v.mp4")
    (merged,) = merge_videos([structured, html])
    assert merged.title == "From JSON-LD"
    assert merged.thumbnail_loc == "https://e.com/poster.jpg"


@pytest.mark.parametrize("tag", ["en", "en-GB", "de-AT", "zh-Hant", "zh-Hant-TW", "es-419", "x-default", "fil"])
def test_valid_hreflang(tag: str) -> None:
    assert hreflang_problem(tag) is None


@pytest.mark.parametrize("tag", ["en-UK", "english", "xx", "en_GB", "en-Latx", ""])
def test_invalid_hreflang(tag: str) -> None:
    assert hreflang_problem(tag) is not None


@pytest.mark.parametrize(
    ("lang", "code"),
    [
        ("en-US", "en"),
        ("EN", "en"),
        ("zh-TW", "zh-tw"),
        ("zh-Hant", "zh-tw"),
        ("zh-HK", "zh-tw"),
        ("zh-CN", "zh-cn"),
        ("zh", "zh-cn"),
        ("pt_BR", "pt"),
        ("fil", "fil"),
        ("xx", None),
        (None, None),
        ("", None),
    ],
)
def test_news_language(lang: str | None, code: str | None) -> None:
    assert news_language(lang) == code


def test_valid_alternates_drop_bad_tags_and_duplicates() -> None:
    pairs = [
        ("en", "https://e.com/en"),
        ("EN", "https://e.com/en2"),
        ("en-UK", "https://e.com/uk"),
        ("de", "https://e.com/de"),
    ]
    valid, problems = valid_alternates(pairs)
    assert valid == [("en", "https://e.com/en"), ("de", "https://e.com/de")]
    assert len(problems) == 1 and "UK" in problems[0]


def cluster_of(url: str, declarations: dict[str, list[tuple[str, str]]], listed: set[str]):  # type: ignore[no-untyped-def]
    return resolve_cluster(
        url,
        declarations[url],
        in_scope=lambda u: u.startswith("https://e.com/"),
        listed=listed.__contains__,
        declared_by=lambda u: {href: tag for tag, href in declarations.get(u, [])},
    )


def test_cluster_reciprocal_and_self_inferred() -> None:
    declarations = {
        "https://e.com/en": [("de", "https://e.com/de"), ("fr", "https://other.fr/")],  # no self-reference
        "https://e.com/de": [("en", "https://e.com/en"), ("de", "https://e.com/de")],
    }
    cluster = cluster_of("https://e.com/en", declarations, {"https://e.com/en", "https://e.com/de"})
    # Its own tag comes from the version that names it; other sites are kept as declared.
    assert cluster.links == [("en", "https://e.com/en"), ("de", "https://e.com/de"), ("fr", "https://other.fr/")]
    assert cluster.warnings == []


def test_cluster_drops_one_way_and_unlisted() -> None:
    declarations = {
        "https://e.com/en": [("en", "https://e.com/en"), ("de", "https://e.com/de"), ("it", "https://e.com/it")],
        "https://e.com/de": [("de", "https://e.com/de")],
        "https://e.com/it": [("it", "https://e.com/it"), ("en", "https://e.com/en")],
    }
    cluster = cluster_of("https://e.com/en", declarations, {"https://e.com/en", "https://e.com/de"})
    assert cluster.links == []  # nothing left but itself
    assert [code for code, _ in cluster.warnings] == ["hreflang-not-reciprocal", "hreflang-not-indexable"]


def test_cluster_without_any_self_tag_is_dropped() -> None:
    declarations = {"https://e.com/a": [("de", "https://other.de/")]}
    cluster = cluster_of("https://e.com/a", declarations, {"https://e.com/a"})
    assert cluster.links == []
    assert cluster.warnings[0][0] == "hreflang-no-self"


def test_json_ld_walk() -> None:
    document = parse_json_ld(
        '{"@graph": [{"@type": ["Thing", "VideoObject"], "name": "a"},'
        ' {"video": {"@type": "https://schema.org/VideoObject", "name": "b"}}]}'
    )
    assert [v["name"] for v in find_typed(document, frozenset({"VideoObject"}))] == ["a", "b"]
    assert parse_json_ld("{broken") is None
    assert parse_json_ld("x" * 2_000_000) is None
    nested: object = {}
    cursor = nested
    for _ in range(100):
        cursor["child"] = {"@type": "VideoObject"}  # type: ignore[index]
        cursor = cursor["child"]  # type: ignore[index]
    assert len(list(find_typed(nested, frozenset({"VideoObject"})))) <= 21  # depth is bounded


def test_news_detection_and_window() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    article = detect_article(
        [{"@type": "NewsArticle", "headline": " A  story ", "datePublished": "2026-11-30T10:00:00Z"}], {}, None, "en"
    )
    assert article is not None and article.title == "A story" and article.publication_date == "2026-11-30T10:00:00Z"
    assert is_recent(article.publication_date, now)
    assert not is_recent("2026-11-27T12:00:00Z", now)
    assert not is_recent((now + timedelta(days=1)).isoformat(), now)
    og = detect_article([], {"article:published_time": ["2026-11-30T09:00:00+01:00"]}, "Page title", None)
    assert og is not None and og.title == "Page title"
    assert detect_article([{"@type": "Article", "headline": "no date"}], {}, None, None) is None


def test_to_w3c() -> None:
    assert to_w3c("2026-11-30") == "2026-11-30"
    assert to_w3c("2026-11-30T10:00:00+02:00") == "2026-11-30T10:00:00+02:00"
    assert to_w3c("2026-11-30T10:00:00Z") == "2026-11-30T10:00:00Z"
    assert to_w3c("2026-11-30T10:00:00") == "2026-11-30"  # no zone: only the date is certain
    assert to_w3c("yesterday") is None


def test_a_view_count_past_64_bits_is_left_out() -> None:
    def views(count: object) -> int | None:
        node = {"@type": "VideoObject", "name": "V", "interactionStatistic": {"userInteractionCount": count}}
        (video,) = videos_from_json_ld([node], lambda url: url)
        return video.view_count

    assert views("1234") == 1234
    assert views("1e25") is None and views(2**63) is None
