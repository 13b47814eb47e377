"""Whoever can write to a shared crawl's Redis can neither run code in a worker, steer it to
another site, switch a rule off nor publish what was never crawled; values no worker could have
written do not keep the crawl from ending (a real redis-server, real crawls on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from crawler.distributed.config import CURRENT, ConfigRefused, fetch_config, publish_config, signed
from crawler.request_fingerprinter import url_fingerprint
from crawler.scope import Scope
from tests.conftest import CLI, TEST_SECRET, crawl, run_cli, sitemap_locs
from tests.server import SiteServer
from tests.shared_crawl import FAST, chain_site

SECRET = TEST_SECRET.encode()


def plant_config(redis_url: str, stored: bytes, crawl_id: str = "planted") -> None:
    with Redis.from_url(redis_url) as redis:
        redis.set(f"sitemap-crawler:{crawl_id}:config", stored)
        redis.set(CURRENT, crawl_id)


def worker(redis_url: str, *options: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), "worker", redis_url, "--wait", "0", *options], capture_output=True,
                          text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)  # fmt: skip


def test_an_unsigned_configuration_naming_scrapy_settings_is_refused(
    redis_url: str, servers: tuple[SiteServer, SiteServer]
) -> None:
    """The form a coordinator used to publish (raw settings): a telnet console and another site."""
    _, other = servers
    other.reset()
    planted = {"TELNETCONSOLE_ENABLED": True, "TELNETCONSOLE_PORT": [16023], "SITEMAP_START_URL": other.url()}
    plant_config(redis_url, json.dumps(planted).encode())
    result = worker(redis_url)
    assert result.returncode == 1, result.stderr
    assert "not signed: refused" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert other.paths() == []


def test_a_signed_configuration_of_another_site_is_refused_by_a_worker_given_its_site(
    redis_url: str, servers: tuple[SiteServer, SiteServer]
) -> None:
    main, other = servers
    other.reset()
    plant_config(
        redis_url, signed(SECRET, "planted", {"SITEMAP_START_URL": other.url(), "SITEMAP_CRAWL_ID": "planted"})
    )
    refused = worker(redis_url, "--url", main.url())
    assert refused.returncode == 1 and f"is of {other.url()}, not of {main.url()}" in refused.stderr
    assert other.paths() == []
    # The control: a worker given no site joins that crawl (its coordinator running, as far as the
    # worker can tell), and the other server sees it.
    from crawler.distributed.exporter_lock import exporter_key

    with Redis.from_url(redis_url) as redis:
        redis.set(exporter_key("planted"), "a coordinator", px=60_000)
    joined = worker(redis_url)
    assert joined.returncode == 0, joined.stderr
    assert "/robots.txt" in other.paths()


def _stored(secret: bytes, options: dict[str, Any]) -> bytes:
    return signed(secret, "planted", {"SITEMAP_START_URL": "http://127.0.0.1:1/", **options})


def _altered() -> bytes:
    stored = json.loads(_stored(SECRET, {}))
    stored["payload"] = stored["payload"].replace("127.0.0.1:1", "127.0.0.1:2")
    return json.dumps(stored).encode()


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (_stored(b"another-secret-of-16-chars", {}), "not signed with this worker's shared secret"),
        (_altered(), "not signed with this worker's shared secret"),
        (_stored(SECRET, {"TELNETCONSOLE_ENABLED": True}), "names 'TELNETCONSOLE_ENABLED', which a worker never"),
        (_stored(SECRET, {"EXTENSIONS": {"os.system": 0}}), "names 'EXTENSIONS', which a worker never"),
        (_stored(SECRET, {"DOWNLOAD_DELAY": float("inf")}), "DOWNLOAD_DELAY that is not float"),
        (_stored(SECRET, {"SITEMAP_INCLUDE": [{"a": 1}]}), "SITEMAP_INCLUDE that is not list"),
        (signed(SECRET, "another-crawl", {}), "signed for another crawl"),
        (b"\xff" * 10, "not signed"),
    ],
)
def test_the_configuration_is_taken_only_signed_typed_and_whitelisted(
    redis_url: str, stored: bytes, message: str
) -> None:
    plant_config(redis_url, stored)
    with Redis.from_url(redis_url) as redis, pytest.raises(ConfigRefused, match=message.replace("'", ".")):
        fetch_config(redis, SECRET)


def test_a_published_configuration_round_trips(redis_url: str) -> None:
    options = {"SITEMAP_START_URL": "https://e.com/", "DOWNLOAD_DELAY": 0.5, "SITEMAP_EXCLUDE": ["/x"]}
    with Redis.from_url(redis_url) as redis:
        publish_config(redis, "c", options, SECRET)
        assert fetch_config(redis, SECRET) == ("c", options)
        with pytest.raises(ConfigRefused):
            publish_config(redis, "c", {"ITEM_PIPELINES": {}}, SECRET)  # never published either


def test_a_shared_crawl_needs_auth_and_a_secret(redis_server: Any, server: SiteServer, tmp_path: Path) -> None:
    bare = f"redis://127.0.0.1:{redis_server.port}/0"
    out = str(tmp_path / "out")
    for command in (["crawl", server.url(), "--out", out, "--distributed", bare], ["worker", bare]):
        result = run_cli(*command)
        assert result.returncode == 2 and "has no password: a shared crawl needs Redis AUTH" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    remote = run_cli("worker", "redis://redis.internal:6379/0", "--insecure-redis")
    assert remote.returncode == 2 and "--insecure-redis is for a Redis on 127.0.0.1 only" in remote.stderr
    # Without a secret, or with one too short to be one, nothing starts.
    environment = {key: value for key, value in os.environ.items() if key != "SITEMAP_CRAWLER_SHARED_SECRET"}
    for command in (
        ["crawl", server.url(), "--out", out, "--distributed", redis_server.url],
        ["worker", redis_server.url],
    ):
        result = subprocess.run([str(CLI), *command], capture_output=True, text=True, timeout=60, check=False,
                                env=environment, stdin=subprocess.DEVNULL)  # fmt: skip
        assert result.returncode == 2 and "SITEMAP_CRAWLER_SHARED_SECRET" in result.stderr, result.stderr
    short = run_cli("worker", redis_server.url, env={"SITEMAP_CRAWLER_SHARED_SECRET": "short"})
    assert short.returncode == 2 and "at least 16 characters" in short.stderr
    (tmp_path / "secret").write_text(TEST_SECRET + "\n")
    with_file = subprocess.run([str(CLI), "worker", redis_server.url, "--wait", "0", "--shared-secret-file",
                                str(tmp_path / "secret")], capture_output=True, text=True, timeout=60,
                               check=False, env=environment, stdin=subprocess.DEVNULL)  # fmt: skip
    assert with_file.returncode == 1 and "no crawl to join" in with_file.stderr
    assert redis_server.password not in short.stderr + with_file.stderr
    assert server.paths() == []


def _current(redis: Redis) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # bounded: until the coordinator has published
        crawl_id = redis.get(CURRENT)
        if crawl_id is not None and redis.exists(f"sitemap-crawler:{crawl_id.decode()}:config"):
            return str(crawl_id.decode())
        time.sleep(0.01)
    raise AssertionError("the coordinator never published its crawl")


def _facts(url: str) -> bytes:
    return json.dumps({"url": url, "status": 200, "content_type": "text/html", "depth": 1}).encode()


def test_planted_entries_and_items_are_refused_and_the_crawl_ends(redis_url: str, tmp_path: Path) -> None:
    site = chain_site(tmp_path, 40, robots="User-agent: *\nDisallow: /private/\n")
    (site.root / "chain" / "private").mkdir()
    (site.root / "chain" / "private" / "secret.html").write_text("<html><body>secret</body></html>")
    (site.root / "chain" / "orphan.html").write_text("<html><body>no page links here</body></html>")
    origin = site.url().rstrip("/")
    out = tmp_path / "out"
    try:
        coordinator = subprocess.Popen(
            [str(CLI), "crawl", site.url(), "--out", str(out), "-q", *FAST, "--delay", "0.05",
             "--distributed", redis_url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        with Redis.from_url(redis_url) as redis:
            crawl_id = _current(redis)
            keys = f"sitemap-crawler:{crawl_id}:"
            # Requests that carry a rule switch, or name a sitemap robots.txt never named.
            for meta, callback in (({"dont_obey_robotstxt": True}, "parse"), ({"sitemap_file": True}, "parse_sitemap")):
                request = {"v": 1, "url": f"{origin}/private/secret.html", "depth": 1, "referrer": None,
                           "priority": 0, "callback": callback, "errback": "failed", "meta": meta}  # fmt: skip
                redis.xadd(keys + "frontier", {"r": json.dumps(request)})
            # A URL that passes for http(s) but that Scrapy cannot request, and JSON nested too deep.
            broken = {**request, "url": "http://[::1", "meta": {}, "callback": "parse"}
            redis.xadd(keys + "frontier", {"r": json.dumps(broken)})
            redis.xadd(keys + "frontier", {"r": "[" * 5000})
            # Well-formed requests for an allowed page nobody links, as a page and as a sitemap: unsealed.
            for callback in ("parse", "parse_sitemap"):
                planted = {**request, "url": f"{origin}/orphan.html", "meta": {}, "callback": callback}
                redis.xadd(keys + "frontier", {"r": json.dumps(planted)})
            # Facts of another host, of a URL nobody queued, and of a disallowed URL made to look queued.
            redis.sadd(keys + "seen", url_fingerprint(f"{origin}/private/planted.html"))
            for url in ("https://evil.example/x", f"{origin}/never-crawled.html", f"{origin}/private/planted.html"):
                redis.xadd(keys + "items", {"f": _facts(url)})
            # Values no worker writes: grants held for ever, a next-allowed time in 30,000 years, a ghost
            # worker busy without a time-to-live, a heartbeat of garbage.
            pace = f"{keys}pace:{site.url()}"
            redis.zadd(pace + ":grants", {f"ghost-{n}": 1e15 for n in range(1000)})
            # ... and grants held for ever by a worker that looks alive (idle since 1970): only the
            # longest a download can hold a grant frees them.
            redis.set(keys + "worker:planted", "0", px=300_000)  # alive longer than the test waits
            redis.zadd(pace + ":grants", {f"planted|{n}": 1e15 for n in range(1000)})
            redis.hset(pace, "next", str(10**15))
            redis.set(keys + "worker:ghost", "busy")
            redis.set(keys + "worker:garbage", "not a time", px=100_000)
        _, stderr = coordinator.communicate(timeout=120)
    finally:
        site.stop()
    assert coordinator.returncode == 0, stderr
    assert "Traceback" not in stderr
    paths = site.paths()
    assert not [path for path in paths if path.startswith("/private/")], paths
    assert "/never-crawled.html" not in paths
    assert "/orphan.html" not in paths  # requested by no sealed entry
    listed = sitemap_locs(out, origin)
    assert sorted(listed) == sorted([f"{origin}/", *(f"{origin}/p{n}.html" for n in range(1, 40))])
    assert "Refused 3 items from the shared crawl's Redis" in stderr
    assert "Removed 2 heartbeat(s)" in stderr
    # The two rule switches, the broken URL, the nesting, the two well-formed ones: none sealed.
    assert stderr.count("Refused a frontier entry that is not ours") == 6
    assert stderr.count("not sealed by a worker of this crawl") >= 6


def test_the_page_planted_as_queued_but_disallowed_is_refused_by_robots_alone(redis_url: str, tmp_path: Path) -> None:
    """Each of the exporter's checks on its own: scope, queued, robots (a unit test on the real Redis)."""
    import asyncio

    from redis.asyncio import Redis as AsyncRedis

    from crawler.distributed.robots import robots_key
    from crawler.distributed.vetting import Vetting
    from crawler.items import PageFacts

    async def body() -> list[str | None]:
        redis = AsyncRedis.from_url(redis_url)
        try:
            await redis.hset(robots_key("c"), "https://e.com", json.dumps({"body": "User-agent: *\nDisallow: /p/\n"}))
            for url in ("https://e.com/a", "https://e.com/p/x", "https://other.com/a"):
                await redis.sadd("sitemap-crawler:c:seen", url_fingerprint(url))
            vetting = Vetting(redis, "c", Scope("https://e.com/"), "sitemap-crawler")
            batch = [PageFacts(url, status=200) for url in
                     ("https://e.com/a", "https://e.com/p/x", "https://other.com/a", "https://e.com/b")]  # fmt: skip
            return [*await vetting.refusals(batch), *await vetting.refusals([PageFacts("https://other.com/z")])]
        finally:
            await redis.aclose()

    assert asyncio.run(body()) == [
        None,
        "a page robots.txt disallows",
        "a fetched page out of the crawl's scope",
        "a page the shared frontier never queued",
        None,  # never fetched: an out-of-scope link, for the report
    ]


def test_what_workers_write_is_sealed_and_what_is_not_is_refused_or_fetched_again(redis_url: str) -> None:
    """A robots.txt, an item, a lock and a counter planted in Redis, each on the real server."""
    import asyncio

    from redis.asyncio import Redis as AsyncRedis

    from crawler.distributed.codec import QueuedRequest
    from crawler.distributed.frontier import RedisFrontier
    from crawler.distributed.items import ItemChannel
    from crawler.distributed.robots import SharedRobots, robots_key
    from crawler.distributed.vetting import Vetting
    from crawler.items import PageFacts

    fetched: list[str] = []

    async def fetch() -> tuple[bytes, str | None]:
        fetched.append("again")
        return b"User-agent: *\nDisallow: /p/\n", None

    async def body() -> tuple[object, ...]:
        redis = AsyncRedis.from_url(redis_url)
        try:
            # An allow-everything robots.txt planted unsealed: fetched again, and the exporter refuses by it.
            await redis.hset(robots_key("c"), "https://e.com", json.dumps({"body": "", "why": None}))
            vetting = Vetting(redis, "c", Scope("https://e.com/"), "bot", SECRET)
            await redis.sadd("sitemap-crawler:c:seen", url_fingerprint("https://e.com/p/x"))
            before = await vetting.refusals([PageFacts("https://e.com/p/x", status=200)])
            decided = await SharedRobots(redis, "c", "w", secret=SECRET).decided("https://e.com", fetch)
            after = await Vetting(redis, "c", Scope("https://e.com/"), "bot", SECRET).refusals(
                [PageFacts("https://e.com/p/x", status=200)]
            )
            # A lock without a time-to-live: no worker of ours took it, so it does not hold the others off.
            await redis.set("sitemap-crawler:c:robots-lock:https://f.com", "ghost")
            locked = await asyncio.wait_for(
                SharedRobots(redis, "c", "w", secret=SECRET).decided("https://f.com", fetch), 5
            )
            # An item pushed by a worker is sealed; one planted without the seal, or with another's, is refused.
            channel = ItemChannel(redis, "c", secret=SECRET)
            await channel.open()
            await channel.push(PageFacts("https://e.com/ours", status=200))
            await redis.xadd(channel.stream, {"f": _facts("https://e.com/planted")})
            await ItemChannel(redis, "c", secret=b"another-secret-of-16-chars").push(
                PageFacts("https://e.com/other", status=200)
            )
            taken = [facts.url for _, facts in await channel.take()]
            # A page counter of another type: repaired, the offer goes through.
            await redis.hset("sitemap-crawler:c:pages", "x", "1")
            frontier = RedisFrontier(redis, "c", "w")
            await frontier.open()
            offered = await frontier.offer([(b"1" * 16, QueuedRequest("https://e.com/new"))], max_pages=10)
            return before, decided, after, locked, taken, channel.refused, offered.added
        finally:
            await redis.aclose()

    before, decided, after, locked, taken, refused, added = asyncio.run(body())
    assert before == ["a page fetched before robots.txt was read"]  # the planted body is not the workers'
    assert decided == (b"User-agent: *\nDisallow: /p/\n", None) and len(fetched) == 2
    assert after == ["a page robots.txt disallows"]
    assert locked == (b"User-agent: *\nDisallow: /p/\n", None)
    assert taken == ["https://e.com/ours"] and refused == 2
    assert added == 1


def test_pace_keys_of_another_type_are_repaired_and_frontier_entries_need_this_crawls_seal(redis_url: str) -> None:
    """A pace hash planted as a string and its grants as a list: the next grant repairs both
    (no WRONGTYPE reaches a download). A sealed entry is leased; one planted unsealed, or
    sealed under another secret, is refused and removed."""
    import asyncio

    from redis.asyncio import Redis as AsyncRedis

    from crawler.distributed.codec import QueuedRequest, encode
    from crawler.distributed.coordination import SitePace
    from crawler.distributed.frontier import RedisFrontier

    async def body() -> tuple[float, list[bytes], list[str], int, int]:
        redis = AsyncRedis.from_url(redis_url)
        try:
            pace = SitePace(redis, "c", "https://e.com/")
            await redis.set(pace.key, "not a hash")
            await redis.rpush(pace.grants, "not", "a", "sorted", "set")
            wait = await pace.try_acquire(0.5, 2, pace.token("w", 1))
            kinds = [await redis.type(pace.key), await redis.type(pace.grants)]
            frontier = RedisFrontier(redis, "c", "w", secret=SECRET)
            await frontier.open()
            await frontier.offer([(b"1" * 16, QueuedRequest("https://e.com/ours"))])
            await redis.xadd(frontier.stream, {"r": encode(QueuedRequest("https://e.com/planted"))})
            await RedisFrontier(redis, "c", "x", secret=b"another-secret-of-16-chars").offer(
                [(b"2" * 16, QueuedRequest("https://e.com/other"))]
            )
            leased = [lease.request.url for lease in await frontier.lease(count=10)]
            return wait, kinds, leased, frontier.refused, await redis.xlen(frontier.stream)
        finally:
            await redis.aclose()

    wait, kinds, leased, refused, left = asyncio.run(body())
    assert wait == 0.0 and kinds == [b"hash", b"zset"]
    assert leased == ["https://e.com/ours"] and refused == 2
    assert left == 1  # the refused entries are removed; the leased one stays until acknowledged


def test_each_run_seals_under_its_own_key_and_what_an_earlier_run_sealed_is_refused(redis_url: str) -> None:
    """A frontier entry and an item sealed by a worker of an earlier run of the same crawl (same
    id, same secret), copied into this run's Redis, are refused: the run is part of the seal. A
    new run gets a new run id; ``--resume`` continues the run it finds."""
    import asyncio

    from redis.asyncio import Redis as AsyncRedis
    from scrapy.settings import Settings

    from crawler.cli.shared import publish
    from crawler.distributed.codec import QueuedRequest
    from crawler.distributed.frontier import RedisFrontier
    from crawler.distributed.items import ItemChannel
    from crawler.items import PageFacts
    from settings.distributed import Distributed

    shared = Distributed(redis_url, "c", 60.0, 1.0, secret=SECRET)
    settings = Settings({"SITEMAP_START_URL": "https://e.com/"}, priority="cmdline")
    runs = [publish(settings, shared, SECRET), publish(settings, shared, SECRET)]
    settings.set("SITEMAP_RESUME", True, priority="cmdline")
    runs.append(publish(settings, shared, SECRET))
    assert len(runs[0]) == 16 and runs[0] != runs[1] == runs[2]
    earlier, now = (Distributed(redis_url, "c", 60.0, 1.0, secret=SECRET, run=run) for run in runs[:2])

    async def body() -> tuple[list[str], list[str], int, int]:
        redis = AsyncRedis.from_url(redis_url)
        try:
            frontier = RedisFrontier(redis, "c", "w", secret=now.sealing_key)
            await frontier.open()
            await RedisFrontier(redis, "c", "old", secret=earlier.sealing_key).offer(
                [(b"1" * 16, QueuedRequest("https://e.com/unlinked-now"))]
            )
            await frontier.offer([(b"2" * 16, QueuedRequest("https://e.com/linked"))])
            channel = ItemChannel(redis, "c", secret=now.sealing_key)
            await channel.open()
            await ItemChannel(redis, "c", secret=earlier.sealing_key).push(PageFacts("https://e.com/old", status=200))
            await channel.push(PageFacts("https://e.com/new", status=200))
            leased = [lease.request.url for lease in await frontier.lease(count=10)]
            taken = [facts.url for _, facts in await channel.take()]
            return leased, taken, frontier.refused, channel.refused
        finally:
            await redis.aclose()

    assert asyncio.run(body()) == (["https://e.com/linked"], ["https://e.com/new"], 1, 1)


def test_an_entry_sealed_for_another_crawl_is_refused(redis_url: str) -> None:
    """Two crawls under one secret (one Redis, two sites): an entry one sealed, copied into the
    other's frontier, is refused there; the crawl id is part of the seal."""
    import asyncio

    from redis.asyncio import Redis as AsyncRedis

    from crawler.distributed.codec import QueuedRequest
    from crawler.distributed.frontier import RedisFrontier

    async def body() -> tuple[list[str], int]:
        redis = AsyncRedis.from_url(redis_url)
        try:
            other, ours = RedisFrontier(redis, "d", "w", secret=SECRET), RedisFrontier(redis, "c", "w", secret=SECRET)
            await other.open()
            await ours.open()
            await other.offer([(b"1" * 16, QueuedRequest("https://other.example/private"))])
            for _, fields in await redis.xrange(other.stream):
                await redis.xadd(ours.stream, fields)
            await ours.offer([(b"2" * 16, QueuedRequest("https://e.com/linked"))])
            return [lease.request.url for lease in await ours.lease(count=10)], ours.refused
        finally:
            await redis.aclose()

    assert asyncio.run(body()) == (["https://e.com/linked"], 1)


def test_a_worker_given_the_secret_in_a_file_seals_what_it_writes(redis_url: str, tmp_path: Path) -> None:
    """The shared-crawl guide's way: the secret in a file on each machine, not in the environment."""
    site = chain_site(tmp_path, 40)
    (tmp_path / "secret").write_text(TEST_SECRET + "\n")
    environment = {key: value for key, value in os.environ.items() if key != "SITEMAP_CRAWLER_SHARED_SECRET"}
    environment["SITEMAP_CRAWLER_SHARED_SECRET_FILE"] = str(tmp_path / "secret")
    try:
        joined = subprocess.Popen([str(CLI), "worker", redis_url, "--wait", "30"], stderr=subprocess.PIPE, text=True,
                                  env=environment, stdin=subprocess.DEVNULL)  # fmt: skip
        options = (*FAST, "--delay", "0.05", "--concurrency", "1", "--distributed", redis_url)  # leases for both
        shared = crawl(site.url(), tmp_path / "out", *options)
        _, worker_log = joined.communicate(timeout=60)
    finally:
        site.stop()
    assert shared.code == 0 and joined.returncode == 0, shared.process.stderr + worker_log
    assert int(worker_log.rsplit("worker done: ", 1)[1].split()[0]) > 0  # it fetched pages of its own
    assert "Refused" not in shared.process.stderr  # and the exporter took them all as ours
    origin = site.url().rstrip("/")
    assert sorted(shared.listed) == sorted([f"{origin}/", *(f"{origin}/p{n}.html" for n in range(1, 40))])


def test_the_exporter_reads_robots_txt_as_the_workers_do(redis_url: str) -> None:
    """A robots.txt that starts with a byte-order mark: its first group counts for both."""
    import asyncio

    from redis.asyncio import Redis as AsyncRedis

    from crawler.distributed.robots import encode, robots_key
    from crawler.distributed.vetting import Vetting
    from crawler.items import PageFacts
    from crawler.run.robots import SiteRules

    body = "\ufeffUser-agent: *\nDisallow: /p/\n".encode()
    assert not SiteRules(body).allowed("https://e.com/p/x", "bot")  # the middleware's reading

    async def refusals() -> list[str | None]:
        redis = AsyncRedis.from_url(redis_url)
        try:
            await redis.hset(robots_key("c"), "https://e.com", encode((body, None), SECRET, "c", "https://e.com"))
            await redis.sadd("sitemap-crawler:c:seen", url_fingerprint("https://e.com/p/x"))
            vetting = Vetting(redis, "c", Scope("https://e.com/"), "bot", SECRET)
            return await vetting.refusals([PageFacts("https://e.com/p/x", status=200)])
        finally:
            await redis.aclose()

    assert asyncio.run(refusals()) == ["a page robots.txt disallows"]
