"""The crawl's scope over several hosts, and --resolve's rules (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.addresses import pinned_address, read_pinned
from crawler.scope import Scope, registrable_domain
from crawler.sitemaps.hosts import host_base, host_folder
from crawler.spiders.frontier import Frontier
from crawler.state.placement import placer
from crawler.state.store import StateStore


def test_the_registrable_domain_knows_private_suffixes_and_names_outside_the_list() -> None:
    assert registrable_domain("a.b.example.co.uk") == "example.co.uk"
    assert registrable_domain("alice.github.io") == "alice.github.io"  # two users, two sites
    assert registrable_domain("www.shop.test") == "shop.test"
    assert registrable_domain("127.0.0.1") == "127.0.0.1"


def test_subdomains_keep_the_scheme_and_the_port() -> None:
    scope = Scope("https://www.example.co.uk:8443/", subdomains=True)
    assert scope.contains("https://shop.example.co.uk:8443/cart")
    assert scope.contains("https://example.co.uk:8443/")
    assert not scope.contains("http://shop.example.co.uk:8443/")  # another scheme
    assert not scope.contains("https://shop.example.co.uk/")  # another port
    assert not scope.contains("https://other.co.uk:8443/")
    assert not scope.contains("https://user@shop.example.co.uk:8443/")


def test_hosts_are_exact_names_or_a_star_for_any_host_under_one() -> None:
    scope = Scope("https://www.example.com/", ["blog.example.com", "*.cdn.example.com"])
    assert scope.contains("https://blog.example.com/x")
    assert scope.contains("https://a.b.cdn.example.com/x")
    assert not scope.contains("https://cdn.example.com/x")
    assert not scope.contains("https://shop.example.com/")
    assert scope.named_origins == ["https://blog.example.com/"]
    assert not Scope("https://www.example.com/").contains("https://blog.example.com/")  # one host: as before


def test_resolve_rules_are_per_host_and_port() -> None:
    rules = (read_pinned("WWW.Example.com:443:127.0.0.1,[::1]"),)
    assert pinned_address(rules, "www.example.com", 443) == ("127.0.0.1", "::1")
    assert pinned_address(rules, "www.example.com", 80) is None
    assert str(rules[0]) == "www.example.com:443:127.0.0.1,[::1]"
    with pytest.raises(ValueError, match="not an IP address"):
        read_pinned("www.example.com:443:example.org")


def test_a_host_name_in_another_script_is_taken_in_the_form_links_have() -> None:
    """Links to bücher.example are crawled as xn--bcher-kva.example: --host, --index-host and
    --resolve take either spelling and mean that host."""
    from scrapy.settings import Settings

    from settings.hosts import read_hosts

    settings = Settings()
    settings.setmodule("settings")
    settings.set("SITEMAP_HOSTS", ["BÜCHER.example.test", "*.straße.test"])
    settings.set("SITEMAP_INDEX_HOST", "bücher.example.test.")
    hosts = read_hosts(settings, "https://www.example.test/")
    assert hosts.names == ("xn--bcher-kva.example.test", "*.strasse.test")
    assert hosts.index_host == "xn--bcher-kva.example.test"
    assert Scope("https://www.example.test/", hosts.names).contains("https://xn--bcher-kva.example.test/")
    assert read_pinned("bücher.example.test:443:127.0.0.1").host == "xn--bcher-kva.example.test"


def test_a_host_folder_is_a_plain_host_name() -> None:
    assert host_folder("https://xn--bcher-kva.example/a") == "xn--bcher-kva.example"
    assert host_base("https://www.example.com:8443/maps/", "blog.example.com") == "https://blog.example.com:8443/maps/"
    with pytest.raises(ValueError):
        host_folder("http://[::1]:8080/")


def test_the_frontier_takes_in_max_hosts_hosts() -> None:
    frontier = Frontier(0, 0, 2048, 0, 10, max_hosts=2)
    assert frontier.over("http://a.test/1", 1) is None
    assert frontier.over("http://b.test/1", 1) is None
    assert frontier.over("http://a.test/2", 1) is None
    over = frontier.over("http://c.test/", 1)
    assert over is not None and over[1] == "more than 2 hosts in the crawl"


def test_each_host_has_its_own_delta_group(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    try:
        place = placer(store, 2, {"http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1"})
        placed = [place(f"http://a.test/{n}", "a.test/") for n in (1, 2, 3)]
        assert placed == [("a.test/delta", 1, 0), ("a.test/delta", 1, 1), ("a.test/delta", 2, 2)]
        assert place("http://b.test/1", "b.test/") == ("b.test/delta", 1, 0)  # numbered on its own
    finally:
        store.close()
