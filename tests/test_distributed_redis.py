"""A shared crawl through Redis as production runs it (Debian's redis-server,
TLS only, a password or ACL users): the set of one process, through
``--workers`` and through a separate ``worker``; the password nowhere a user
or another user of the machine can read it; one clear line and exit 1 when
the certificate is not trusted, the password is wrong, the user lacks a
command, Redis dies or runs out of memory, with the previous set untouched."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.cli import main
from crawler.distributed.server import PrivateRedis
from tests.conftest import CLI, crawl, run_cli, sitemap_locs
from tests.redis_servers import CRAWL_ACL, TlsRedis
from tests.server import NOT_PAGES, SiteServer
from tests.shared_crawl import FAST, chain_site

PAGES = 24
EVICTION_WARNING = "set maxmemory-policy noeviction"

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None and not os.environ.get("CI"), reason="redis-server is not installed"
)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[SiteServer]:
    server = chain_site(tmp_path, PAGES)
    yield server
    server.stop()


def expected(site: SiteServer) -> list[str]:
    origin = site.url().rstrip("/")
    return sorted([origin + "/", *(f"{origin}/p{n}.html" for n in range(1, PAGES))])


def tree(pid: int) -> list[int]:
    """*pid* and every process below it."""
    parents: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit():
                parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    found, frontier = [pid], [pid]
    while frontier:  # bounded: the process tree is finite
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent and child not in found]
        found += children
        frontier += children
    return found


def cmdlines(pids: list[int]) -> list[str]:
    lines = []
    for pid in pids:
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return lines


def coordinator(site: SiteServer, out: Path, *options: str) -> subprocess.Popen[str]:
    command = [str(CLI), "crawl", site.url(), "--out", str(out), "-q", *FAST, "--concurrency", "4", *options]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_tls_and_requirepass_with_local_workers_give_the_set_of_one_process(site: SiteServer, tmp_path: Path) -> None:
    """The password is in no process's command line while the run goes, nor in its output (JSON
    logs), its report or ``config show``; an evicting Redis is warned about in one line."""
    redis = TlsRedis(tmp_path / "redis", extra="maxmemory-policy allkeys-lru\n").start()
    try:
        out = tmp_path / "out"
        options = ("--distributed", redis.url(), "--redis-ca-file", str(redis.ca), "--workers", "2")
        running = coordinator(site, out, "--log-format", "json", "--delay", "0.1", *options)
        site.wait_for(3)  # under way: the local workers are started
        seen = cmdlines(tree(running.pid))
        stdout, stderr = running.communicate(timeout=120)
    finally:
        redis.stop()
    assert running.returncode == 0, stderr
    assert "worker not started" not in stderr and "this worker stops" not in stderr  # the local one joined (TLS)
    assert len(seen) == 2 and all(redis.password not in line for line in seen), seen  # the coordinator, a worker
    assert sorted(sitemap_locs(out, site.url().rstrip("/"))) == expected(site)
    assert sum(path not in NOT_PAGES for path in site.paths()) == PAGES  # the workers shared it, once each
    report = (tmp_path / "out.crawl-report.jsonl").read_text()
    assert redis.password not in stdout + stderr + report
    assert sum(EVICTION_WARNING in line for line in stderr.splitlines()) == 1
    shown = run_cli("config", "show", site.url(), *options[:4])
    assert shown.returncode == 0 and "rediss://:***@127.0.0.1" in shown.stdout and redis.password not in shown.stdout


def test_an_acl_user_and_a_separate_worker_give_the_set_of_one_process(site: SiteServer, tmp_path: Path) -> None:
    """The shared-crawl guide's ACL line (its keys only, no channels, no dangerous command, default user off)
    is all a crawl needs; CONFIG is refused to it, so nothing is said about eviction."""
    redis = TlsRedis(tmp_path / "redis", acl=CRAWL_ACL).start()
    try:
        environment = {**os.environ, "SITEMAP_CRAWLER_REDIS_CA_FILE": str(redis.ca)}
        worker = subprocess.Popen([str(CLI), "worker", redis.url(), "--wait", "30"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=environment)  # fmt: skip
        running = coordinator(site, tmp_path / "out", "--delay", "0.05", "--distributed", redis.url(),
                              "--redis-ca-file", str(redis.ca))  # fmt: skip
        site.wait_for(3)
        seen = cmdlines([worker.pid, running.pid])
        _, stderr = running.communicate(timeout=120)
        _, worker_stderr = worker.communicate(timeout=60)
    finally:
        redis.stop()
    assert running.returncode == 0, stderr
    # It crawled to the end over TLS as the ACL user (its lease loop, heartbeats and pace); whether it got
    # pages first depends on how soon it started.
    assert worker.returncode == 0 and "worker done: " in worker_stderr, worker_stderr
    assert len(seen) == 2 and all(redis.password not in line for line in seen), seen
    assert "rediss://***@127.0.0.1" in seen[0]  # the user name too
    assert sorted(sitemap_locs(tmp_path / "out", site.url().rstrip("/"))) == expected(site)
    assert EVICTION_WARNING not in stderr and redis.password not in stderr + worker_stderr


def test_untrusted_certificate_and_wrong_password_are_one_clear_line(site: SiteServer, tmp_path: Path) -> None:
    redis = TlsRedis(tmp_path / "redis").start()
    try:
        out = str(tmp_path / "out")
        untrusted = run_cli("crawl", site.url(), "--out", out, "--distributed", redis.url())
        joining = run_cli("worker", redis.url(), "--wait", "0")
        wrong = run_cli("crawl", site.url(), "--out", out, "--distributed", redis.url(password="wrong-pw-9f3"),
                        "--redis-ca-file", str(redis.ca), "--log-format", "json")  # fmt: skip
        host = run_cli("crawl", site.url(), "--out", out, "--distributed", redis.url(host="127.0.0.2"),
                       "--redis-ca-file", str(redis.ca))  # fmt: skip
    finally:
        redis.stop()
    line = "the TLS certificate of the Redis at rediss://:***@127.0.0.1"
    for result in (untrusted, joining):
        assert result.returncode == 1, result.stderr
        assert line in result.stderr and "--redis-ca-file" in result.stderr and "Traceback" not in result.stderr
        assert redis.password not in result.stderr
    assert wrong.returncode == 1 and "refused the password or user" in wrong.stderr
    assert "wrong-pw-9f3" not in wrong.stderr and "Traceback" not in wrong.stderr
    assert host.returncode == 1 and "127.0.0.2" in host.stderr  # the certificate names 127.0.0.1, not this host
    assert site.paths() == []  # nothing fetched


def test_tls_options_are_checked_before_any_connection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A CA file that is not there, or one given for a Redis without TLS, or a URL turning certificate
    checks off: a usage error (exit 2) in one line."""
    ca = tmp_path / "ca.pem"
    ca.write_text("not read before the options are checked\n")
    url, plain, start = "rediss://:pw-1234@127.0.0.1:9/0", "redis://:pw-1234@127.0.0.1:9/0", "http://127.0.0.1:9/"
    cases = {
        ("crawl", start, "--distributed", url, "--redis-ca-file", str(tmp_path / "no.pem")): "is not a readable file",
        ("crawl", start, "--distributed", plain, "--redis-ca-file", str(ca)): "(rediss://)",
        ("crawl", start, "--workers", "2", "--redis-ca-file", str(ca)): "TLS Redis",
        ("crawl", start, "--distributed", url + "?ssl_cert_reqs=none"): "ssl_cert_reqs",
        ("worker", url, "--redis-ca-file", str(tmp_path)): "is not a readable file",
        ("worker", plain, "--redis-ca-file", str(ca)): "(rediss://)",
        ("worker", url, "--redis-ca-file", str(ca)): "holds no CA certificate",  # a key, a text: not a CA
    }  # fmt: skip
    for command, message in cases.items():
        code = main([*command, "--out", str(tmp_path / "out")] if command[0] == "crawl" else list(command))
        stderr = capsys.readouterr().err
        assert code == 2 and message in stderr, (command, stderr)
        assert len(stderr.strip().splitlines()) == 1 and "pw-1234" not in stderr


def published(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in out.iterdir()}


def test_an_acl_user_refused_a_command_the_crawl_needs_stops_it(site: SiteServer, tmp_path: Path) -> None:
    """XADD refused inside the crawl's own script: every worker meets it; the crawl stops at once,
    naming NOPERM, instead of waiting for work no one can queue."""
    out = tmp_path / "out"
    assert crawl(site.url(), out, "--no-state", "--max-pages", "5").code == 0
    before = published(out)
    redis = TlsRedis(tmp_path / "redis", acl=CRAWL_ACL + " -xadd").start()
    try:
        result = run_cli("crawl", site.url(), "--out", str(out), *FAST, "--distributed", redis.url(),
                         "--redis-ca-file", str(redis.ca), "--workers", "2", timeout=60)  # fmt: skip
    finally:
        redis.stop()
    assert result.returncode == 1, result.stderr
    assert "may not do what the crawl needs (NOPERM" in result.stderr and "previous sitemaps kept" in result.stderr
    assert redis.password not in result.stderr and "Traceback" not in result.stderr
    assert published(out) == before


@pytest.mark.parametrize("failure", ["killed", "out of memory"])
def test_redis_killed_or_out_of_memory_midway_keeps_the_previous_set(
    failure: str, site: SiteServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert crawl(site.url(), out, "--no-state", "--max-pages", "5").code == 0
    before = published(out)
    site.reset()
    redis = TlsRedis(tmp_path / "redis").start()
    try:
        running = coordinator(site, out, "--delay", "0.1", "--distributed", redis.url(), "--redis-ca-file",
                              str(redis.ca), "--workers", "2")  # fmt: skip
        site.wait_for(6)  # well under way, far from done
        if failure == "killed":
            redis.kill()
        else:
            with redis.admin() as admin:
                admin.config_set("maxmemory", "1")  # under noeviction: every write refused from now on
        _, stderr = running.communicate(timeout=60)
    finally:
        redis.stop()
    assert running.returncode == 1, stderr
    line = "Lost the Redis at rediss://:***@127.0.0.1" if failure == "killed" else "is out of memory"
    assert line in stderr and "previous sitemaps kept" in stderr, stderr
    assert redis.password not in stderr
    assert "Traceback" not in stderr and EVICTION_WARNING not in stderr
    assert published(out) == before
    assert sum(path not in NOT_PAGES for path in site.paths()) < PAGES  # it stopped midway


def test_a_redis_restarted_within_seconds_is_reconnected_to(redis_server: PrivateRedis) -> None:
    """A restart or a managed Redis's failover closes every connection for a second or two: both
    clients (the crawl's asyncio one, the coordinator's synchronous one) try again until it is
    back, instead of ending the crawl within milliseconds."""
    import asyncio
    import threading

    from crawler.distributed.client import connect, connect_sync

    async def ping_async() -> bool:
        client = connect(redis_server.url)
        try:
            await client.ping()
            redis_server.stop()
            restart = threading.Timer(1.0, redis_server.start)
            restart.start()
            answered = bool(await client.ping())
            restart.join()
            return answered
        finally:
            await client.aclose()

    assert asyncio.run(ping_async())
    with connect_sync(redis_server.url) as client:
        assert client.set("k", "v")
        redis_server.stop()
        restart = threading.Timer(1.0, redis_server.start)
        restart.start()
        assert client.get("k") is None  # a new, empty Redis on the same port: reached again
        restart.join()
