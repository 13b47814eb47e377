"""Whether rendering changes what the sitemap depends on, learnt per kind of page (``--render auto``).

Static site generators (Docusaurus, VitePress, MkDocs Material, mdBook, Astro, Sphinx) load a
script of their own on every page, yet their pages are complete without it; a single-page app's
are not. So a page that merely loads an own-origin script is rendered only while its *group* has
not shown which it is. A group is the pages that load the same set of own scripts (their paths,
with the build's hashes and numbers blanked): one template of one generator. The first
:attr:`Groups.sample` pages of a group are rendered and compared raw against rendered on what a
sitemap depends on: links on the site, canonical, robots directives, hreflang alternates, title.
Once that many in a row changed nothing, the group's pages are read raw, but one in
:attr:`Groups.recheck_every` is rendered again; the first change makes every later page of the
group rendered. App shells are rendered whatever their group (the signs of
:mod:`crawler.render.signs`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum

from crawler.page.headers import robots_directives
from crawler.page.html import PageHtml
from crawler.urls import normalize_or_raw, site_root

__all__ = ["Because", "Groups", "differences", "script_group"]

_BUILD_NOISE = re.compile(r"[0-9a-f]{6,}|[0-9]+", re.IGNORECASE)
MAX_GROUPS = 10_000  # past this many templates (a site of generated script names), every page is rendered
MAX_BODIES = 1_000  # raw bodies remembered per group, to tell one document served for every URL


class Because(StrEnum):
    """Why ``auto`` rendered a page, or did not (the report's ``render.because``)."""

    ALWAYS = "always"  # --render always
    APP_SHELL = "app-shell"  # its raw HTML is a shell
    SAMPLED = "sampled"  # its group is still being learnt
    RECHECK = "re-check"  # one in recheck_every of a group that needs no rendering
    GROUP_NEEDS_IT = "group-needs-it"  # rendering changed a page of its group
    GROUP_UNCHANGED = "group-unchanged"  # not rendered: its group's samples changed nothing
    WAIT = "wait"  # not decided yet: the group's samples are still in the browser


def script_group(script_paths: list[str]) -> str:
    """The group of a page from the paths of its own scripts (build hashes and numbers blanked)."""
    return " ".join(sorted({_BUILD_NOISE.sub("*", path) for path in script_paths}))


@dataclass(slots=True)
class _Group:
    bodies: set[bytes] = field(default_factory=set)  # digests of the first raw bodies seen
    needs: bool = False
    quiet: int = 0  # samples in a row that rendering changed nothing on
    sampling: int = 0  # samples in the browser now
    skipped: int = 0  # pages read raw since the last re-check


@dataclass(slots=True)
class Groups:
    sample: int = 3
    recheck_every: int = 50
    groups: dict[str, _Group] = field(default_factory=dict)

    def plan(self, group: str, body: bytes = b"") -> Because:
        """What to do with the next page of *group* (*body*: a digest of its raw HTML); a
        :attr:`Because.SAMPLED` or :attr:`Because.RECHECK` must be answered by :meth:`learn`, a
        :attr:`Because.WAIT` asked again once it was. Two URLs of a group served the very same
        HTML (an app's one index.html behind every route): only its script tells them apart, so
        the group needs rendering whatever its samples showed."""
        known = self.groups.get(group)
        if known is None:
            if len(self.groups) >= MAX_GROUPS:
                return Because.GROUP_NEEDS_IT
            known = self.groups[group] = _Group()
        if body and body in known.bodies:
            known.needs = True
        if known.needs:
            return Because.GROUP_NEEDS_IT
        because = self._next(known)
        if body and because is not Because.WAIT and len(known.bodies) < MAX_BODIES:
            known.bodies.add(body)
        return because

    def _next(self, known: _Group) -> Because:
        if known.quiet >= self.sample:
            known.skipped += 1
            if known.skipped < self.recheck_every:
                return Because.GROUP_UNCHANGED
            known.skipped = 0
            known.sampling += 1
            return Because.RECHECK
        if known.quiet + known.sampling < self.sample:
            known.sampling += 1
            return Because.SAMPLED
        return Because.WAIT

    def learn(self, group: str, changed: list[str] | None) -> None:
        """What a sample showed: the *changed* facts, or ``None`` when its render failed."""
        known = self.groups[group]
        known.sampling -= 1
        if changed:
            known.needs = True
        elif changed is not None:
            known.quiet += 1


def differences(
    raw: PageHtml, shown: PageHtml, url: str, robots_token: str, same_page: Collection[str] = ()
) -> list[str]:
    """What the rendered page *shown* says differently from the *raw* one, of what a sitemap
    depends on: ``links`` (a new link on the page's origin), ``canonical``, ``robots``,
    ``hreflang``, ``title``. *same_page* are URLs that redirected to *url* (its redirect chain):
    they name the page itself, so a script that rewrites a canonical or alternate from one of
    them to *url* (Docusaurus adding the slash nginx redirects to) changes nothing."""
    origin = site_root(url)
    itself = {normalize_or_raw(each) for each in same_page}

    def normal(link: str) -> str:
        found = normalize_or_raw(link)
        return url if found in itself else found

    def on_site(links: list[str]) -> set[str]:
        found = set()
        for link in links:
            normal_link = normal(link)
            try:
                if site_root(normal_link) == origin:
                    found.add(normal_link)
            except ValueError:
                continue  # no URL at all
        return found

    changed = []
    if on_site(shown.links) - on_site(raw.links):
        changed.append("links")
    if {normal(c) for c in shown.canonicals} != {normal(c) for c in raw.canonicals}:
        changed.append("canonical")
    if robots_directives(shown.meta, [], robots_token) != robots_directives(raw.meta, [], robots_token):
        changed.append("robots")
    if sorted((lang, normal(link)) for lang, link in shown.alternates) != sorted(
        (lang, normal(link)) for lang, link in raw.alternates
    ):
        changed.append("hreflang")
    if (shown.title or "").strip() != (raw.title or "").strip():
        changed.append("title")
    return changed
