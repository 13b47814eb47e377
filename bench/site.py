"""Generate a synthetic static site for the crawl benchmark.

Pages are realistic in size (20-60 KB of HTML) and link density (50-150
links, mostly to other pages of the site, a few to other hosts, some with
fragments and tracking parameters), seeded so every run builds the same site.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = [
    "sitemap",
    "crawler",
    "search",
    "engine",
    "index",
    "page",
    "content",
    "product",
    "category",
    "article",
    "news",
    "review",
    "guide",
    "price",
    "delivery",
    "shipping",
    "return",
    "customer",
    "account",
    "help",
    "support",
    "about",
    "contact",
    "blog",
    "archive",
    "tag",
]


def page_path(number: int) -> str:
    section = ("products", "blog", "docs", "help")[number % 4]
    return f"/{section}/{number // 100}/page-{number}.html"


def _media(number: int, rng: random.Random) -> tuple[str, str]:
    """(head, body) markup: images on every page, a video on every 50th,
    an en/de hreflang pair on every 10th pair of pages."""
    head, body = "", ""
    for i in range(rng.randint(3, 8)):
        image = f"/img/{number}-{i}"
        body += f'<img src="{image}.jpg" srcset="{image}-480.jpg 480w, {image}-1200.jpg 1200w" alt="">'
    body += '<img src="/img/logo.svg" alt="logo">'
    if number % 50 == 0:
        video = {
            "@context": "https://schema.org",
            "@type": "VideoObject",
            "name": f"Video {number}",
            "description": "A video about this page.",
            "thumbnailUrl": f"/thumbs/{number}.jpg",
            "contentUrl": f"/videos/{number}.mp4",
            "duration": "PT2M10S",
            "uploadDate": "2026-11-01T10:00:00Z",
        }
        head += f'<script type="application/ld+json">{json.dumps(video)}</script>'
        body += f'<video src="/videos/{number}.mp4" poster="/thumbs/{number}.jpg"></video>'
    if number % 20 in (0, 1):
        english, german = page_path(number - number % 20), page_path(number - number % 20 + 1)
        head += (
            f'<link rel="alternate" hreflang="en" href="{english}"><link rel="alternate" hreflang="de" href="{german}">'
        )
    return head, body


def build_site(root: Path, pages: int, seed: int = 7) -> int:
    """Write *pages* HTML files under *root*; return the total bytes written."""
    rng = random.Random(seed)
    total = 0
    (root / "robots.txt").parent.mkdir(parents=True, exist_ok=True)
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    for number in range(pages):
        # Link to neighbours and random pages so the whole site is reachable.
        targets = [page_path((number + 1) % pages), page_path((number * 7 + 3) % pages)]
        targets += [page_path(rng.randrange(pages)) for _ in range(rng.randint(45, 140))]
        links = []
        for i, target in enumerate(targets):
            if i % 17 == 5:
                target += "#section-2"
            elif i % 23 == 7:
                target += "?utm_source=newsletter"
            links.append(f'<li><a href="{target}" class="nav-link">{rng.choice(WORDS)} {rng.choice(WORDS)}</a></li>')
        links += [f'<li><a href="https://external-{i}.example.org/">partner {i}</a></li>' for i in range(3)]
        media = _media(number, rng)
        filler_words = rng.randint(2500, 7500)
        paragraphs = []
        for _ in range(filler_words // 120):
            paragraphs.append("<p>" + " ".join(rng.choice(WORDS) for _ in range(120)) + "</p>")
        html = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {number}</title>'
            f'<link rel="canonical" href="{page_path(number)}"><link rel="stylesheet" href="/style.css">'
            f'<meta name="description" content="page {number}">{media[0]}</head><body><header><nav><ul>'
            + "".join(links[:20])
            + "</ul></nav></header><main>"
            + media[1]
            + "".join(paragraphs)
            + "<ul>"
            + "".join(links[20:])
            + "</ul></main><footer>(c) bench</footer></body></html>\n"
        )
        path = root / page_path(number).lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        data = html.encode()
        path.write_bytes(data)
        total += len(data)
    index = "".join(f'<a href="{page_path(n)}">{n}</a>' for n in range(0, pages, max(1, pages // 50)))
    (root / "index.html").write_text(f"<!DOCTYPE html><html><body>{index}</body></html>\n")
    return total
