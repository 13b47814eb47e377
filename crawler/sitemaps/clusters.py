"""hreflang clusters for ``xhtml:link`` alternates: a whole-site rule (pure).

A listed URL carries one link per language version of its cluster, itself
included. A version on this site counts only if it is listed and links
back (search engines ignore one-way annotations); versions on other sites
cannot be checked and are kept as declared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Cluster", "resolve_cluster"]


@dataclass(slots=True)
class Cluster:
    links: list[tuple[str, str]]  # (hreflang, href) to write
    warnings: list[tuple[str, str]]  # (code, detail)


def resolve_cluster(
    url: str,
    declared: list[tuple[str, str]],
    in_scope: Callable[[str], bool],
    listed: Callable[[str], bool],
    declared_by: Callable[[str], dict[str, str]],
) -> Cluster:
    """The alternates to write for *url*, given what it declares.

    *declared_by(href)* maps the URLs that page *href* declares to their tags.
    """
    links: list[tuple[str, str]] = []
    warnings: list[tuple[str, str]] = []
    has_self = False
    for tag, href in declared:
        if href == url:
            has_self = True
        elif in_scope(href):
            if not listed(href):
                warnings.append(("hreflang-not-indexable", f"{tag} -> {href} is not listed (see its report line)"))
                continue
            if url not in declared_by(href):
                warnings.append(("hreflang-not-reciprocal", f"{tag} -> {href} does not link back"))
                continue
        links.append((tag, href))
    if not any(href != url for _, href in links):
        return Cluster([], warnings)  # no other version: nothing to annotate
    if not has_self:
        named = [declared_by(href).get(url) for _, href in links if href != url]
        self_tag = next((t for t in named if t), None)
        if self_tag is None:
            warnings.append(("hreflang-no-self", "the page does not list itself and no version names it"))
            return Cluster([], warnings)
        links.insert(0, (self_tag, url))
    return Cluster(links, warnings)
