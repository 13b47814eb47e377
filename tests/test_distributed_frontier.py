"""The shared frontier on a real redis-server: leases, reclaim, dedupe, refusal."""

from __future__ import annotations

import asyncio
import os
import pickle
import shutil
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from redis.asyncio import Redis

from crawler.distributed.codec import PoisonedEntry, QueuedRequest, decode, encode
from crawler.distributed.frontier import RedisFrontier
from tests.redis_server import RedisServer

T = TypeVar("T")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    if shutil.which("redis-server") is None and not os.environ.get("CI"):
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(tmp_path).start()
    yield server.url
    server.stop()


def run(redis_url: str, body: Callable[[Redis], Awaitable[T]]) -> T:
    async def main() -> T:
        redis = Redis.from_url(redis_url)
        try:
            return await body(redis)
        finally:
            await redis.aclose()

    return asyncio.run(main())


def request(n: int) -> tuple[bytes, QueuedRequest]:
    return n.to_bytes(16, "big"), QueuedRequest(f"https://e.com/{n}", depth=1, referrer="https://e.com/")


def test_a_url_offered_twice_is_queued_once(redis_url: str) -> None:
    async def body(redis: Redis) -> tuple[int, int, int, tuple[int, int]]:
        one, two = RedisFrontier(redis, "c", "w1"), RedisFrontier(redis, "c", "w2")
        await one.open()
        await two.open()
        first = await one.offer([request(1), request(2)])
        again = await two.offer([request(2), request(3)])
        return first, again, await one.seen_count(), await one.counts()

    assert run(redis_url, body) == (2, 1, 3, (3, 0))


def test_a_lease_not_acknowledged_goes_to_another_worker(redis_url: str) -> None:
    async def body(redis: Redis) -> None:
        dead = RedisFrontier(redis, "c", "dead", lease_seconds=0.2)
        alive = RedisFrontier(redis, "c", "alive", lease_seconds=0.2)
        await dead.open()
        await dead.offer([request(n) for n in range(5)])
        taken = await dead.lease(count=3)  # and then the worker dies: never acknowledged
        assert len(taken) == 3
        first = await alive.lease(count=10)
        assert {lease.request.url for lease in first} == {"https://e.com/3", "https://e.com/4"}
        await alive.ack([lease.entry for lease in first])
        assert await alive.lease(count=10) == []  # the dead worker's leases have not expired yet
        await asyncio.sleep(0.3)  # the lease time passing is the event itself
        reclaimed = await alive.lease(count=10)
        assert sorted(lease.request.url for lease in reclaimed) == sorted(lease.request.url for lease in taken)
        await alive.ack([lease.entry for lease in reclaimed])
        assert await alive.counts() == (0, 0)

    run(redis_url, body)


def test_an_entry_that_is_not_ours_is_refused_not_run(redis_url: str) -> None:
    class Boom:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (print, ("pickled code ran",))

    async def body(redis: Redis) -> None:
        frontier = RedisFrontier(redis, "c", "w")
        await frontier.open()
        await redis.xadd(frontier.stream, {"r": pickle.dumps(Boom())})
        await redis.xadd(frontier.stream, {"r": b'{"v":1,"url":"file:///etc/passwd","depth":0,"referrer":null,'
                                                 b'"priority":0,"callback":"parse","meta":{}}'})  # fmt: skip
        await redis.xadd(frontier.stream, {"other": b"x"})
        await frontier.offer([request(1)])
        leases = await frontier.lease(count=10)
        assert [lease.request.url for lease in leases] == ["https://e.com/1"]
        assert frontier.refused == 3
        assert await frontier.counts() == (1, 1)  # the refused ones are gone

    run(redis_url, body)


@pytest.mark.parametrize(
    "raw",
    [
        b"\x80\x04K\x01.",  # a pickle
        b"[]",
        b'{"v":1,"url":"https://e.com/","depth":0,"referrer":null,"priority":0,"callback":"__init__","meta":{}}',
        b'{"v":1,"url":"https://e.com/","depth":-1,"referrer":null,"priority":0,"callback":"parse","meta":{}}',
        b'{"v":1,"url":"https://e.com/","depth":0,"referrer":null,"priority":0,"callback":"parse","meta":{"x":1}}',
        b'{"v":2,"url":"https://e.com/","depth":0,"referrer":null,"priority":0,"callback":"parse","meta":{}}',
    ],
)
def test_the_codec_refuses_what_is_not_a_queued_request(raw: bytes) -> None:
    with pytest.raises(PoisonedEntry):
        decode(raw)


def test_the_codec_round_trips() -> None:
    queued = QueuedRequest("https://e.com/a?b=1", 3, "https://e.com/", -3, "parse_sitemap", {"sitemap_level": 2})
    assert decode(encode(queued)) == queued
