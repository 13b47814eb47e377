"""End to end: crawl the local test site once, then check every rule of S2-S4."""

from __future__ import annotations

import pytest

from tests.conftest import CrawlResult, crawl
from tests.server import SiteServer

LISTED_PATHS = {
    "/",
    "/new-page.html",
    "/linked-from-noindex.html",
    "/bingbot-noindex.html",
    "/xrobots-otherbot",
    "/canon-self.html",
    "/canon-target.html",
    "/flaky",
    "/private/open.html",
    "/frag.html",
    "/track.html?id=3",
    "/case.html",
    "/dir/",
    "/malformed.html",
    "/from-malformed.html",
    "/from-malformed-2.html",
    "/legacy.cp1252.html",
    "/caf%C3%A9.html?q=%E9",
    "/%C3%BCn%C3%AFcode/%E9%A1%B5%E9%9D%A2.html",
    "/it's.html?a=1&b=%3Cx%3E&c=%22q%22",
    "/nofollow.html",
    "/from-sitemap.html",
    "/from-gz-sitemap.html",
    "/from-evil-sitemap.html",
}
QUERY_VARIANTS = 5


@pytest.fixture(scope="module")
def site(
    servers: tuple[SiteServer, SiteServer], tmp_path_factory: pytest.TempPathFactory
) -> tuple[CrawlResult, SiteServer, SiteServer]:
    main, other = servers
    main.reset()
    other.reset()
    out = tmp_path_factory.mktemp("crawl") / "public"
    result = crawl(main.url(), out, "--max-query-variants", str(QUERY_VARIANTS), "--max-urls-per-file", "10")
    assert result.code == 0, result.process.stderr
    return result, main, other


def url(server: SiteServer, path: str) -> str:
    return server.url(path)


def test_listed_set_is_exactly_the_indexable_pages(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, main, _ = site
    prefix = main.url("")
    listed = {loc[len(prefix) :] for loc in result.listed if "/calendar" not in loc}
    assert listed == LISTED_PATHS
    assert len(result.listed) == len(set(result.listed)), "duplicate loc"
    assert result.listed == sorted(result.listed), "sitemap order is deterministic (sorted)"


def test_sharded_by_count_with_an_index(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, main, _ = site
    shards = sorted(p.name for p in result.out.glob("sitemap-*.xml"))
    assert len(shards) == -(-len(result.listed) // 10)
    index = (result.out / "sitemap.xml").read_text()
    for name in shards:
        assert f"<loc>{main.url('/' + name)}</loc>" in index
    assert f"Sitemap: {main.url('/sitemap.xml')}" in result.process.stdout


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/old", "redirect"),
        ("/older", "redirect"),
        ("/loop-a", "redirect"),
        ("/loop-b", "redirect"),
        ("/away", "redirect"),
        ("/Case.html", "redirect"),
        ("/dir", "redirect"),
        ("/noindex.html", "noindex"),
        ("/googlebot-noindex.html", "noindex"),
        ("/xrobots-noindex", "noindex"),
        ("/xrobots-none", "noindex"),
        ("/xrobots-googlebot", "noindex"),
        ("/canon-abs.html", "canonicalised"),
        ("/canon-rel.html", "canonicalised"),
        ("/canon-header", "canonicalised"),
        ("/gone-404", "status"),
        ("/gone-410", "status"),
        ("/error-500", "status"),
        ("/private/secret.html", "robots"),
        ("/doc.pdf", "content-type"),
    ],
)
def test_left_out_with_reason(site: tuple[CrawlResult, SiteServer, SiteServer], path: str, reason: str) -> None:
    result, main, _ = site
    line = result.report[main.url(path)]
    assert line["outcome"] == "excluded"
    assert line["reason"] == reason


def test_report_has_status_and_details(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, main, _ = site
    assert result.report[main.url("/gone-410")]["status"] == 410
    assert result.report[main.url("/old")]["redirect_to"] == main.url("/older")
    assert result.report[main.url("/new-page.html")]["redirect_chain"] == [main.url("/old"), main.url("/older")]
    assert result.report[main.url("/canon-rel.html")]["canonical"] == main.url("/canon-target.html")
    assert result.report[main.url("/")]["outcome"] == "listed"
    assert all(line["reason"] is None for line in result.report.values() if line["outcome"] == "listed")
    listed_in_report = {u for u, line in result.report.items() if line["outcome"] == "listed"}
    assert listed_in_report == set(result.listed)


def test_out_of_scope_links_are_reported_and_never_requested(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, main, other = site
    for target in (
        main.url("/other-host.html", host="localhost"),
        f"http://127.0.0.1:{other.port}/other-port.html",
        f"https://127.0.0.1:{main.port}/other-scheme.html",
        main.url("/elsewhere.html", host="localhost"),  # a redirect target on another host
        main.url("/listed-elsewhere.html", host="localhost"),  # from a seed sitemap
    ):
        assert result.report[target]["reason"] == "out-of-scope"
    assert main.paths("localhost") == []
    assert other.hits == []
    assert main.errors == [], "something spoke TLS or garbage to the plain-HTTP server"
    assert "another origin of the same site" in result.process.stderr  # other port or scheme of 127.0.0.1


def test_robots_disallowed_never_requested(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    _, main, _ = site
    paths = main.paths()
    assert "/private/secret.html" not in paths
    assert "/private/open.html" in paths
    assert paths.index("/robots.txt") == 0


def test_hostile_sitemaps_are_read_safely(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    _, main, _ = site
    paths = main.paths()
    assert {"/seed-evil.xml", "/seed-bomb.xml.gz"} <= set(paths)
    assert not any("lol" in p or "passwd" in p or "ext;" in p for p in paths), "an entity was expanded"
    assert "/from-bomb.html" not in paths  # the bomb was refused, not decompressed


def test_nofollow_page_links_not_followed(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, main, _ = site
    assert "/only-from-nofollow.html" not in main.paths()
    assert main.url("/only-from-nofollow.html") not in result.report


def test_each_url_requested_once_despite_variants(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    _, main, _ = site
    paths = main.paths()
    for path in ("/frag.html", "/track.html?id=3", "/case.html", "/dir/", "/"):
        assert paths.count(path) == 1, path
    assert not any("utm_" in p or "fbclid" in p or "gclid" in p or "#" in p for p in paths)
    assert paths.count("/flaky") == 2  # one failure, one retry that worked


def test_calendar_trap_is_bounded(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, main, _ = site
    calendar_hits = [p for p in main.paths() if p.startswith("/calendar")]
    assert 1 <= len(calendar_hits) <= QUERY_VARIANTS
    limited = [line for u, line in result.report.items() if "/calendar" in u and line["reason"] == "limit"]
    assert limited, "the URLs beyond the cap are reported with reason 'limit'"
    assert all("query variants" in str(line["detail"]) for line in limited)


def test_escaping_in_the_written_xml(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, _, _ = site
    raw = b"".join(p.read_bytes() for p in result.out.glob("sitemap-*.xml"))
    assert b"/it&apos;s.html?a=1&amp;b=%3Cx%3E&amp;c=%22q%22</loc>" in raw
    assert b"&b=" not in raw  # no bare ampersand anywhere


def test_windows_1252_query_and_utf8_path(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    _, main, _ = site
    assert "/caf%C3%A9.html?q=%E9" in main.paths()


def test_user_agent_sent(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    _, main, _ = site
    assert all(hit.user_agent.startswith("sitemap-crawler/") for hit in main.hits)


def test_report_written_beside_not_inside_output(site: tuple[CrawlResult, SiteServer, SiteServer]) -> None:
    result, _, _ = site
    assert (result.out.parent / "public.crawl-report.jsonl").is_file()
    assert not any(p.suffix == ".jsonl" for p in result.out.iterdir())
    assert not any(p.name.startswith(".sitemap-staging") for p in result.out.iterdir())
