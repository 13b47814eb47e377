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
from crawler.sitemaps.publish import MANIFEST_NAME, ForeignFiles
from crawler.sitemaps.shards import write_assigned, write_sitemaps
from crawler.sitemaps.spool import SpooledUrl
from crawler.sitemaps.writer import render_index

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from crawler.sitemaps.entries import UrlEntry
    from crawler.sitemaps.publish import PublishResult, SitemapPublisher
    from crawler.sitemaps.shards import Relocate, SetLayout

__all__ = [
    "host_base", "host_folder", "host_group", "host_sets_in", "hosts_index_name", "settle_gone_hosts",
    "write_host_sets", "write_hosts_index",
]  # fmt: skip


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


def host_sets_in(
    out_dir: Path, base_url: str, in_scope: Callable[[str], bool], outages: Mapping[str, str]
) -> Iterator[tuple[str, str, str | None]]:
    """(folder, ``scheme://host[:port]/``, why kept) of each host's set in OUT. *why* is ``None``
    for a set this run judges (a host of the crawl, in reach); else why the set is left as it was:
    the host was out of reach (*outages*: origin -> why; an outage is no removal), or it is not one
    of this crawl's hosts (not this run's to judge)."""
    for manifest in sorted(out_dir.glob(f"*/{MANIFEST_NAME}")):
        folder = manifest.parent
        if folder.is_symlink() or not HOST_NAME.fullmatch(folder.name):
            continue
        origin = _origin(base_url, folder.name)
        if not in_scope(origin + "/"):
            yield folder.name, origin + "/", "not a host of this crawl"
        elif outage := outages.get(origin):
            yield folder.name, origin + "/", f"it was out of reach ({outage})"
        else:
            yield folder.name, origin + "/", None


def settle_gone_hosts(
    sets: Iterable[tuple[str, str, str | None]],
    written: Iterable[str],
    publisher_for: Callable[[str], SitemapPublisher],
) -> tuple[list[str], dict[str, str]]:
    """Of the host *sets* in OUT (:func:`host_sets_in`) this run wrote none for: those it judges are
    withdrawn, as none of their URLs is listed any more (a sitemap would list pages that left); the
    others are kept. Returns (withdrawn, kept: folder -> why)."""
    withdrawn: list[str] = []
    kept: dict[str, str] = {}
    done = set(written)
    for folder, _, why in sets:
        if folder in done:
            continue
        if why is not None:
            kept[folder] = why
        else:
            publisher_for(folder).withdraw()
            withdrawn.append(folder)
    return withdrawn, kept


def hosts_index_name(index_name: str) -> str:
    """The file of the index of every host's sitemaps, beside the index host's own index."""
    return index_name.removesuffix(".xml") + "-hosts.xml"


def write_hosts_index(
    index_folder: str,
    sets: Iterable[tuple[str, str, str | None]],
    written: Mapping[str, PublishResult],
    publisher_for: Callable[[str], SitemapPublisher],
    in_scope: Callable[[str], bool],
) -> tuple[str | None, str]:
    """One index on the host of *index_folder* listing the files of every host's published set,
    each on its own host: the sets *written* this run and those of *sets* (:func:`host_sets_in`)
    kept through an outage. Search engines accept it for a host whose robots.txt names it
    (cross-submission): the sitemaps of several hosts submitted in one place. It is an extra of
    the index host's set. Returns its URL, or ``None`` (and no such file of ours) and why."""
    own = publisher_for(index_folder)
    name = hosts_index_name(own.index_name)
    if not own.read_manifest():
        own.remove_extra(name)
        return None, f"{index_folder} has no set of its own"
    folders = [folder for folder, root, why in sets if folder in written or (why and in_scope(root))]
    entries = []
    for folder in sorted(folders, key=lambda each: (each != index_folder, each)):
        publisher = publisher_for(folder)
        files = publisher.read_manifest().items()
        entries += [(publisher.base_url + file, meta.get("lastmod")) for file, meta in files]
    try:
        data = render_index(entries)
    except ValueError as error:  # past 50,000 files in all: each host's own index still stands
        own.remove_extra(name)
        return None, str(error)
    try:
        own.add_extra(name, data)
    except ForeignFiles as error:
        return None, str(error)
    if index_folder in written:
        written[index_folder].extras.append(name)  # published with the set (--publish)
    return own.base_url + name, ""


def _origin(base_url: str, folder: str) -> str:
    root = host_base(base_url, folder)
    return root[: root.index("/", root.index("//") + 2)]
