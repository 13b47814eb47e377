"""The test lanes: ``fast`` (unit tests and everything without a crawl, a browser, a container,
Redis or a server process: ``make test-fast``, before a commit) and ``slow`` (the rest; ``make
test`` runs both, before you stop).

A test is slow when it asks for a fixture that starts something (any fixture but the few pure
ones below), when its own code starts a process (the CLI, a crawl, a subprocess), when its
module drives a browser, or when it says so (``@pytest.mark.slow``: a big file read in
bounded memory). Marked at
collection, so a new test lands in the right lane without anyone remembering to mark it.
"""

from __future__ import annotations

import inspect

import pytest

__all__ = ["mark_lanes"]

#: pytest's own fixtures and this suite's that start nothing.
PURE_FIXTURES = frozenset(
    {
        "request", "tmp_path", "tmp_path_factory", "monkeypatch", "capsys", "capfd", "caplog", "recwarn",
        "pytestconfig", "command",
    }
)  # fmt: skip
#: Words in a test's own code that start a process or a crawl.
STARTS_SOMETHING = (
    "subprocess", "Popen", "run_cli(", "crawl(", "CLI", "CrawlerProcess", "audit(", "check_published(",
    "chromium", "redis", "podman", "Server(", "server", "mutants",
)  # fmt: skip


#: Words in a test module that say its tests drive a browser (through fixtures of their own).
DRIVES_A_BROWSER = ("crawler.render.browser", "playwright", "chromium")


def _is_slow(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    try:
        module_source = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        module_source = ""
    if any(word in module_source for word in DRIVES_A_BROWSER):
        return True
    callspec = getattr(item, "callspec", None)
    parameters = set(callspec.params) if callspec is not None else set()  # values, not fixtures
    if set(getattr(item, "fixturenames", ())) - PURE_FIXTURES - parameters:
        return True
    function = getattr(item, "function", None)
    try:
        source = inspect.getsource(function) if function is not None else ""
    except (OSError, TypeError):
        return True
    return any(word in source for word in STARTS_SOMETHING)


def mark_lanes(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.iter_markers("slow")) and not any(item.iter_markers("fast")):
            item.add_marker(pytest.mark.slow if _is_slow(item) else pytest.mark.fast)
