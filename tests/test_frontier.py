"""Unit tests: the frontier's page budget, URL limits and report-line cap."""

from __future__ import annotations

from crawler.reasons import Limit, Reason
from crawler.spiders.frontier import Frontier, variant_key


def test_limits_are_named_by_kind_in_order() -> None:
    frontier = Frontier(max_pages=2, max_depth=3, max_url_length=40, max_variants=1, max_lines=10)
    assert frontier.over("https://e.com/d", 4) == (Limit.DEPTH, "depth 4 > max depth 3")
    assert frontier.over("https://e.com/" + "x" * 40, 1) == (Limit.URL_LENGTH, "URL length 54 > 40")
    assert frontier.over("https://e.com/cal?m=1", 1) is None
    assert frontier.over("https://e.com/cal?m=2", 1) == (
        Limit.QUERY_VARIANTS,
        "more than 1 query variants of /cal with parameters m",
    )
    frontier.reserve("https://e.com/a")
    frontier.reserve("https://e.com/a")
    assert frontier.full
    assert frontier.over("https://e.com/b", 1) == (Limit.PAGES, "max pages 2 reached")
    frontier.release("https://e.com/a")  # a queued page robots.txt turned away
    assert not frontier.full and frontier.over("https://e.com/b", 1) is None


def test_path_parameters_are_variants_of_one_path() -> None:
    assert variant_key("https://e.com/a/b.html") is None
    assert variant_key("https://e.com/a;v=1/b.html") == ("e.com/a/b.html", ";v")
    assert variant_key("https://e.com/a/b.html?y=2&x=1&y=3") == ("e.com/a/b.html", "x,y")
    assert variant_key("https://e.com/a/b.html?%78=1&y=2") == ("e.com/a/b.html", "x,y")  # a name spelt otherwise
    frontier = Frontier(max_pages=0, max_depth=0, max_url_length=2048, max_variants=2, max_lines=10)
    results = [frontier.over(f"https://e.com/cart;sid={i}", 1) for i in range(4)]
    assert results[:2] == [None, None] and all(r is not None and r[0] is Limit.QUERY_VARIANTS for r in results[2:])


def test_an_unlimited_budget_is_never_full() -> None:
    frontier = Frontier(max_pages=0, max_depth=0, max_url_length=2048, max_variants=0, max_lines=10)
    for _ in range(1000):
        frontier.reserve("https://e.com/a")
    assert not frontier.full and frontier.over("https://e.com/x?a=1", 10_000) is None


def test_report_lines_are_capped_per_reason_and_the_rest_counted() -> None:
    frontier = Frontier(max_pages=0, max_depth=0, max_url_length=2048, max_variants=0, max_lines=3)
    given = [frontier.itemise(Reason.LIMIT) for _ in range(5)]
    assert given == [True, True, True, False, False]
    assert frontier.itemise(Reason.OUT_OF_SCOPE)  # each reason has its own lines
    assert frontier.saturated(Reason.LIMIT) and not frontier.saturated(Reason.OUT_OF_SCOPE)
    assert frontier.not_itemised == {Reason.LIMIT: 2}


def test_query_variants_are_budgeted_per_path_and_parameter_names() -> None:
    """A CMS with plain permalinks has every page at "/": posts, categories and pages are
    kinds of their own, so a cap on one (a calendar, searches) never costs the others."""
    frontier = Frontier(max_pages=0, max_depth=0, max_url_length=2048, max_variants=3, max_lines=10)
    calendar = [frontier.over(f"https://e.com/?m={i}", 1) for i in range(10)]
    assert calendar[:3] == [None] * 3 and all(r is not None and "with parameters m" in r[1] for r in calendar[3:])
    assert [frontier.over(f"https://e.com/?p={i}", 1) for i in range(3)] == [None] * 3
    assert [frontier.over(f"https://e.com/?cat={i}", 1) for i in range(3)] == [None] * 3
    assert frontier.over(f"https://e.com/?p=1&replytocom={9}", 1) is None


def test_a_path_has_ten_times_the_variants_of_one_parameter_set_in_all() -> None:
    frontier = Frontier(max_pages=0, max_depth=0, max_url_length=2048, max_variants=2, max_lines=10)
    names = [f"f{i}" for i in range(30)]
    results = [frontier.over(f"https://e.com/shop?{name}=1", 1) for name in names]
    assert results[:20] == [None] * 20
    assert all(r is not None and r[1].endswith("(all parameters)") for r in results[20:])


def test_urls_the_sites_own_sitemap_lists_are_not_counted_as_variants() -> None:
    frontier = Frontier(max_pages=0, max_depth=0, max_url_length=2048, max_variants=2, max_lines=10)
    listed = [frontier.over(f"https://e.com/?p={i}", 1, listed_by_site=True) for i in range(50)]
    assert listed == [None] * 50
    assert frontier.over("https://e.com/?p=900", 1) is None  # a linked one still has the whole cap


def test_each_host_has_its_share_of_the_budget_and_gets_it_back() -> None:
    frontier = Frontier(max_pages=10, max_depth=0, max_url_length=2048, max_variants=0, max_lines=10,
                        max_hosts=5, max_pages_per_host=2)  # fmt: skip
    for path in ("/a", "/b"):
        assert frontier.over(f"https://forum.e.com{path}", 1) is None
        frontier.reserve(f"https://forum.e.com{path}")
    assert frontier.over("https://forum.e.com/c", 1) == (
        Limit.HOST_PAGES,
        "max pages 2 per host reached on https://forum.e.com",
    )
    assert frontier.over("https://www.e.com/a", 1) is None  # another host's share is its own
    frontier.release("https://forum.e.com/a")  # robots.txt turned it away: the share has room again
    assert frontier.over("https://forum.e.com/c", 1) is None
