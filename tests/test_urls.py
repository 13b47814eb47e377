"""Unit tests: URL normalisation, link resolution and scope (pure logic)."""

from __future__ import annotations

import random

import pytest
from w3lib.url import safe_url_string

from crawler.scope import Scope, UrlPatterns, registrable_domain
from crawler.urls import QueryParamFilter, _normalize_full, normalize_url, resolve_link

STRIP = QueryParamFilter()


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("HTTP://Example.COM/a", "http://example.com/a"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/a/..", "http://example.com/"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/%7euser/%2f%c3%a9", "http://example.com/~user/%2F%C3%A9"),
        ("http://example.com/caf\u00e9", "http://example.com/caf%C3%A9"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/a?", "http://example.com/a"),
        ("http://example.com/a?b=2&a=1", "http://example.com/a?b=2&a=1"),
        ("http://example.com/a?utm_source=x&id=1&fbclid=y", "http://example.com/a?id=1"),
        ("http://example.com/a?utm_source=x", "http://example.com/a"),
        ("http://example.com/A/Page/", "http://example.com/A/Page/"),
        ("http://b\u00fccher.example/", "http://xn--bcher-kva.example/"),
        ("http://example.com./a", "http://example.com/a"),
    ],
)
def test_normalize(raw: str, normal: str) -> None:
    assert normalize_url(raw, params=STRIP) == normal


def test_normalize_is_idempotent_and_scrapy_keeps_it() -> None:
    for raw in (
        "http://example.com/caf\u00e9?q=\u00e9",
        "http://Ex.com:80/a/../b?x=%7e&y=%2a",
        "http://e.com/it's?a=<>",
    ):
        once = normalize_url(raw, "cp1252", STRIP)
        assert normalize_url(once, "cp1252", STRIP) == once
        assert safe_url_string(once) == once  # Scrapy's Request leaves it as is


def test_plain_url_shortcut_agrees_with_full_normalisation() -> None:
    """Most links skip the full normalisation; both paths must agree on
    every URL, including the ones made to look plain but not be."""
    rng = random.Random(5)
    hosts = ["example.com", "a-b.example.com", "127.0.0.1", "example.com.", ".example.com", "a..b", "x"]
    ports = ["", ":80", ":443", ":8080", ":65535", ":65536", ":99999", ":1"]
    pieces = ["a", "Z", "0", "-", ".", "..", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", ":", "@"]
    pieces += ["/", "/.", "/..", "/./", "/../", "?", "%41", "%7e", " ", "#", "\u00e9", "#a b\t", "#\n"]
    pieces += ["utm_source=1", "&utm_x=2"]
    for _ in range(20_000):
        scheme = rng.choice(["http", "https", "HTTP"])
        path = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        query = "?" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) if rng.random() < 0.4 else ""
        url = f"{scheme}://{rng.choice(hosts)}{rng.choice(ports)}{'/' if path else ''}{path}{query}"
        for params in (STRIP, QueryParamFilter(())):
            try:
                expected: str | type[ValueError] = _normalize_full(url, "utf-8", params)
            except ValueError:
                expected = ValueError
            try:
                actual: str | type[ValueError] = normalize_url(url, "utf-8", params)
            except ValueError:
                actual = ValueError
            assert actual == expected, url


def test_query_encoded_in_page_encoding_path_in_utf8() -> None:
    assert normalize_url("http://e.com/\u00e9?q=\u00e9", "cp1252") == "http://e.com/%C3%A9?q=%E9"
    assert normalize_url("http://e.com/\u00e9?q=\u00e9", "utf-8") == "http://e.com/%C3%A9?q=%C3%A9"


@pytest.mark.parametrize("bad", ["mailto:a@b.c", "ftp://e.com/", "/relative", "http://", "http://e.com:99999/"])
def test_normalize_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        normalize_url(bad)


def test_custom_strip_patterns() -> None:
    strip = QueryParamFilter(["sessionid", "ref_*"])
    assert normalize_url("http://e.com/?sessionid=1&ref_a=2&keep=3&utm_source=4", params=strip) == (
        "http://e.com/?keep=3&utm_source=4"
    )


@pytest.mark.parametrize(
    ("href", "absolute"),
    [
        ("b.html", "http://e.com/a/b.html"),
        ("/x", "http://e.com/x"),
        ("//other.com/y", "http://other.com/y"),
        ("  c.html \n", "http://e.com/a/c.html"),
        ("?q=1", "http://e.com/a/page.html?q=1"),
        ("#top", None),
        ("", None),
        ("mailto:x@e.com", None),
        ("TEL:123", None),
        ("javascript:void(0)", None),
        ("data:text/html,hi", None),
    ],
)
def test_resolve_link(href: str, absolute: str | None) -> None:
    assert resolve_link("http://e.com/a/page.html", href) == absolute


def test_scope_is_exact_scheme_host_and_port() -> None:
    scope = Scope("https://www.example.com/")
    assert scope.contains("https://www.example.com/a")
    assert not scope.contains("http://www.example.com/a")
    assert not scope.contains("https://example.com/a")
    assert not scope.contains("https://shop.www.example.com/a")
    assert not scope.contains("https://www.example.com:8443/a")
    assert not scope.contains("https://www.example.com.evil.org/a")
    assert Scope("http://127.0.0.1:8080/").contains("http://127.0.0.1:8080/x")
    assert not Scope("http://127.0.0.1:8080/").contains("http://127.0.0.1:80801/x")


def test_same_site_uses_the_public_suffix_list_offline() -> None:
    assert registrable_domain("www.example.co.uk") == "example.co.uk"
    assert Scope("https://www.example.com/").same_site("https://cdn.example.com/sitemap.xml")
    assert not Scope("https://www.example.com/").same_site("https://example.org/sitemap.xml")


def test_url_patterns() -> None:
    patterns = UrlPatterns(include=[r"/blog/"], exclude=[r"\?page="])
    assert patterns.excluded("https://e.com/blog/post") is None
    assert patterns.excluded("https://e.com/about") == "matches no include pattern"
    assert "exclude" in (patterns.excluded("https://e.com/blog/?page=2") or "")


def test_fingerprint_keeps_query_order_apart() -> None:
    from scrapy import Request

    from crawler.request_fingerprinter import UrlFingerprinter

    fingerprint = UrlFingerprinter().fingerprint
    assert fingerprint(Request("http://e.com/?a=1&b=2")) != fingerprint(Request("http://e.com/?b=2&a=1"))
    assert fingerprint(Request("http://e.com/x")) == fingerprint(Request("http://e.com/x"))
    assert fingerprint(Request("http://e.com/x")) != fingerprint(Request("http://e.com/x", method="HEAD"))


def test_links_joined_against_the_folder_resolve_as_against_the_page() -> None:
    """The per-folder cache of link resolution gives what urljoin gives against the page itself."""
    from urllib.parse import urljoin

    bases = ["http://h", "http://h/", "http://h/a/b.html", "http://h/a/b.html?x=1#f", "https://h:8443/a/b/",
             "http://h/a;p/b", "http://h/a/b?q=/x/y", "http://h/a/b#/frag/"]  # fmt: skip
    hrefs = ["c.html", "./", ".", "..", "../../../x", "/abs", "//other/p", "?y=2", "?", "https://e.com/z",
             "c.html?q=1#t", " spaced.html ", "a/../b/./c", ";params", "%20x", "a.html#", "a.html#x#y",
             "?q#f", "../up.html#sec-2", "//other/p#f", "https://e.com/#top"]  # fmt: skip
    for base in bases:
        for href in hrefs:
            assert resolve_link(base, href) == urljoin(base, href.strip()), (base, href)


def test_a_url_set_holds_urls_by_their_hash() -> None:
    from crawler.urls import UrlSet

    seen = UrlSet()
    seen.add("https://www.example.com/a")
    assert "https://www.example.com/a" in seen and "https://www.example.com/b" not in seen
    built = "https://www.example.com/" + "a".upper().lower()  # an equal string, another object
    assert built in seen
    seen.discard("https://www.example.com/a")
    assert "https://www.example.com/a" not in seen and len(seen) == 0
