"""`coverage --verify-dns`: crawlers confirmed by reverse and forward DNS, resolved for real by
the C library in a private mount namespace (`unshare`) whose /etc/hosts names the test's
addresses as the operators' crawlers would be named; never a mock of the resolver."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import CLI
from tests.test_coverage import SITE, hand_set, log_line

YANDEX = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
HOSTS = """127.0.0.1 localhost
198.51.100.7 crawl-198-51-100-7.search.yandex.net
198.51.100.10 crawl-198-51-100-10.yandex.net.evil.example
198.51.100.20 crawl-198-51-100-20.googlebot.com
"""


def _in_namespace(tmp_path: Path, *, dns: bool, arguments: list[str]) -> subprocess.CompletedProcess[str]:
    """`coverage` with this test's /etc/hosts; *dns*: the name service asks a DNS server too
    (one on 127.0.0.1 that does not exist: every question it gets is unanswered)."""
    hosts, nsswitch, resolv = tmp_path / "hosts", tmp_path / "nsswitch.conf", tmp_path / "resolv.conf"
    hosts.write_text(HOSTS)
    nsswitch.write_text("hosts: files dns\n" if dns else "hosts: files\n")
    resolv.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    mounts = " && ".join(f"mount --bind {path} /etc/{path.name}" for path in (hosts, nsswitch, resolv))
    script = f'{mounts} && exec "$0" "$@"'
    command = ["unshare", "--map-root-user", "--mount", "sh", "-c", script, str(CLI), "coverage", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _logs(tmp_path: Path, lines: list[str]) -> tuple[Path, Path, Path]:
    out = hand_set(tmp_path / "out", {"": [f"{SITE}/a", f"{SITE}/b"]})
    log = tmp_path / "access.log"
    log.write_text("\n".join(lines) + "\n")
    ranges = tmp_path / "ranges.json"
    ranges.write_text(json.dumps({"crawlers": {"Googlebot": {"ranges": ["66.249.64.0/27"]}}}))
    return out, log, ranges


def _fetches(document: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {row["url"].removeprefix(SITE): row["fetches"] for row in document["urls"] if row["fetches"]}


def test_dns_confirms_crawlers_without_ranges_and_addresses_newer_than_the_ranges(tmp_path: Path) -> None:
    out, log, ranges = _logs(tmp_path, [
        log_line("/a", "198.51.100.7", YANDEX),  # named in Yandex's domain, and back: confirmed
        log_line("/b", "198.51.100.7", YANDEX),  # the same address: asked once
        log_line("/a", "198.51.100.10", YANDEX),  # a name that only starts like Yandex's: spoofed
        log_line("/a", "198.51.100.8", YANDEX),  # no name at all: spoofed
        log_line("/a", "66.249.64.1"),  # in Google's ranges: no DNS needed
        log_line("/b", "198.51.100.20"),  # outside the ranges, but Google's by DNS: counted
        log_line("/b", "203.0.113.5"),  # outside the ranges, no name: spoofed
        log_line("/b", "::ffff:198.51.100.7", YANDEX),  # the same address, as a dual-stack server logs it
        log_line("/b", "198.51.100.7", BINGBOT),  # Yandex's address, not Bing's: spoofed, and not asked again
    ])  # fmt: skip
    arguments = [str(out), "--logs", str(log), "--bot-ranges", str(ranges), "--json"]
    page = tmp_path / "coverage.html"
    checked = _in_namespace(tmp_path, dns=False, arguments=[*arguments, "--verify-dns", "--html", str(page)])
    assert checked.returncode == 0, checked.stderr
    assert "5 addresses asked, 2 confirmed as the crawler they claim, 4 refused" in " ".join(page.read_text().split())
    document = json.loads(checked.stdout)
    assert _fetches(document) == {"/a": {"YandexBot": 1, "Googlebot": 1}, "/b": {"YandexBot": 2, "Googlebot": 1}}
    assert document["spoofed"] == {"YandexBot": 2, "Googlebot": 1, "Bingbot": 1} and document["unverifiable"] == {}
    assert document["dns"] == {"lookups": 5, "confirmed": 2, "refused": 4, "unanswered": 0, "gave_up": None}
    assert "DNS: 5 addresses asked; 2 confirmed as the crawler they claim, 4 refused, 0 unanswered" in checked.stderr
    plain = _in_namespace(tmp_path, dns=False, arguments=arguments)  # without --verify-dns: ranges only
    document = json.loads(plain.stdout)
    assert _fetches(document) == {"/a": {"Googlebot": 1}}
    assert document["unverifiable"] == {"YandexBot": 5, "Bingbot": 1} and document["spoofed"] == {"Googlebot": 2}
    assert document["dns"] is None and "--verify-dns asks DNS" in plain.stderr


def test_dns_that_does_not_answer_is_given_up_and_nothing_is_counted_by_it(tmp_path: Path) -> None:
    addresses = [f"198.51.100.{n}" for n in range(30, 40)]
    out, log, ranges = _logs(tmp_path, [log_line("/a", address, YANDEX) for address in addresses])
    arguments = [str(out), "--logs", str(log), "--bot-ranges", str(ranges), "--json", "--verify-dns"]
    done = _in_namespace(tmp_path, dns=True, arguments=arguments)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert _fetches(document) == {} and document["unverifiable"] == {"YandexBot": 10}
    assert document["dns"]["unanswered"] == 3 and "3 lookups in a row unanswered" in document["dns"]["gave_up"]
    assert "no more lookups: 3 lookups in a row unanswered" in done.stderr
