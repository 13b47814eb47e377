"""Whether a page's raw HTML needs a browser to show its links (``--render auto``).

Two kinds of sign: an app shell (an empty mount point, no link at all, a
``<noscript>`` asking for JavaScript), and a script from the site's own
origin, which can insert links into a page that has plenty already (a
mixed site's menus): shell signs alone missed those.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from lxml import etree

from crawler.page.html import html_parser
from crawler.urls import resolve_link, site_root

__all__ = ["ALWAYS", "OWN_SCRIPT", "RawPage", "looks_like_app_shell", "render_signs"]

ALWAYS = "always"
EMPTY_APP_ROOT = "empty-app-root"
NO_LINKS = "no-links"
NOSCRIPT = "noscript"
OWN_SCRIPT = "own-script"
#: ids frameworks mount their app on (React, Vue, Next.js, Nuxt, Gatsby, Svelte, Angular, Ember).
APP_ROOT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "svelte", "app-root", "ember-app"})
_APP_ROOT_TAGS = frozenset({"app-root"})  # Angular's custom element


@dataclass(slots=True)
class RawPage:
    """What the raw HTML says before any script ran."""

    signs: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # paths of the scripts from the site's own origins
    meta: dict[str, list[str]] = field(default_factory=dict)  # <meta name=...> contents, names lowercase


def render_signs(body: bytes, url: str, encoding: str, script_origins: Collection[str] = ()) -> RawPage:
    """The signs, in a stable order, that *body* (the HTML of *url*) builds its content by script,
    and its ``<meta name>`` values (a raw noindex means the page is not rendered at all).

    *script_origins* are other roots (``scheme://host/``) whose scripts count as the site's own
    (an asset CDN the user allowed). An unparsable body shows no sign.
    """
    raw = RawPage()
    try:
        root = etree.fromstring(body, html_parser(encoding))
    except (etree.XMLSyntaxError, ValueError):
        return raw
    if root is None:
        return raw
    own = {site_root(url), *script_origins}
    base = url
    signs: set[str] = set()
    links = False
    for element in root.iter(
        "a", "area", "base", "div", "main", "section", "noscript", "script", "meta", *_APP_ROOT_TAGS
    ):
        tag = element.tag
        if tag == "meta":
            name, content = element.get("name"), element.get("content")
            if name and content is not None:
                raw.meta.setdefault(name.strip().lower(), []).append(content)
        elif tag in ("a", "area"):
            links = links or element.get("href") is not None
        elif tag == "base" and base is url and element.get("href"):
            base = resolve_link(url, element.get("href") or "") or url
        elif tag == "noscript":
            if "javascript" in "".join(element.itertext()).lower():
                signs.add(NOSCRIPT)
        elif tag == "script":
            src = element.get("src")
            target = resolve_link(base, src) if src else None
            if target and site_root(target) in own:
                signs.add(OWN_SCRIPT)
                raw.scripts.append(urlsplit(target).path)
        elif (element.get("id") in APP_ROOT_IDS or tag in _APP_ROOT_TAGS) and _empty(element):
            signs.add(EMPTY_APP_ROOT)
    if not links:
        signs.add(NO_LINKS)
    raw.signs = [sign for sign in (EMPTY_APP_ROOT, NO_LINKS, NOSCRIPT, OWN_SCRIPT) if sign in signs]
    return raw


def looks_like_app_shell(body: bytes, url: str, encoding: str) -> bool:
    """Whether a page with no link is an app shell (an empty mount point, or a ``<noscript>`` asking
    for JavaScript): what ``--render never`` cannot see past, said in the summary."""
    signs = render_signs(body, url, encoding).signs
    return EMPTY_APP_ROOT in signs or NOSCRIPT in signs


def _empty(element: etree._Element) -> bool:
    return len(element) == 0 and not (element.text or "").strip()
