"""Big site generator (a benchmark helper, not a test): a deterministic static site of
any size for crawl-scale benchmarks (bench/frontier.py uses it). Checks free disk space
and inodes before writing anything.

Shape (N = --pages, the total number of HTML pages, home and sections included)::

    /                      home: links to every section (depth 0)
    /sI/                   S section pages, each listing all its pages (depth 1)
    /sI/pJ.html            N - 1 - S leaf pages, spread evenly over the sections (depth 2)

S defaults to round(sqrt(N)), so 1,000,000 pages = 1,000 sections of ~999 pages,
100,000 = 316 sections of ~315, 10,000 = 100 sections of ~99.

Every leaf page is ~2.4 KB of HTML with exactly 25 links:
home, its section, previous and next page, 9 other pages of its section and
12 random pages anywhere on the site. A section page links to home, the previous and
next section and all its pages (so, like a real category page, it can list ~1,000
links). Every page has a <title>, a meta description and filler text so that its
size is realistic. Nothing links out of the site. robots.txt allows everything.

The random links come from a per-page RNG seeded with (--seed, page path), so
the site is the same on every run and any one page can be rebuilt alone
(``page_html``), e.g. by a server generating pages on the fly.

True (breadth-first) depth of a URL: 0 for /, 1 for a section, 2 for a leaf
(every leaf is listed by its section). ``depth_of(path)`` returns it.

Usage::

    python bench/big_site.py --pages 100000 --out /tmp/site-100k
    python bench/big_site.py --pages 1000000 --out /tmp/site-1m --seed 7   # ~4 min, ~4.1 GB of 4 KB blocks

Then serve DIR with any static server (nginx: ``root DIR; index index.html;``).
Also written: DIR/site.json (parameters and counts) and, with --urls, DIR/urls.txt
(every page's path, one per line, for checking that a crawl found them all).
Standard library only; Python 3.9+.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.site import WORDS as SITE_WORDS

WORDS = [  # the small site's words, then a few more
    *SITE_WORDS,
    "catalogue",
    "section",
    "listing",
    "detail",
    "summary",
    "overview",
    "manual",
    "reference",
    "release",
    "notes",
    "update",
]

LEAF_LINKS = 25
RANDOM_LINKS = 12
SIBLING_LINKS = 9  # + home, section, previous, next = 13; + 12 random = 25
TARGET_BYTES = 2400


class Site:
    """The site's shape: *pages* in all, *sections* of them section pages."""

    def __init__(self, pages: int, sections: int | None = None, seed: int = 7):
        if pages < 4:
            raise ValueError("at least 4 pages")
        self.pages = pages
        self.sections = sections or max(1, round(math.sqrt(pages)))
        self.seed = seed
        leaves = pages - 1 - self.sections
        if leaves < self.sections:
            raise ValueError("too many sections for that many pages")
        self.leaves = leaves
        base, extra = divmod(leaves, self.sections)
        # section i holds base (+1 for the first `extra` sections) leaves
        self.sizes = [base + (1 if i < extra else 0) for i in range(self.sections)]
        self.starts = []  # global leaf number of each section's first leaf
        total = 0
        for size in self.sizes:
            self.starts.append(total)
            total += size

    # -- URLs -----------------------------------------------------------------
    @staticmethod
    def section_path(i: int) -> str:
        return f"/s{i}/"

    @staticmethod
    def leaf_path(i: int, j: int) -> str:
        return f"/s{i}/p{j}.html"

    def leaf_by_number(self, n: int) -> tuple[int, int]:
        """(section, index in section) of global leaf number *n*."""
        lo, hi = 0, self.sections - 1
        while lo < hi:  # last section whose start <= n
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= n:
                lo = mid
            else:
                hi = mid - 1
        return lo, n - self.starts[lo]

    def all_paths(self):
        yield "/"
        for i in range(self.sections):
            yield self.section_path(i)
        for i in range(self.sections):
            for j in range(self.sizes[i]):
                yield self.leaf_path(i, j)

    # -- pages ----------------------------------------------------------------
    def _rng(self, path: str) -> random.Random:
        return random.Random(f"{self.seed}:{path}")

    @staticmethod
    def _doc(title: str, links: list[tuple[str, str]], rng: random.Random, target: int) -> str:
        items = "".join(f'<li><a href="{href}">{text}</a></li>\n' for href, text in links)
        head = (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f"<title>{title}</title>\n"
            f'<meta name="description" content="{title}: {" ".join(rng.choices(WORDS, k=8))}">\n'
            "</head><body>\n"
            f"<h1>{title}</h1>\n<ul>\n{items}</ul>\n"
        )
        tail = "</body></html>\n"
        room = target - len(head) - len(tail) - 7
        text = []
        size = 0
        while size < room:
            word = rng.choice(WORDS)
            text.append(word)
            size += len(word) + 1
        return f"{head}<p>{' '.join(text)[: max(room, 0)]}</p>\n{tail}"

    def home_html(self) -> str:
        links = [(self.section_path(i), f"Section {i}") for i in range(self.sections)]
        return self._doc("Home", links, self._rng("/"), TARGET_BYTES)

    def section_html(self, i: int) -> str:
        path = self.section_path(i)
        links = [("/", "Home")]
        links.append((self.section_path((i - 1) % self.sections), "Previous section"))
        links.append((self.section_path((i + 1) % self.sections), "Next section"))
        links += [(self.leaf_path(i, j), f"Page {i}.{j}") for j in range(self.sizes[i])]
        return self._doc(f"Section {i}", links, self._rng(path), TARGET_BYTES)

    def leaf_html(self, i: int, j: int) -> str:
        path = self.leaf_path(i, j)
        rng = self._rng(path)
        size = self.sizes[i]
        links = [("/", "Home"), (self.section_path(i), f"Section {i}")]
        links.append((self.leaf_path(i, (j - 1) % size), "Previous"))
        links.append((self.leaf_path(i, (j + 1) % size), "Next"))
        for k in range(SIBLING_LINKS):  # further pages of the same section
            links.append((self.leaf_path(i, (j + 2 + k * 7) % size), f"Related {k}"))
        for k in range(RANDOM_LINKS):  # anywhere on the site
            si, sj = self.leaf_by_number(rng.randrange(self.leaves))
            links.append((self.leaf_path(si, sj), f"See also {k}"))
        assert len(links) == LEAF_LINKS
        return self._doc(f"Page {i}.{j}", links, rng, TARGET_BYTES)

    def page_html(self, path: str) -> str | None:
        """The HTML of *path*, or None if the site has no such page."""
        if path in ("/", "/index.html"):
            return self.home_html()
        parts = path.strip("/").split("/")
        try:
            if parts[0][:1] != "s":
                return None
            i = int(parts[0][1:])
            if not 0 <= i < self.sections:
                return None
            if len(parts) == 1 or parts[1] == "index.html":
                return self.section_html(i)
            if len(parts) == 2 and parts[1].startswith("p") and parts[1].endswith(".html"):
                j = int(parts[1][1:-5])
                return self.leaf_html(i, j) if 0 <= j < self.sizes[i] else None
        except ValueError:
            return None
        return None


def depth_of(path: str) -> int:
    """Breadth-first depth of a page of this site from its path (or URL path)."""
    stripped = path.split("://", 1)[-1]
    stripped = stripped[stripped.find("/") :] if "://" in path else stripped
    if stripped in ("/", "", "/index.html"):
        return 0
    if stripped.endswith(".html") and not stripped.endswith("/index.html"):
        return 2
    return 1


def write_site(site: Site, out: Path, urls: bool = False, progress: bool = True) -> int:
    """Write every page of *site* under *out*; return the bytes written."""
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    (out / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    html = site.home_html()
    (out / "index.html").write_text(html)
    total += len(html)
    started = time.monotonic()
    for i in range(site.sections):
        folder = out / f"s{i}"
        folder.mkdir(exist_ok=True)
        html = site.section_html(i)
        (folder / "index.html").write_text(html)
        total += len(html)
        for j in range(site.sizes[i]):
            html = site.leaf_html(i, j)
            with open(folder / f"p{j}.html", "w") as f:
                f.write(html)
            total += len(html)
        if progress and (i + 1) % max(1, site.sections // 20) == 0:
            done = site.starts[i] + site.sizes[i]
            print(f"  {done:,}/{site.leaves:,} leaves, {time.monotonic() - started:.0f} s", file=sys.stderr)
    if urls:
        with open(out / "urls.txt", "w") as f:
            f.writelines(path + "\n" for path in site.all_paths())
    meta = {
        "pages": site.pages,
        "sections": site.sections,
        "leaves": site.leaves,
        "seed": site.seed,
        "bytes": total,
        "links_per_leaf": LEAF_LINKS,
        "random_links_per_leaf": RANDOM_LINKS,
    }
    (out / "site.json").write_text(json.dumps(meta, indent=1) + "\n")
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, required=True, help="total pages (home + sections + leaves)")
    parser.add_argument("--out", type=Path, required=True, help="folder to write (created)")
    parser.add_argument("--sections", type=int, help="section pages (default: round(sqrt(pages)))")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--urls", action="store_true", help="also write urls.txt, every path")
    parser.add_argument("--force", action="store_true", help="write even if disk space looks short")
    args = parser.parse_args(argv)
    site = Site(args.pages, args.sections, args.seed)
    # ~2.4 KB of HTML, but a file takes a 4 KB block (and an inode) on most file systems
    args.out.mkdir(parents=True, exist_ok=True)
    need = args.pages * 4096 * 1.1
    free = shutil.disk_usage(args.out).free
    inodes = os.statvfs(args.out).f_favail
    if not args.force and (free < need or inodes < args.pages * 1.05):
        raise SystemExit(
            f"not enough room in {args.out}: need ~{need / 1e9:.1f} GB and {args.pages:,} inodes, "
            f"have {free / 1e9:.1f} GB and {inodes:,} (--force to try anyway)"
        )
    started = time.monotonic()
    total = write_site(site, args.out, urls=args.urls)
    print(
        f"{site.pages:,} pages ({site.sections:,} sections, {site.leaves:,} leaves), "
        f"{total / site.pages:.0f} bytes per page on average, {time.monotonic() - started:.0f} s -> {args.out}"
    )


if __name__ == "__main__":
    main()
