"""The layering holds: the pure core imports nothing of Scrapy, Twisted or settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.server import SiteServer

ROOT = Path(__file__).parent.parent
PURE_PACKAGES = ("audit", "check", "distributed", "page", "render", "sitemaps", "state", "validate", "services")
PURE_MODULES = (
    "failures", "hostmap", "items", "modes", "pace", "protocol", "request_fingerprinter", "results", "robots_rules",
    "scope", "signals", "urls",
)  # fmt: skip


def pure_modules() -> list[str]:
    names = [f"crawler.{name}" for name in PURE_MODULES]
    for package in PURE_PACKAGES:
        names += [f"crawler.{package}.{path.stem}" for path in sorted((ROOT / "crawler" / package).glob("*.py"))]
    return names


def test_the_pure_core_imports_no_scrapy_and_no_settings() -> None:
    modules = pure_modules()
    assert len(modules) > 30
    probe = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('scrapy', 'twisted', 'settings', 'pipelines') or m.startswith(('crawler.extensions', "
        "'crawler.downloadermiddlewares', 'crawler.downloadhandlers', 'crawler.spiders', 'crawler.cli')))))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(result.stdout) == []


def test_no_module_is_over_350_lines() -> None:
    sources = [*ROOT.glob("crawler/**/*.py"), *ROOT.glob("pipelines/*.py"), *ROOT.glob("settings/*.py")]
    long = {str(path.relative_to(ROOT)): n for path in sources if (n := len(path.read_text().splitlines())) > 350}
    assert long == {}


def imported_by(*argv: str) -> set[str]:
    """The top-level packages a real run of the CLI imports (``-X importtime``)."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "crawler.cli", *argv],
                            capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)  # fmt: skip
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in result.stderr.splitlines() if "|" in line}


def test_each_command_imports_only_what_it_needs(server: SiteServer, tmp_path: Path) -> None:
    assert "scrapy" not in imported_by("--help") and "twisted" not in imported_by("--help")
    crawl = imported_by("crawl", server.url("/about.html"), "--out", str(tmp_path / "out"), "--delay", "0",
                        "--max-pages", "1", "--no-state", "-q")  # fmt: skip
    assert "scrapy" in crawl  # the probe sees a real crawl's imports
    # Playwright and its greenlet only when a page is rendered (--render), never for a plain crawl.
    heavy = {"redis", "aiohttp", "boto3", "botocore", "playwright", "greenlet"}
    assert not crawl & heavy, crawl & heavy


def test_every_exit_status_of_the_cli_is_named_in_exits_py() -> None:
    """A command returns ``EXIT_...`` from crawler/cli/exits.py, never a number of its own: the
    table there (and the reference page made from it) is every status a script can see."""
    import ast

    literal = []
    for path in sorted((ROOT / "crawler" / "cli").glob("*.py")):
        if path.name == "exits.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values = [node.value] if isinstance(node, ast.Return) and node.value is not None else []
            values += [node.value.body, node.value.orelse] if values and isinstance(node.value, ast.IfExp) else []
            if any(isinstance(value, ast.Constant) and type(value.value) is int for value in values):
                literal.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert literal == [], f"exit statuses by number, not by name: {literal}"


def test_docs_architecture_names_every_package_and_module() -> None:
    """docs/architecture.md is drawn from the house as it is: a module or package added without a
    word there fails here (named by its path, or by its file name in its folder's part)."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = []
    for top in ("crawler", "pipelines", "settings"):
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if path.name == "__init__.py":
                folder = path.parent.relative_to(ROOT).as_posix()
                if folder not in {"crawler", "pipelines", "settings"} and f"{folder}/" not in doc:
                    unnamed.append(f"{folder}/")
            elif relative not in doc and f"{path.name}" not in doc:
                unnamed.append(relative)
    assert unnamed == [], f"say what these are in docs/architecture.md: {unnamed}"


#: The packages of Scrapy components: each imports the core, ``settings`` and ``crawler/run/``.
COMPONENTS = (
    "crawler.spiders", "crawler.downloadermiddlewares", "crawler.extensions", "crawler.downloadhandlers",
    "crawler.schedulers", "pipelines",
)  # fmt: skip


def _component(module: str) -> str | None:
    return next((name for name in COMPONENTS if module == name or module.startswith(name + ".")), None)


def test_a_scrapy_component_imports_no_other_component_but_to_look_one_up() -> None:
    """What components share lives in crawler/run/; a component imports another only to find
    it with ``crawler.get_extension(Class)``."""
    import ast

    crossing = []
    for name in COMPONENTS:
        for path in sorted((ROOT / name.replace(".", "/")).glob("*.py")):
            source = path.read_text(encoding="utf-8")
            for node in ast.walk(ast.parse(source)):
                if not isinstance(node, ast.ImportFrom) or not node.module:
                    continue
                other = _component(node.module)
                if other is None or other == name:
                    continue
                crossing += [
                    f"{path.relative_to(ROOT)}: {node.module}.{alias.name}"
                    for alias in node.names
                    if f"get_extension({alias.name})" not in source
                ]
    assert crossing == [], f"move what they share to crawler/run/: {crossing}"


def test_every_mutant_names_a_line_that_is_there_once() -> None:
    """tests/mutants.py is the map from rule to test: a rule moved or reworded must move its mutant
    with it, or the mutant would mutate nothing (and ``make mutants`` would call it killed)."""
    from tests.mutants import MUTANTS

    stale = []
    for number, mutant in enumerate(MUTANTS, 1):
        path = ROOT / mutant.path
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        for old, _ in ((mutant.old, mutant.new), *mutant.more):
            if text.count(old) != 1:
                stale.append(f"#{number} {mutant.path}: {old[:60]!r} found {text.count(old)} times")
    assert stale == [], stale


def _module_imports() -> dict[str, set[str]]:
    """Each module of crawler/, pipelines/ and settings/ and the modules of those it imports
    (anywhere in it: at the top, for types only, or inside a function)."""
    import ast

    modules = {
        path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__"): path
        for top in ("crawler", "pipelines", "settings")
        for path in (ROOT / top).rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            names += (
                [f"{node.module}.{alias.name}" for alias in node.names]
                if names and isinstance(node, ast.ImportFrom)
                else []
            )
            found |= {imported for imported in names if imported in modules and imported != name}
        graph[name] = found
    return graph


def test_no_module_imports_one_that_imports_it_back() -> None:
    """The import graph has no circle, however long: dependencies point one way."""
    graph = _module_imports()
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    circles = []

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        for imported in sorted(graph[name]):
            if state.get(imported) == 1:
                circles.append(" -> ".join([*path[path.index(imported) :], imported]))
            elif imported not in state:
                walk(imported, [*path, imported])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert circles == [], circles
