"""The content models of the official schemas, in code (pure, no download).

Each model is an XSD ``sequence``: the element names in schema order with
how often each may stand. The sitemaps.org 0.9 schemas and Google's image
1.1, video 1.1 and news 0.9 schemas are all plain sequences, so one greedy
pass over an element's children decides order, repetition and required
children exactly as a schema validator does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from crawler.protocol import IMAGE_NS, NEWS_NS, SITEMAP_NS, TAGS_MAX, VIDEO_NS

__all__ = [
    "IMAGE",
    "INDEX_ENTRY",
    "NEWS",
    "PREFIXES",
    "PUBLICATION",
    "URL",
    "VIDEO",
    "Model",
    "Node",
    "check_sequence",
]

UNBOUNDED = 1 << 30


@dataclass(slots=True)
class Node:
    """One element inside an entry: just what the rules read."""

    ns: str
    name: str
    attrs: dict[str, str]
    line: int
    col: int
    text: str = ""
    children: list[Node] = field(default_factory=list)

    @property
    def value(self) -> str:
        return self.text.strip()


@dataclass(frozen=True, slots=True)
class Model:
    """An XSD sequence: (name, minOccurs, maxOccurs) in schema order."""

    ns: str
    parent: str
    slots: tuple[tuple[str, int, int], ...]

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _, _ in self.slots)


#: Prefixes used in messages, as users write them.
PREFIXES = {SITEMAP_NS: "", IMAGE_NS: "image:", VIDEO_NS: "video:", NEWS_NS: "news:"}

URL = Model(SITEMAP_NS, "url", (("loc", 1, 1), ("lastmod", 0, 1), ("changefreq", 0, 1), ("priority", 0, 1)))
INDEX_ENTRY = Model(SITEMAP_NS, "sitemap", (("loc", 1, 1), ("lastmod", 0, 1)))
IMAGE = Model(
    IMAGE_NS,
    "image",
    (("loc", 1, 1), ("caption", 0, 1), ("geo_location", 0, 1), ("title", 0, 1), ("license", 0, 1)),
)
VIDEO = Model(
    VIDEO_NS,
    "video",
    (
        ("thumbnail_loc", 1, 1),
        ("title", 1, 1),
        ("description", 1, 1),
        ("content_loc", 0, 1),
        ("player_loc", 0, 1),
        ("duration", 0, 1),
        ("expiration_date", 0, 1),
        ("rating", 0, 1),
        ("content_segment_loc", 0, UNBOUNDED),
        ("view_count", 0, 1),
        ("publication_date", 0, 1),
        ("tag", 0, TAGS_MAX),
        ("category", 0, 1),
        ("family_friendly", 0, 1),
        ("restriction", 0, 1),
        ("gallery_loc", 0, 1),
        ("price", 0, UNBOUNDED),
        ("requires_subscription", 0, 1),
        ("uploader", 0, 1),
        ("platform", 0, 1),
        ("live", 0, 1),
    ),
)
NEWS = Model(
    NEWS_NS,
    "news",
    (
        ("publication", 1, 1),
        ("access", 0, 1),
        ("genres", 0, 1),
        ("publication_date", 1, 1),
        ("title", 1, 1),
        ("keywords", 0, 1),
        ("stock_tickers", 0, 1),
    ),
)
PUBLICATION = Model(NEWS_NS, "publication", (("name", 1, 1), ("language", 1, 1)))

#: Receives (node, rule, message).
Sink = Callable[[Node, str, str], None]


def check_sequence(parent: Node, model: Model, rule: str, problem: Sink) -> dict[str, list[Node]]:
    """Check *parent*'s children in *model*'s namespace against its sequence.

    Children of other namespaces are left to the caller (the schemas allow
    them after the sequence). Returns the children found, by name; a missing
    required child is reported under *rule*.
    """
    prefix = PREFIXES.get(model.ns, "")
    names = model.names()
    found: dict[str, list[Node]] = {}
    position = -1
    for child in parent.children:
        if child.ns != model.ns:
            continue
        try:
            index = names.index(child.name)
        except ValueError:
            problem(child, "element", f"<{prefix}{child.name}> is not allowed in <{prefix}{model.parent}>")
            continue
        seen = found.setdefault(child.name, [])
        if index < position:
            problem(
                child,
                "order",
                f"<{prefix}{child.name}> after <{prefix}{names[position]}>: the schema order is " + ", ".join(names),
            )
        elif len(seen) == model.slots[index][2]:
            limit = model.slots[index][2]
            problem(child, "order", f"<{prefix}{child.name}> more than {limit} time{'s' if limit > 1 else ''}")
        position = max(position, index)
        seen.append(child)
    for name, minimum, _ in model.slots:
        if minimum and name not in found:
            problem(parent, rule, f"<{prefix}{model.parent}> without <{prefix}{name}>")
    return found
