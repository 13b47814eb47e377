"""Unit tests: facts read from HTML and headers (pure logic)."""

from __future__ import annotations

import pytest
from lxml import etree
from lxml.cssselect import CSSSelector

from crawler.page.digest import DEFAULT_IGNORE, Ignore, compile_ignore, content_digest
from crawler.page.headers import is_noindex, link_header_targets, robots_directives
from crawler.page.html import parse_html
from tests.server import SITE_ROOT


def test_links_from_a_area_and_link_rel_with_base() -> None:
    html = b"""<html><head><base href="/docs/"><link rel="next" href="p2"><link rel="stylesheet" href="s.css">
    <link rel="alternate" hreflang="de" href="/de/"></head><body><a href="a">a</a><map><area href="/m"></map>
    <a>no href</a><a href="mailto:x@y">mail</a></body></html>"""
    page = parse_html(html, "http://e.com/x/y")
    assert page.base_url == "http://e.com/docs/"
    assert page.links == ["http://e.com/docs/p2", "http://e.com/de/", "http://e.com/docs/a", "http://e.com/m"]


def test_a_link_repeated_on_the_page_is_kept_once_in_first_order() -> None:
    html = b'<a href="/b">menu</a><a href="/a">x</a><a href="/b">footer</a><a href="/a#top">top</a>'
    assert parse_html(html, "http://e.com/").links == ["http://e.com/b", "http://e.com/a", "http://e.com/a#top"]


def test_only_first_base_counts() -> None:
    page = parse_html(b'<base href="/one/"><base href="/two/"><a href="x">', "http://e.com/")
    assert page.links == ["http://e.com/one/x"]


def test_canonical_and_meta_and_lang() -> None:
    page = parse_html(
        b'<html lang="de-AT"><head><link rel="Canonical" href="/c"><meta name="ROBOTS" content="noindex">'
        b'<meta name="googlebot" content="nofollow"></head></html>',
        "http://e.com/p",
    )
    assert page.canonicals == ["http://e.com/c"]
    assert page.meta == {"robots": ["noindex"], "googlebot": ["nofollow"]}
    assert page.lang == "de-AT"


def test_broken_input_gives_no_facts_not_an_error() -> None:
    assert parse_html(b"", "http://e.com/").links == []
    assert parse_html(b"\x00\xff\xfe garbage", "http://e.com/").links == []
    page = parse_html(b"<a href='/x'>unterminated <div><a href=/y>", "http://e.com/")
    assert page.links == ["http://e.com/x", "http://e.com/y"]


def test_encoding_of_the_page_is_used() -> None:
    body = '<a href="/caf\u00e9">\u20ac</a>'.encode("cp1252")
    assert parse_html(body, "http://e.com/", "cp1252").links == ["http://e.com/caf\u00e9"]


def test_robots_directives_meta_and_token() -> None:
    meta = {"robots": ["index, follow"], "googlebot": ["noindex"], "bingbot": ["nofollow"]}
    assert "noindex" in robots_directives(meta, [], "googlebot")
    assert "noindex" not in robots_directives(meta, [], "bingbot")
    assert "nofollow" in robots_directives(meta, [], "bingbot")


def test_robots_directives_x_robots_tag() -> None:
    assert "noindex" in robots_directives({}, ["noindex, nofollow"], "googlebot")
    assert {"noindex", "nofollow"} <= robots_directives({}, ["NONE"], "googlebot")
    assert "noindex" in robots_directives({}, ["googlebot: noindex"], "googlebot")
    assert "noindex" not in robots_directives({}, ["otherbot: noindex"], "googlebot")
    assert "noindex" not in robots_directives({}, ["unavailable_after: 25 Jun 2010 15:00:00 PST"], "googlebot")
    mixed = robots_directives({}, ["googlebot: nofollow, otherbot: noindex"], "googlebot")
    assert "nofollow" in mixed and "noindex" not in mixed


def test_is_noindex_is_the_one_spelling_of_the_rule() -> None:
    assert is_noindex(robots_directives({"robots": ["noindex"]}, [], "googlebot"))
    assert is_noindex(["none"])  # a raw value's parts, before none is read as noindex, nofollow
    assert is_noindex(robots_directives({}, ["NONE"], "googlebot"))
    assert not is_noindex(["nofollow", "noarchive", "index"])
    assert not is_noindex(robots_directives({}, ["otherbot: noindex"], "googlebot"))


def test_link_header_canonical() -> None:
    values = ['<https://e.com/a>; rel="canonical", </b>; rel=next', '</c>; title="x, y"; rel="alternate canonical"']
    assert link_header_targets(values, "https://e.com/z", "canonical") == ["https://e.com/a", "https://e.com/c"]
    assert link_header_targets(values, "https://e.com/z", "next") == ["https://e.com/b"]
    assert link_header_targets(["garbage"], "https://e.com/", "canonical") == []


def test_fast_link_paths_agree_with_joining() -> None:
    from crawler.urls import normalize_url, resolve_link

    base = "http://e.com:8080/dir/page.html?q=1"
    hrefs = ["/a/../b?x=1#f", "/", "http://e.com:8080/c", "https://other.com/d", " /spaced ", "/tab\there", "/\u00e9"]
    html = "".join(f'<a href="{h}">x</a>' for h in hrefs).encode()
    page = parse_html(html, base)
    assert [normalize_url(u) for u in page.links] == [normalize_url(resolve_link(base, h) or "") for h in hrefs]


def _digest(text: str) -> str | None:
    page = parse_html(f"<html><body><p>{text}</p></body></html>".encode(), "http://e.com/", digest_ignore=Ignore())
    return page.content_digest


def test_content_digest_ignores_times_but_not_other_numbers() -> None:
    base = _digest("Price 12 EUR, updated")
    assert base is not None
    for stamped in (
        "Price 12 EUR, updated 10:42",
        "Price 12 EUR, updated 9:05:59 pm",
        "Price 12 EUR, updated 2026-11-30T10:42:07.5+01:00",
        "Price 12 EUR, updated 2026-11-30 10:42Z",
    ):
        assert _digest(stamped) == base, stamped
    for changed in ("Price 13 EUR, updated", "Price 12 EUR, updated x10:42", "Price 12:5 EUR, updated"):
        assert _digest(changed) != base, changed


def _reference_digest(html: bytes, extra: tuple[str, ...] = ()) -> str | None:
    """The digest as first written: every selector evaluated on its own, each match cleared."""
    page = parse_html(html, "http://e.com/", digest_ignore=Ignore())
    root = etree.fromstring(html, etree.HTMLParser(encoding="utf-8"))
    body = root.find("body")
    for selector in (*DEFAULT_IGNORE, *extra):
        select = etree.XPath(selector) if selector.startswith("/") else CSSSelector(selector, translator="html")
        for element in select(body):
            element.clear(keep_tail=True)
    return content_digest(root, page.title, Ignore()).digest


VOLATILE = b"""<html><head><title>T</title></head><body><p>Kept <b>text</b> here.</p>
<script>var t = 1;</script>after script <style>p{}</style>after style <svg><text>x</text></svg>after svg
<form><input name=a value=1>after input <button type=hidden>hb</button>after hidden</form>
<div id="ad-top">ad</div>after ad <div class="x ads y">ads</div>after ads <ins class="adsbygoogle">g</ins>
<span aria-hidden="true">hidden</span>after aria <p data-nosnippet>nos</p> <time>10:42</time> tail
<div class="advertisement"><p>inner</p></div><section class="adx">not an ad</section><p class="custom">mine</p>
<div data-ad-slot="9">slot</div><ul><li id="google_ads_1">g</li><li>item</li></ul></body></html>"""


@pytest.mark.parametrize("extra", [(), (".custom", "//ul/li[2]")])
def test_the_merged_digest_equals_one_selector_at_a_time(extra: tuple[str, ...]) -> None:
    pages = [VOLATILE, *(path.read_bytes() for path in sorted(SITE_ROOT.glob("**/*.html")))]
    ignore = compile_ignore((*DEFAULT_IGNORE, *extra))
    for html in pages:
        assert parse_html(html, "http://e.com/", digest_ignore=ignore).content_digest == _reference_digest(html, extra)
    assert _reference_digest(VOLATILE) != _reference_digest(VOLATILE.replace(b"Kept", b"Changed"))


def test_a_selector_is_evaluated_only_on_pages_whose_source_can_match_it() -> None:
    ignore = compile_ignore([".ad", "[data-ad-slot]", "form [type=hidden]", "p:first-child", "//aside", "[id^=ad-]"])

    def active(source: bytes) -> str:
        xpath = ignore.xpath(source.lower())
        return xpath.path if xpath is not None else ""

    plain = active(b"<html><head></head><body><p class='header load-more'>road ahead</p></body></html>")
    assert "' ad '" not in plain and "data-ad-slot" not in plain and "hidden" not in plain
    assert "//aside" in plain and "preceding-sibling" in plain  # an XPath, a pseudo-class: no sure word, always in
    assert "' ad '" in active(b'<div class="x ad">buy</div>') and "' ad '" in active(b"<div class=ad>buy</div>")
    assert "data-ad-slot" in active(b'<DIV DATA-AD-SLOT="1">')  # attribute names in any case
    assert "hidden" in active(b'<form action="/"><button type="hidden">')
    assert "hidden" not in active(b'<div type="hidden">no form here</div>')
    assert (
        "'ad-'" not in plain and "'ad-'" in active(b'<div id="ad-top">') and "'ad-'" not in active(b'<a id="load-x">')
    )


def test_link_alternates_that_can_never_be_listed_are_not_followed() -> None:
    """Feeds, JSON and oEmbed alternates (every WordPress page has five) cost requests for nothing."""
    html = b"""<head>
    <link rel="alternate" type="application/rss+xml" href="/feed/">
    <link rel="alternate" type="application/atom+xml" href="/atom/">
    <link rel="alternate" type="application/json" href="/wp-json/wp/v2/posts/1">
    <link rel="alternate" type="application/json+oembed" href="/oembed?format=json">
    <link rel="alternate" type="text/xml+oembed" href="/oembed?format=xml">
    <link rel="alternate" type="text/html; charset=utf-8" href="/typed-html">
    <link rel="alternate" type="APPLICATION/XHTML+XML" href="/xhtml">
    <link rel="alternate" href="/untyped">
    <link rel="alternate" type="application/rss+xml" hreflang="de" href="/de/">
    <link rel="next" type="application/json" href="/page/2.json"></head>"""
    page = parse_html(html, "http://e.com/")
    assert page.links == ["http://e.com/typed-html", "http://e.com/xhtml", "http://e.com/untyped", "http://e.com/de/"]
    assert page.alternates == [("de", "http://e.com/de/")]


def test_own_chars_count_the_content_text_outside_links() -> None:
    """Non-space characters of the content outside links: a link's text is not the page's own,
    the text after a link is, and so is text in a link's ancestor around it."""
    html = (
        b"<html><body><nav><a href='/x'>Site menu text</a></nav><main><p>Own words <a href='/a'>link"
        b" <b>bold</b></a> tail &amp; more</p><a href='/b'><span>nested <a href='/c'>inner</a></span></a>"
        b"<script>var hidden = 1;</script></main></body></html>"
    )
    page = parse_html(html, "http://e.com/", digest_ignore=compile_ignore(DEFAULT_IGNORE))
    assert page.own_chars == len("Ownwordstail&more")
    links_only = b"<html><body><main><a href='/a'>one</a> <a href='/b'>two</a></main></body></html>"
    assert parse_html(links_only, "http://e.com/", digest_ignore=Ignore()).own_chars == 0
