"""Installed like any Python command-line tool, the crawler works without its checkout (not a test).

Builds a wheel and an sdist, installs the wheel with ``pipx`` and the sdist with ``pip``, each
into a fresh environment of its own, and from a folder outside the checkout runs what a
newcomer would: ``--version``, a crawl of a small site served by ``python -m http.server`` on
127.0.0.1, and ``validate`` of what it wrote. The installs take their dependencies
from the package registry (``make test`` runs this; CI may reach registries, tests may not).
Exits non-zero, saying what failed.

    python tests/install_check.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Files besides Python modules that an install must carry (the audit's HTML report).
DATA_FILES = ("crawler/audit/templates/report.html.j2", "crawler/audit/templates/report.js")


def run(command: list[str | Path], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


def build(work: Path) -> tuple[Path, Path]:
    dist = work / "dist"
    run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=work)
    (wheel,), (sdist,) = dist.glob("*.whl"), dist.glob("*.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    missing = [name for name in DATA_FILES if name not in names]
    if missing:
        raise SystemExit(f"the wheel lacks {missing}")
    return wheel, sdist


def site(work: Path) -> Path:
    folder = work / "site"
    folder.mkdir()
    (folder / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    links = "".join(f'<a href="/p{n}.html">page {n}</a>' for n in range(5))
    (folder / "index.html").write_text(f"<html><head><title>Home</title></head><body>{links}</body></html>")
    for n in range(5):
        (folder / f"p{n}.html").write_text(f"<html><head><title>Page {n}</title></head><body>{n}</body></html>")
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def smoke(command: Path, work: Path, url: str, label: str) -> None:
    """What a newcomer runs first, from a folder outside the checkout."""
    home = work / f"home-{label.split(maxsplit=1)[0]}"
    home.mkdir()
    version = run([command, "--version"], cwd=home).strip()
    if not version.startswith("sitemap-crawler ") or version.endswith("unknown"):
        raise SystemExit(f"{label}: --version said {version!r}")
    output = run([command, "crawl", url, "--out", "public", "-q", "--delay", "0"], cwd=home)
    if output.strip() != f"Sitemap: {url}sitemap.xml":
        raise SystemExit(f"{label}: the crawl printed {output!r}")
    run([command, "validate", "public/sitemap.xml"], cwd=home)  # --strict would flag 127.0.0.1 (dev-host)
    print(f"{label}: {version}, crawled and validated from {home}", flush=True)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sitemap-crawler-install-") as folder:
        work = Path(folder)
        wheel, sdist = build(work)
        print(f"built {wheel.name} and {sdist.name}", flush=True)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", site(work)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            for _ in range(200):  # until it listens (bounded: 10 s)
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/"
            pipx = {
                "PIPX_HOME": str(work / "pipx"),
                "PIPX_BIN_DIR": str(work / "bin"),
                "PIPX_MAN_DIR": str(work / "man"),
            }
            run([sys.executable, "-m", "pipx", "install", wheel], cwd=work, env=pipx)
            smoke(work / "bin" / "sitemap-crawler", work, url, "pipx install (wheel)")
            venv = work / "venv"
            run([sys.executable, "-m", "venv", venv], cwd=work)
            run([venv / "bin" / "pip", "install", "--quiet", sdist], cwd=work)
            smoke(venv / "bin" / "sitemap-crawler", work, url, "pip install (sdist)")
            where = run([venv / "bin" / "python", "-c", "import crawler; print(crawler.__file__)"], cwd=work)
            if str(ROOT) in where:
                raise SystemExit(f"the installed package is the checkout's: {where}")
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
