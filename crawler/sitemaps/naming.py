"""File names of a sitemap set, built in one place (pure).

``sitemap.xml`` is the index; shards are ``sitemap-1.xml``, ...; a shard
group (a section, a month, an ID range, the delta or the news sitemaps)
goes between the stem and the number: ``sitemap-products-1.xml``.
"""

from __future__ import annotations

__all__ = ["HOST_GROUP_SEP", "NEWS_GROUP", "RESERVED_GROUPS", "index_name", "shard_name"]

#: Group of the Google News sitemaps, rewritten on every run.
NEWS_GROUP = "news"
#: Groups the exporter uses itself; a user's section may not take their names.
RESERVED_GROUPS = frozenset({NEWS_GROUP, "delta"})
#: In a crawl of several hosts a stored shard group is the host's folder, this, then the group:
#: each host's shards are numbered on their own (crawler/sitemaps/hosts.py).
HOST_GROUP_SEP = "/"


def shard_name(basename: str, group: str, number: int, gzip: bool) -> str:
    suffix = ".xml.gz" if gzip else ".xml"
    return f"{basename}-{group}-{number}{suffix}" if group else f"{basename}-{number}{suffix}"


def index_name(basename: str) -> str:
    return f"{basename}.xml"
