"""A small staging site behind basic auth, and the audit run against it, for the tests of the
audit's options and of its output (tests/test_audit_options.py, tests/test_audit_output.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.staging_site import PASSWORD, USER, StagingServer, links, page

HTML = {"Content-Type": "text/html; charset=utf-8"}


def routes(noindex: bool = False) -> dict[str, tuple[int, dict[str, str], str]]:
    head = '<meta name="robots" content="noindex">' if noindex else ""
    pages = {
        "/": page("Home", links("/a", "/b"), head),
        "/a": page("A", links("/", "/b", "/missing"), head),
        "/b": page("B", links("/"), head),
    }
    return {
        "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\nAllow: /\n"),
        **{path: (200, HTML, body) for path, body in pages.items()},
    }


@pytest.fixture
def site() -> Iterator[StagingServer]:
    server = StagingServer(routes()).start()
    yield server
    server.stop()


def audit(server: StagingServer, out: Path, *options: str, password: str = PASSWORD) -> Any:
    result = run_cli(
        "audit", server.url, "--out", str(out), "--user", USER, "--password-env", "AUDIT_PASSWORD",
        "--delay", "0", *options, env={"AUDIT_PASSWORD": password},
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    assert password not in result.stdout + result.stderr
    return result
