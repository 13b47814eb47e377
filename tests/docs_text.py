"""The documentation as tests read it: the README, the hand-written pages under docs/, and the
reference pages as the build generates them from the code."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from crawler.reference import PAGES

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text("utf-8")
GENERATED = frozenset(f"docs/reference/{name}" for name in PAGES)


def hand_written() -> dict[str, str]:
    """Path (from the root) -> text of every hand-written Markdown page, the README first."""
    pages = {"README.md": README}
    for path in sorted((ROOT / "docs").rglob("*.md")):
        name = str(path.relative_to(ROOT))
        if name not in GENERATED and "/_build/" not in name:
            pages[name] = path.read_text("utf-8")
    return pages


#: Every hand-written page, one after the other.
DOCS = "\n".join(hand_written().values())


@cache
def reference(name: str) -> str:
    """A generated reference page (``commands.md``, ``settings.md``, ...), as the build writes it."""
    return PAGES[name]()


def guide(name: str) -> str:
    return (ROOT / "docs" / "guides" / name).read_text("utf-8")
