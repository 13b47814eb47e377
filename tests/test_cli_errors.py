"""Errors by type (issue 39): a user's mistake is one line and exit 2; a bug is one line that
says so and exit 1, shown whole with -v; the machine's refusal (an OSError) is one line, exit 1."""

from __future__ import annotations

import errno
import subprocess
import sys
from typing import Any, NoReturn

import pytest

import crawler.cli
from crawler.cli import main
from crawler.failures import ConfigError


def raises(error: BaseException) -> Any:
    def command(args: Any) -> NoReturn:
        raise error

    return command


@pytest.fixture
def command(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``validate`` made to raise what a test gives it."""

    def given(error: BaseException) -> None:
        monkeypatch.setattr(crawler.cli, "COMMANDS", {**crawler.cli.COMMANDS, "validate": (__name__, "_command")})
        monkeypatch.setitem(globals(), "_command", raises(error))

    return given


def test_a_mistake_of_the_user_is_one_line_and_exit_2(command: Any, capsys: pytest.CaptureFixture[str]) -> None:
    command(ConfigError("--max-urls must be between 1 and 50000, not 0"))
    assert main(["validate", "sitemap.xml"]) == 2
    assert capsys.readouterr().err == "sitemap-crawler: error: --max-urls must be between 1 and 50000, not 0\n"


def test_a_bug_is_said_as_one_and_exit_1_not_a_usage_error(command: Any, capsys: pytest.CaptureFixture[str]) -> None:
    command(ValueError("too many values to unpack"))
    assert main(["validate", "sitemap.xml"]) == 1
    error = capsys.readouterr().err
    assert error == (
        "sitemap-crawler: error: internal error (ValueError: too many values to unpack): "
        "a bug, please report it; -v shows where\n"
    )
    with pytest.raises(ValueError, match="too many values"):  # -v: the whole traceback
        main(["validate", "sitemap.xml", "-v"])


def test_the_machines_refusal_is_one_line_and_exit_1(command: Any, capsys: pytest.CaptureFixture[str]) -> None:
    command(OSError(errno.ENOSPC, "No space left on device"))
    assert main(["validate", "sitemap.xml"]) == 1
    assert capsys.readouterr().err == "sitemap-crawler: error: [Errno 28] No space left on device\n"


def test_json_logs_get_the_error_as_one_json_event(
    command: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITEMAP_CRAWLER_LOG_FORMAT", "json")
    command(KeyError("x"))
    assert main(["validate", "sitemap.xml"]) == 1
    error = capsys.readouterr().err
    assert '"event": "internal-error"' in error and '"exit": 1' in error and error.count("\n") == 1


SIGTERM_IN_A_CALLBACK = """
import os, signal, sys, weakref
import crawler.cli

class Thing:
    pass

def command(args):
    thing = Thing()
    def gone(ref):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, where no exception can pass
        for _ in range(10_000):
            pass
    kept = weakref.ref(thing, gone)
    del thing
    print("went on", flush=True)
    return 0

crawler.cli.COMMANDS["validate"] = ("__main__", "command")
sys.exit(crawler.cli.main(["validate", "sitemap.xml"]))
"""


def test_a_sigterm_met_where_python_ignores_exceptions_still_ends_the_command() -> None:
    """A worker stopped while importing met SIGTERM inside a weakref callback: the stop was
    printed as a traceback, ignored, and the worker went on. It ends, 143, without a traceback."""
    command = [sys.executable, "-c", SIGTERM_IN_A_CALLBACK]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 143, done.stderr
    assert "went on" not in done.stdout and "Traceback" not in done.stderr


def test_ctrl_c_in_a_command_without_its_own_handler_is_one_line_and_130(
    command: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    command(KeyboardInterrupt())
    assert main(["validate", "sitemap.xml"]) == 130
    assert capsys.readouterr().err == "sitemap-crawler: stopped (Ctrl-C)\n"
