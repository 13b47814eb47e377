"""One sitemap set per host, for a crawl of several hosts (pure).

A sitemap may list only URLs of its own host, and search engines keep a sitemap per
host, so each host's URLs are written as a set of their own in ``OUT/HOST/``, served
at the base folder's path on that host, and no file mixes hosts. The whole-site
rules still see every host at once (an hreflang cluster across hosts is checked
whole); only the writing is split. The entries come sorted by loc (or, with a state
store, by their shard group, which starts with the host's folder), so each host's
entries come one after the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import groupby
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawler.addresses import HOST_NAME
from crawler.sitemaps.naming import HOST_GROUP_SEP
from crawler.sitemaps.publish import MANIFEST_NAME
from crawler.sitemaps.shards import write_assigned, write_sitemaps
from crawler.sitemaps.spool import SpooledUrl

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from crawler.scope import Scope
    from crawler.sitemaps.entries import UrlEntry
    from crawler.sitemaps.publish import PublishResult, SitemapPublisher
    from crawler.sitemaps.shards import Relocate, SetLayout

__all__ = ["host_base", "host_folder", "host_group", "judged_hosts", "settle_gone_hosts", "write_host_sets"]


def host_folder(url: str) -> str:
    """The folder of *url*'s host under OUT: the host name itself (its ASCII form). Any other
    spelling is refused, so a folder name can never leave OUT."""
    host = urlsplit(url).hostname or ""
    if not HOST_NAME.fullmatch(host):
        raise ValueError(f"{host!r} is no host name a folder can be named after")
    return host


def host_base(base_url: str, folder: str) -> str:
    """The URL the set in *folder* is served at: the base folder's path on that host (every host
    of a crawl is on the start URL's scheme and port, so the base URL's)."""
    base = urlsplit(base_url)
    port = f":{base.port}" if base.port else ""
    return f"{base.scheme}://{folder}{port}{base.path}"


def host_group(url: str, group: str) -> str:
    """The shard group stored for *url*: its host's folder, then the strategy's *group*."""
    return f"{host_folder(url)}{HOST_GROUP_SEP}{group}"


def _relocate_in(relocate: Relocate, folder: str, urls: list[str], group: str) -> int:
    return relocate(urls, f"{folder}{HOST_GROUP_SEP}{group}")


def _strategy_group(spooled: SpooledUrl) -> SpooledUrl:
    spooled.group = spooled.group.partition(HOST_GROUP_SEP)[2]
    return spooled


def write_host_sets(
    pairs: Iterable[tuple[SpooledUrl, UrlEntry]],
    publisher_for: Callable[[str], SitemapPublisher],
    layout: SetLayout,
    now: str,
    *,
    news: Callable[[str], Iterable[UrlEntry]],
    relocate: Relocate | None = None,
) -> Iterator[tuple[str, PublishResult, int]]:
    """Each host's set published in its folder: (folder, result, news URLs), host by host. With
    *relocate* (a state store) the entries keep their assigned shards, else they are cut anew."""
    for folder, members in groupby(pairs, key=lambda pair: host_folder(pair[1].loc)):
        publisher = publisher_for(folder)
        staging = publisher.stage()
        try:
            if relocate is None:
                entries = (entry for _, entry in members)
                published = write_sitemaps(entries, publisher, staging, layout, now, news=news(folder))
            else:
                relocate_here = partial(_relocate_in, relocate, folder)
                assigned = ((_strategy_group(spooled), entry) for spooled, entry in members)
                shards = write_assigned(assigned, staging, layout, relocate_here)
                published = write_sitemaps((), publisher, staging, layout, now, news=news(folder), shards=shards)
        finally:
            publisher.abort(staging)
        yield folder, *published


def settle_gone_hosts(
    out_dir: Path,
    written: Iterable[str],
    publisher_for: Callable[[str], SitemapPublisher],
    *,
    base_url: str,
    scope: Scope,
    unreadable: Mapping[str, str],
) -> tuple[list[str], dict[str, str]]:
    """The sets in OUT of hosts this run wrote none for: withdrawn when the host is one of the
    crawl's and none of its URLs is listed any more (its sitemap would list pages that left); kept,
    with why, when it was out of reach (*unreadable*: origin -> why; an outage is no removal) or it is
    not one of this crawl's (not this run's to judge). Returns (withdrawn, kept)."""
    withdrawn: list[str] = []
    kept: dict[str, str] = {}
    done = set(written)
    for manifest in sorted(out_dir.glob(f"*/{MANIFEST_NAME}")):
        folder = manifest.parent
        if folder.name in done or folder.is_symlink() or not HOST_NAME.fullmatch(folder.name):
            continue
        origin = _origin(base_url, folder.name)
        if not scope.contains(origin + "/"):
            kept[folder.name] = "not a host of this crawl"
        elif why := unreadable.get(origin):
            kept[folder.name] = f"it was out of reach ({why})"
        else:
            publisher_for(folder.name).withdraw()
            withdrawn.append(folder.name)
    return withdrawn, kept


def judged_hosts(out_dir: Path, base_url: str, scope: Scope, outages: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(folder, ``scheme://host[:port]/``) of each host set in OUT this run judges: a host of the
    crawl that was in reach (an out-of-reach host, or one the crawl no longer covers, keeps its set)."""
    for manifest in sorted(out_dir.glob(f"*/{MANIFEST_NAME}")):
        folder = manifest.parent
        origin = _origin(base_url, folder.name)
        if not folder.is_symlink() and scope.contains(origin + "/") and origin not in outages:
            yield folder.name, origin + "/"


def _origin(base_url: str, folder: str) -> str:
    root = host_base(base_url, folder)
    return root[: root.index("/", root.index("//") + 2)]
