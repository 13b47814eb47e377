"""The schema rules in code agree with the XSDs (``tests/schemas/``, the
official content models restated, checked by libxml2's schema validator).

For each rule: a sample the XSD rejects is an error of that rule, and full
samples with every optional element pass both. Where the tool knowingly
differs from the XSD (an empty urlset is only a warning; a time without a
timezone breaks the protocol although the XSD takes it) the test says so.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from lxml import etree

from crawler.protocol import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS
from crawler.validate.document import check_document

SCHEMAS = Path(__file__).parent / "schemas"
NAMESPACES = f'xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}" xmlns:video="{VIDEO_NS}" xmlns:news="{NEWS_NS}"'
LOC = "<loc>https://e.com/page</loc>"
IMAGE = (
    "<image:image><image:loc>https://e.com/i.jpg</image:loc><image:caption>C</image:caption>"
    "<image:geo_location>Lyon</image:geo_location><image:title>T</image:title>"
    "<image:license>https://e.com/license</image:license></image:image>"
)
VIDEO_PARTS = [
    "<video:thumbnail_loc>https://e.com/t.jpg</video:thumbnail_loc>",
    "<video:title>Title</video:title>",
    "<video:description>About it</video:description>",
    "<video:content_loc>https://e.com/v.mp4</video:content_loc>",
    '<video:player_loc allow_embed="yes">https://e.com/player?v=1</video:player_loc>',
    "<video:duration>600</video:duration>",
    "<video:expiration_date>2027-11-30T10:00:00+00:00</video:expiration_date>",
    "<video:rating>4.2</video:rating>",
    '<video:content_segment_loc duration="30">https://e.com/v1.mp4</video:content_segment_loc>',
    "<video:view_count>12345</video:view_count>",
    "<video:publication_date>2026-11-30</video:publication_date>",
    "<video:tag>steak</video:tag><video:tag>grill</video:tag>",
    "<video:category>Cooking</video:category>",
    "<video:family_friendly>yes</video:family_friendly>",
    '<video:restriction relationship="allow">IE GB</video:restriction>',
    '<video:gallery_loc title="More">https://e.com/gallery</video:gallery_loc>',
    '<video:price currency="EUR">1.99</video:price>',
    "<video:requires_subscription>no</video:requires_subscription>",
    '<video:uploader info="https://e.com/u">Cook</video:uploader>',
    '<video:platform relationship="allow">web mobile</video:platform>',
    "<video:live>no</video:live>",
]
NEWS_PARTS = [
    "<news:publication><news:name>Times</news:name><news:language>en</news:language></news:publication>",
    "<news:access>Subscription</news:access>",
    "<news:genres>Blog</news:genres>",
    "<news:publication_date>2026-11-30T10:00:00Z</news:publication_date>",
    "<news:title>Story</news:title>",
    "<news:keywords>a, b</news:keywords>",
    "<news:stock_tickers>NASDAQ:A</news:stock_tickers>",
]
CORE = "<lastmod>2026-11-30T10:00:00+01:00</lastmod><changefreq>daily</changefreq><priority>0.5</priority>"


def video(parts: list[str]) -> str:
    return "<video:video>" + "".join(parts) + "</video:video>"


def news(parts: list[str]) -> str:
    return "<news:news>" + "".join(parts) + "</news:news>"


def urlset(*urls: str) -> str:
    return f"<urlset {NAMESPACES}>" + "".join(urls) + "</urlset>"


def url(body: str) -> str:
    return f"<url>{body}</url>"


def index(*entries: str) -> str:
    return f'<sitemapindex xmlns="{SITEMAP_NS}">' + "".join(entries) + "</sitemapindex>"


@cache
def schema(name: str) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(SCHEMAS / f"{name}.xsd")))


def xsd_accepts(document: str) -> bool:
    root = etree.fromstring(document.encode())
    return bool(schema("siteindex" if root.tag.endswith("sitemapindex") else "sitemap").validate(root))


def errors(document: str) -> list[str]:
    return [f.rule for f in check_document(document.encode(), "t.xml").findings if f.is_error]


FULL = [
    urlset(url(LOC + CORE + IMAGE + IMAGE + video(VIDEO_PARTS) + news(NEWS_PARTS))),
    urlset(url(LOC)),
    urlset(url(LOC + video(VIDEO_PARTS[:3] + VIDEO_PARTS[4:5]))),
    index(f"<sitemap>{LOC}<lastmod>2026-11-30</lastmod></sitemap>", f"<sitemap>{LOC.replace('page', 'p2')}</sitemap>"),
]


@pytest.mark.parametrize("document", FULL)
def test_full_samples_pass_both(document: str) -> None:
    assert xsd_accepts(document)
    assert errors(document) == []


def without(parts: list[str], index: int) -> list[str]:
    return parts[:index] + parts[index + 1 :]


def swapped(parts: list[str], first: int, second: int) -> list[str]:
    moved = list(parts)
    moved[first], moved[second] = moved[second], moved[first]
    return moved


REJECTED = [
    # the url and urlset models
    (urlset(url("<lastmod>2026-11-30</lastmod>" + LOC)), "order"),
    (urlset(url(LOC + LOC)), "order"),
    (urlset(url(LOC + "<priority>0.5</priority><changefreq>daily</changefreq>")), "order"),
    (urlset(url(LOC + IMAGE + "<lastmod>2026-11-30</lastmod>")), "order"),
    (urlset(url(IMAGE + LOC)), "order"),
    (urlset(url("<lastmod>2026-11-30</lastmod>")), "loc"),
    (urlset(url(LOC + "<title>x</title>")), "element"),
    (urlset(url(LOC), IMAGE), "order"),
    (urlset(url("<loc>http://a.b/</loc>")), "loc"),
    (urlset(url(LOC + "<lastmod>2026-11-30T10:00+00:00</lastmod>")), "lastmod"),
    (urlset(url(LOC + "<lastmod>2026-11</lastmod>")), "lastmod"),
    (urlset(url(LOC + "<changefreq>often</changefreq>")), "changefreq"),
    (urlset(url(LOC + "<priority>1.5</priority>")), "priority"),
    (urlset(f"<sitemap>{LOC}</sitemap>"), "element"),
    # the index model
    (index(f"<sitemap><lastmod>2026-11-30</lastmod>{LOC}</sitemap>"), "order"),
    (index(f"<sitemap>{LOC}<changefreq>daily</changefreq></sitemap>"), "element"),
    (index(url(LOC)), "element"),
    # image
    (urlset(url(LOC + IMAGE.replace("<image:caption>C</image:caption>", "") + "")), None),
    (
        urlset(
            url(
                LOC + "<image:image><image:loc>https://e.com/i</image:loc><image:title>T</image:title>"
                "<image:caption>C</image:caption></image:image>"
            )
        ),
        "order",
    ),
    (
        urlset(
            url(
                LOC
                + "<image:image><image:loc>https://e.com/i</image:loc><image:loc>https://e.com/j</image:loc></image:image>"
            )
        ),
        "order",
    ),
    (urlset(url(LOC + "<image:image><image:title>T</image:title></image:image>")), "image"),
    (
        urlset(
            url(LOC + "<image:image><image:loc>https://e.com/i</image:loc><image:size>9</image:size></image:image>")
        ),
        "element",
    ),
    (urlset(url(LOC + "<image:loc>https://e.com/i</image:loc>")), "element"),
    # video
    (urlset(url(LOC + video(swapped(VIDEO_PARTS, 1, 2)))), "order"),
    (urlset(url(LOC + video(swapped(VIDEO_PARTS, 5, 7)))), "order"),
    (urlset(url(LOC + video(without(VIDEO_PARTS, 0)))), "video"),
    (urlset(url(LOC + video(without(VIDEO_PARTS, 2)))), "video"),
    (urlset(url(LOC + video(VIDEO_PARTS[:4] + ["<video:tag>t</video:tag>"] * 33))), "order"),
    (urlset(url(LOC + video([*VIDEO_PARTS[:4], "<video:duration>28801</video:duration>"]))), "video"),
    (
        urlset(
            url(
                LOC
                + video([*VIDEO_PARTS[:2], f"<video:description>{'d' * 2049}</video:description>", *VIDEO_PARTS[3:4]])
            )
        ),
        "video",
    ),
    (urlset(url(LOC + video([VIDEO_PARTS[0], f"<video:title>{'t' * 101}</video:title>", *VIDEO_PARTS[2:4]]))), "video"),
    (urlset(url(LOC + video([*VIDEO_PARTS[:4], "<video:family_friendly>maybe</video:family_friendly>"]))), "video"),
    (urlset(url(LOC + video([*VIDEO_PARTS[:4], "<video:restriction>IE</video:restriction>"]))), "video"),
    (urlset(url(LOC + video([*VIDEO_PARTS[:4], "<video:price>1.99</video:price>"]))), "video"),
    (urlset(url(LOC + video([*VIDEO_PARTS[:4], "<video:rating>7</video:rating>"]))), "video"),
    # news
    (urlset(url(LOC + news(swapped(NEWS_PARTS, 3, 4)))), "order"),
    (urlset(url(LOC + news(swapped(NEWS_PARTS, 1, 2)))), "order"),
    (urlset(url(LOC + news(without(NEWS_PARTS, 0)))), "news"),
    (urlset(url(LOC + news(without(NEWS_PARTS, 4)))), "news"),
    (urlset(url(LOC + news(without(NEWS_PARTS, 3)))), "news"),
    (
        urlset(
            url(
                LOC
                + news(
                    [
                        "<news:publication><news:language>en</news:language><news:name>Times</news:name></news:publication>",
                        *NEWS_PARTS[3:5],
                    ]
                )
            )
        ),
        "order",
    ),
    (urlset(url(LOC + news([NEWS_PARTS[0].replace(">en<", ">en-US<"), *NEWS_PARTS[3:5]]))), "news"),
    (
        urlset(
            url(LOC + news([NEWS_PARTS[0], "<news:publication_date>30/11/2026</news:publication_date>", NEWS_PARTS[4]]))
        ),
        "news",
    ),
    (urlset(url(LOC + news([*NEWS_PARTS[:5], "<news:geo>x</news:geo>"]))), "element"),
]


@pytest.mark.parametrize(("document", "rule"), REJECTED)
def test_what_the_xsd_rejects_is_an_error_of_that_rule(document: str, rule: str | None) -> None:
    if rule is None:  # a control: one optional element fewer is still valid for both
        assert xsd_accepts(document) and errors(document) == []
        return
    assert not xsd_accepts(document)
    assert rule in errors(document)


def test_where_the_tool_knowingly_differs_from_the_xsd() -> None:
    empty = urlset()
    assert not xsd_accepts(empty)  # the schema wants one url ...
    assert [(f.rule, f.severity) for f in check_document(empty.encode(), "t.xml").findings] == [("empty", "warning")]
    no_zone = urlset(url(LOC + "<lastmod>2026-11-30T10:00:00</lastmod>"))
    assert xsd_accepts(no_zone)  # ... and xs:dateTime takes a time without a timezone,
    assert errors(no_zone) == ["lastmod"]  # which the W3C datetime profile of the protocol does not
