"""A real MkDocs site with the Material theme, built from real documentation and cached by pytest.

The sources are the documentation shipped in the sdist of PyMdown Extensions (about 50 pages,
written for Material), with the project's own configuration (its ``zensical.yml``, Material's
successor reading the same mkdocs.yml format) made buildable by MkDocs: ``site_url`` is
:data:`~tests.realapps.static.PLACEHOLDER` (MkDocs writes ``sitemap.xml`` only with a site
URL), one extension that the sdist does not ship is dropped, and the icon set Material 9 lacks
gets stand-in icons. Two orphan pages are added (in no nav, no link: only the sitemap names them).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import pytest

from tests.realapps.static import PLACEHOLDER, cached_build, run_build_step, unavailable

__all__ = ["ORPHANS", "REQUIREMENTS", "SDIST", "VERSION", "build_mkdocs", "mkdocs_build"]

#: The documentation sources: a pinned sdist, so every machine builds the same pages.
SDIST = "pymdown-extensions==13.1.2"
#: What the build needs in the test environment (pyproject's test extra).
REQUIREMENTS = ("mkdocs==1.6.1", "mkdocs-material==9.8.2")
#: The cache key with the installed mkdocs and Material versions: change it whenever the build changes.
VERSION = f"{SDIST}; orphans 2; config 1"
#: The orphan pages' URL paths (MkDocs' directory URLs end with a slash).
ORPHANS = ("/orphans/first/", "/orphans/second/")

_ORPHAN = """\
# Orphan page: {title}

No nav entry and no link leads here: only the generated sitemap.xml names this page.
It is about {topic}.
"""
#: Text edits of the project's configuration, each checked to apply (a new sdist fails loudly).
_EDITS = (
    # Material for MkDocs writes sitemap.xml only with a site URL: the placeholder, replaced at serve time.
    (re.compile(r"^site_url: .*$", re.MULTILINE), f"site_url: {PLACEHOLDER}/"),
    # tools.collapse_code lives in the project's repository, not in its sdist.
    (re.compile(r"^  - tools\.collapse_code:\n(?:      .*\n)+", re.MULTILINE), ""),
    # The snippets extension includes SECURITY.md, which the sdist does not ship.
    (re.compile(r"^      check_paths: true$", re.MULTILINE), "      check_paths: false"),
)
_STAND_IN_ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="9"/></svg>\n'


def _mkdocs() -> Path:
    """The mkdocs of the test environment, or the test is unavailable."""
    binary = Path(sys.executable).with_name("mkdocs")
    if importlib.util.find_spec("material") is None:
        unavailable(f"mkdocs-material is not installed (pip install {' '.join(REQUIREMENTS)})")
    if not binary.exists():
        unavailable(f"mkdocs is not installed (pip install {' '.join(REQUIREMENTS)})")
    return binary


def _configure(source: Path) -> None:
    """mkdocs.yml from the project's zensical.yml, and what it needs that the sdist lacks."""
    text = (source / "zensical.yml").read_text("utf-8")
    for pattern, replacement in _EDITS:
        text, count = pattern.subn(replacement, text)
        assert count == 1, f"{pattern.pattern!r} matched {count} times in {SDIST}'s zensical.yml"
    (source / "mkdocs.yml").write_text(text, "utf-8")
    docs = source / "docs" / "src" / "markdown"
    # Zensical ships the Lucide icons that the pages' front matter names; Material 9 does not.
    names = set(re.findall(r"lucide/([a-z0-9-]+)", text))
    for page in docs.rglob("*.md"):
        names |= set(re.findall(r"lucide/([a-z0-9-]+)", page.read_text("utf-8")))
    icons = source / "docs" / "theme" / ".icons" / "lucide"
    icons.mkdir(parents=True, exist_ok=True)
    for name in names:
        (icons / f"{name}.svg").write_text(_STAND_IN_ICON, "utf-8")
    orphans = docs / "orphans"
    orphans.mkdir()
    for path, topic in zip(ORPHANS, ("lighthouses", "tide tables"), strict=True):
        name = path.strip("/").rsplit("/", 1)[1]
        (orphans / f"{name}.md").write_text(_ORPHAN.format(title=name, topic=topic), "utf-8")


def build_mkdocs(work: Path, output: Path) -> None:
    """The sdist downloaded from PyPI, configured as above, and ``mkdocs build`` into *output*."""
    mkdocs = _mkdocs()
    pip = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
    run_build_step([*pip, "--dest", str(work / "sdist"), SDIST], work, _env())
    archive = next((work / "sdist").glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(work / "src", filter="data")
    source = next((work / "src").iterdir())
    _configure(source)
    # The configuration names a fence formatter of the project's own tools/ package: importable,
    # but not the sdist's copy of pymdownx, which must not shadow the installed one.
    modules = work / "modules"
    shutil.copytree(source / "tools", modules / "tools")
    env = {**_env(), "PYTHONPATH": str(modules)}
    run_build_step([str(mkdocs), "build", "--clean", "--site-dir", str(output)], source, env)


def _env() -> dict[str, str]:
    """No upgrade notices from pip, no Material end-of-life banner in the build log."""
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def mkdocs_build(config: pytest.Config) -> Path:
    """The built site (cached under .pytest_cache/d/realapps/mkdocs-build), URLs as :data:`PLACEHOLDER`."""
    _mkdocs()
    installed = "; ".join(f"{name} {metadata.version(name)}" for name in ("mkdocs", "mkdocs-material"))
    return cached_build(config, "mkdocs", f"{VERSION}; {installed}", build_mkdocs)
