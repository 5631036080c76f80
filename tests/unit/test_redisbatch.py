"""CommandBatcher: callers of one loop turn share a pipeline, each gets its own answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import fakeredis
import pytest
from fakeredis.aioredis import FakeAsyncRedisConnection
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from memsvc.redisbatch import CommandBatcher
from tests.conftest import free_port

SENT: list[int] = []


class CountingConnection(FakeAsyncRedisConnection):
    """Counts the packets sent to Redis (one per round trip)."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        SENT.append(1)
        await super().send_packed_command(command, check_health)


@pytest.fixture
async def redis() -> AsyncIterator[Redis]:
    SENT.clear()
    client = fakeredis.aioredis.FakeRedis(connection_class=CountingConnection)
    await client.ping()  # the connection is made and counted before the test counts
    SENT.clear()
    yield client
    await client.aclose()


async def test_callers_of_one_turn_share_one_round_trip(redis: Redis) -> None:
    batcher = CommandBatcher(redis)

    def writer(n: int) -> Any:
        def queue(pipe: Pipeline) -> None:
            pipe.set(f"k{n}", n)
            pipe.get(f"k{n}")

        return queue

    results = await asyncio.gather(*(batcher.execute(writer(n)) for n in range(20)))

    assert results == [[True, str(n).encode()] for n in range(20)]
    assert len(SENT) == 1


async def test_callers_of_later_turns_go_in_a_later_pipeline(redis: Redis) -> None:
    batcher = CommandBatcher(redis)
    assert await batcher.execute(lambda pipe: pipe.set("a", 1)) == [True]
    assert await batcher.execute(lambda pipe: pipe.get("a")) == [b"1"]
    assert len(SENT) == 2


async def test_an_error_reaches_only_the_caller_whose_command_failed(redis: Redis) -> None:
    batcher = CommandBatcher(redis)
    await redis.set("text", "not a number")
    SENT.clear()

    def bad(pipe: Pipeline) -> None:
        pipe.set("before", 1)
        pipe.incr("text")

    outcomes = await asyncio.gather(
        batcher.execute(lambda pipe: pipe.incr("counter")),
        batcher.execute(bad),
        batcher.execute(lambda pipe: pipe.incr("counter")),
        return_exceptions=True,
    )

    assert outcomes[0] == [1]
    assert isinstance(outcomes[1], ResponseError)
    assert outcomes[2] == [2]
    assert len(SENT) == 1
    assert await redis.get("before") == b"1"  # a pipeline, not a transaction


async def test_a_command_that_cannot_be_packed_fails_only_its_caller(redis: Redis) -> None:
    """A string Redis cannot be sent (a lone surrogate from a JSON escape) fails the packing
    of the whole pipeline: the callers that shared it are sent again, each alone, in order."""
    batcher = CommandBatcher(redis)

    outcomes = await asyncio.gather(
        batcher.execute(lambda pipe: pipe.rpush("order", "first")),
        batcher.execute(lambda pipe: pipe.rpush("order", "mallory\udcff")),
        batcher.execute(lambda pipe: pipe.rpush("order", "third")),
        return_exceptions=True,
    )

    assert outcomes[0] == [1] and outcomes[2] == [2]
    assert isinstance(outcomes[1], UnicodeEncodeError)
    assert await redis.lrange("order", 0, -1) == [b"first", b"third"]


HANGING: list[asyncio.Event] = []


class HangingConnection(FakeAsyncRedisConnection):
    """Never sends a packet that names ``hang-here``: a Redis that stopped answering."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        packed = b"".join(command) if isinstance(command, list) else bytes(command)
        if b"hang-here" in packed:
            HANGING[0].set()
            await asyncio.Event().wait()
        await super().send_packed_command(command, check_health)


async def test_callers_sent_again_one_by_one_all_hear_when_the_sending_is_cut_short() -> None:
    """The pipeline is cut short (its loop closing) while its callers are sent again one by
    one: those not sent yet hear it, none waits for good."""
    HANGING[:] = [asyncio.Event()]
    redis = fakeredis.aioredis.FakeRedis(connection_class=HangingConnection)
    batcher = CommandBatcher(redis)
    calls = [
        asyncio.ensure_future(batcher.execute(lambda pipe: pipe.rpush("hang-here", "a"))),
        asyncio.ensure_future(batcher.execute(lambda pipe: pipe.rpush("k", "m\udcff"))),
        asyncio.ensure_future(batcher.execute(lambda pipe: pipe.rpush("k", "c"))),
    ]
    async with asyncio.timeout(30):
        await HANGING[0].wait()  # the first caller, sent again alone, waits on the wire
    for task in list(batcher._sending._tasks):
        task.cancel()
    async with asyncio.timeout(30):  # generous: only a caller left waiting reaches it
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(o, RuntimeError) and "cut short" in str(o) for o in outcomes)
    await redis.aclose()


async def test_a_cancelled_callers_commands_are_still_sent(redis: Redis) -> None:
    batcher = CommandBatcher(redis)
    cancelled = asyncio.ensure_future(batcher.execute(lambda pipe: pipe.set("ack", 1)))
    await asyncio.sleep(0)  # queued, not yet sent
    cancelled.cancel()
    survivor = await batcher.execute(lambda pipe: pipe.get("ack"))

    assert cancelled.cancelled()
    assert survivor == [b"1"]


async def test_a_lost_connection_fails_every_caller_of_the_pipeline() -> None:
    down = Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.5)
    batcher = CommandBatcher(down)
    outcomes = await asyncio.gather(
        batcher.execute(lambda pipe: pipe.get("a")),
        batcher.execute(lambda pipe: pipe.get("b")),
        return_exceptions=True,
    )
    await down.aclose()

    assert all(isinstance(outcome, RedisConnectionError) for outcome in outcomes), outcomes


async def test_callers_that_find_their_script_missing_load_it_once_and_keep_their_order(
    redis: Redis,
) -> None:
    """As after a Redis restart: a worker's events that finish together stay in order."""
    batcher = CommandBatcher(redis)
    append = redis.register_script("return redis.call('RPUSH', KEYS[1], ARGV[1])")
    await redis.script_flush()
    loads: list[str] = []
    load = redis.script_load

    async def counted_load(script: str) -> str:
        loads.append(script)
        return await load(script)

    redis.script_load = counted_load  # type: ignore[method-assign]
    answers = await asyncio.gather(*(batcher.script(append, ["order"], [n]) for n in range(20)))
    assert answers == list(range(1, 21))
    assert await redis.lrange("order", 0, -1) == [str(n).encode() for n in range(20)]
    assert len(loads) == 1
