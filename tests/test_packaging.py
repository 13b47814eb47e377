"""The installed package is the checkout: the wheel that pip builds (the container image and
Scrapyd's egg install it) holds every module and template of the three top-level packages, so
a new folder cannot work in the checkout and be missing where users run it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("crawler", "pipelines", "settings")


def test_the_wheel_holds_every_module_and_template(tmp_path: Path) -> None:
    source = tmp_path / "source"  # built from a copy: the build writes its work folders beside pyproject
    for name in (*PACKAGES, "pyproject.toml", "README.md", "LICENSE"):
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif path.exists():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), "."],
        check=False,
        cwd=source,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert len(expected) > 150
    assert expected - shipped == set()
