"""A download error in words: the reason behind Twisted's list of Failures, with a hint for TLS."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

from crawler.failures import failure_text
from tests.conftest import read_report, run_cli
from tests.server import SiteServer


class _Failure:
    """What Twisted's Failure offers here: the exception as ``value``."""

    def __init__(self, value: BaseException):
        self.value = value


class _NeverReceived(Exception):
    def __init__(self, reasons: list[object]):
        super().__init__(reasons)
        self.reasons = reasons


def test_the_first_reason_behind_a_wrapped_error_is_named() -> None:
    inner = _NeverReceived([_Failure(ssl.SSLError("[('SSL routines', '', 'wrong version number')]"))])
    wrapper = RuntimeError(repr(inner.reasons))
    wrapper.__cause__ = inner
    text = failure_text(wrapper)
    assert text.startswith("TLS handshake failed, the server does not speak HTTPS there: for plain HTTP use http://")
    assert text.endswith("[wrong version number]")
    refused = _NeverReceived([_Failure(ConnectionRefusedError("Connection refused"))])
    assert failure_text(refused) == "ConnectionRefusedError: Connection refused"
    assert failure_text(TimeoutError("took 30 s")) == "TimeoutError: took 30 s"
    assert failure_text(ValueError()) == "ValueError"


def test_https_to_a_plain_http_server_says_to_use_http(server: SiteServer, tmp_path: Path) -> None:
    """A start URL typed without its scheme is https://; a local server speaks plain HTTP:
    the message says so, not a Failure repr."""
    origin = server.url("/").split("//", 1)[1]
    result = run_cli("crawl", f"https://{origin}", "--out", str(tmp_path / "out"), "--retries", "0", "-q")
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "use http://" in last and "Failure" not in last, last
    report = read_report(tmp_path / "out.crawl-report.jsonl")
    assert "use http://" in str(report[f"https://{origin}"]["detail"])
    with socket.socket() as probe:  # nothing listens here: Scrapy's own words stay
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = run_cli("crawl", f"http://127.0.0.1:{port}/", "--out", str(tmp_path / "o2"), "--retries", "0", "-q")
    assert "refused" in refused.stderr.strip().splitlines()[-1].lower()
