"""The images of the container tests, built with podman once per test run (SPEC S8).

``BASE`` comes from ``$SITEMAP_TEST_IMAGE_BASE`` (the Debian 12 base that
``.ci/podman-setup`` makes here, where no registry is reachable) and pip's CA
bundle from ``$SITEMAP_TEST_IMAGE_CA``. Without a usable podman the tests say
why and skip; under CI=true they fail instead.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
#: The crawler's image (Dockerfile) and the Redis of deploy/compose.yaml (deploy/redis.Dockerfile).
IMAGE = "localhost/sitemap-crawler:test"
#: The same Dockerfile built with RENDER=1: Debian's chromium-headless-shell and Playwright added.
RENDER_IMAGE = "localhost/sitemap-crawler-render:test"
REDIS_IMAGE = "localhost/sitemap-crawler-redis:test"


def sh(command: list[str], timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run *command* (bounded by *timeout*; *env* added to the environment), its output captured, its
    status for the caller to judge."""
    environment = {**os.environ, **env} if env else None
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=environment)


def unusable() -> str | None:
    if shutil.which("podman") is None:
        return "podman is not installed"
    info = sh(["podman", "info"], timeout=60)
    return None if info.returncode == 0 else f"podman does not work here: {info.stderr.strip()[-300:]}"


def skip_or_fail(why: str) -> None:
    """A container test that cannot run: skipped on a developer's machine, a failure in CI."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the container tests: {why}")
    pytest.skip(why)


@functools.cache
def _build(tag: str, dockerfile: str, build_args: tuple[str, ...]) -> str | None:
    """Build ROOT/*dockerfile* (its folder the context) as *tag* with *build_args* (NAME=VALUE):
    None when built, else why not."""
    why = unusable()
    if why:
        return why
    path = ROOT / dockerfile
    command = ["podman", "build", "--format", "docker", "--network", "host", "-t", tag, "-f", str(path)]
    if os.environ.get("SITEMAP_TEST_IMAGE_BASE"):
        command += ["--build-arg", f"BASE={os.environ['SITEMAP_TEST_IMAGE_BASE']}"]
    for build_arg in build_args:
        command += ["--build-arg", build_arg]
    if os.environ.get("SITEMAP_TEST_IMAGE_CA"):
        command += ["--secret", f"id=ca,src={os.environ['SITEMAP_TEST_IMAGE_CA']}"]
    built = sh([*command, str(path.parent)], timeout=900)
    return None if built.returncode == 0 else f"image build failed: {built.stderr.strip()[-1500:]}"


def built(tag: str, dockerfile: str, *build_args: str) -> str:
    """*tag*, built once per test run from *dockerfile*, or the test skipped (failed under CI) with the reason."""
    why = _build(tag, dockerfile, build_args)
    if why:
        skip_or_fail(why)
    return tag
