"""Redis round trips a worker makes per event, and what each costs to pack.

A counting connection records every packet a worker sends to Redis, with the
commands it carried, under the id of the event whose task sent it (the consumer
binds it to every line its run logs); the shared stream read and the heartbeats
run outside any event and are not counted. Each test warms up first (scripts
loaded, manager built, the thread entered) so that it counts what every later
event of that kind costs.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import structlog
from fakeredis.aioredis import FakeAsyncRedisConnection
from redis.asyncio import Connection

from memsvc.client import MemoryClient
from memsvc.redisconn import PackingConnection, cancel_and_wait
from memsvc.service.consumer import Consumer
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings

RoundTrip = tuple[str, ...]
TRACES: dict[str, list[RoundTrip]] = defaultdict(list)


class CountingConnection(FakeAsyncRedisConnection):
    """Records each packet sent, as the names of the commands it carries."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._packed: list[str] = []

    def pack_command(self, *args: Any) -> list[bytes]:
        name = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
        self._packed.append(name.split(" ")[0].upper())
        return super().pack_command(*args)

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        event_id = structlog.contextvars.get_contextvars().get("event_id")
        if event_id is not None:
            TRACES[event_id].append(tuple(self._packed))
        self._packed = []
        await super().send_packed_command(command, check_health)


@dataclass
class Counted:
    client: MemoryClient
    runtime: Runtime

    async def round_trips(self, event_id: str) -> list[RoundTrip]:
        """The round trips of ``event_id``, once its record is in the event log."""
        for _ in range(500):
            if event_id in [entry.event_id async for entry in self.runtime.log.entries()]:
                return list(TRACES[event_id])
            await asyncio.sleep(0.01)
        raise AssertionError(f"{event_id} was not processed")

    async def trips_of_a_write(self, call: Callable[[], Awaitable[str]]) -> list[RoundTrip]:
        """Every round trip the worker makes for the write ``call`` publishes (returning its
        event id), its rename's confirmation included: a file's writes run in the task of
        the event that queued its first, so they are counted by any event's id, with
        nothing else running meanwhile."""
        await self.runtime.write_batches.settled()
        TRACES.clear()
        await self.round_trips(await call())
        await self.runtime.write_batches.settled()
        return [trip for event_id, trips in TRACES.items() if event_id for trip in trips]

    async def last_event_id(self) -> str:
        entries = [entry async for entry in self.runtime.log.entries()]
        return entries[-1].event_id


@pytest.fixture
async def counted(tmp_path: Path) -> AsyncIterator[Counted]:
    settings = ServiceSettings(data_dir=tmp_path / "data", key_prefix="rt", redis_url=None)
    server = fakeredis.FakeServer()
    worker_redis = fakeredis.aioredis.FakeRedis(server=server, connection_class=CountingConnection)
    client_redis = fakeredis.aioredis.FakeRedis(server=server)
    runtime = Runtime(settings, worker_redis)
    await runtime.bus.ensure_group()
    consumer = Consumer(runtime, name="counted")
    task = asyncio.create_task(consumer.run())
    client = MemoryClient(settings=settings, redis=client_redis)
    await client.__aenter__()
    TRACES.clear()
    yield Counted(client, runtime)
    await consumer.stop(1.0)
    await cancel_and_wait(task)
    await client.aclose()
    await runtime.aclose()
    await worker_redis.aclose()
    await client_redis.aclose()


def commands(trips: Iterable[RoundTrip]) -> list[str]:
    return [name for trip in trips for name in trip]


async def add(counted: Counted, thread: str, content: str) -> str:
    args = {"action": "add", "target": "user", "content": content}
    result = await counted.client.call_tool("u1", "a1", thread, "memory", args)
    assert result["success"] is True, result
    # its rename's confirmation follows the answer: sent in a loop turn with another
    # event's commands, it would share (and be counted in) that event's pipeline
    await counted.runtime.write_batches.settled()
    return await counted.last_event_id()


async def test_a_repeat_prefetch_is_two_round_trips(counted: Counted) -> None:
    await add(counted, "t1", "Name: Ada")
    await counted.client.prefetch("u1", "a1", "t1", query="hi")  # takes the snapshot
    ctx = await counted.client.prefetch("u1", "a1", "t1", query="again")
    assert "Name: Ada" in ctx.text and not ctx.degraded
    trips = await counted.round_trips(await counted.last_event_id())
    assert len(trips) <= 2, trips
    assert trips[-1] == ("EVALSHA",)  # the log record, the ack and the reply: one script


async def test_a_first_prefetch_is_at_most_three_round_trips(counted: Counted) -> None:
    await add(counted, "t1", "Name: Ada")
    await counted.client.prefetch("u1", "a1", "t1", query="hi")
    ctx = await counted.client.prefetch("u1", "a1", "t2", query="a new session")
    assert "Name: Ada" in ctx.text and not ctx.degraded
    trips = await counted.round_trips(await counted.last_event_id())
    assert len(trips) <= 3, trips


async def test_a_memory_add_is_at_most_five_round_trips_with_its_lock(counted: Counted) -> None:
    await add(counted, "t1", "Name: Ada")
    await counted.runtime.write_batches.settled()
    assert counted.runtime.journal is not None
    counted.runtime.journal.known("user", "u1", "a1")  # as if another host wrote it last
    trips = await counted.trips_of_a_write(lambda: add(counted, "t1", "Likes: tea"))
    assert len(trips) <= 5, trips
    # the lock is taken (SET NX, its PTTL beside it) within the count, before the commit
    assert "PTTL" in commands(trips[:-3]), trips


async def test_an_add_by_the_last_writer_of_its_file_takes_its_lock_with_its_commit(
    counted: Counted,
) -> None:
    await add(counted, "t1", "Name: Ada")
    trips = await counted.trips_of_a_write(lambda: add(counted, "t1", "Likes: tea"))
    assert len(trips) <= 4, trips  # the thread (with the commit, when they meet), the
    assert "PTTL" not in commands(trips), trips  # commit, the reply, the confirmation


async def test_a_switch_of_thread_is_still_detected(counted: Counted) -> None:
    await counted.client.prefetch("u1", "a1", "t1", query="hi")
    await counted.client.prefetch("u1", "a1", "t2", query="hi")
    entries = [entry async for entry in counted.runtime.log.entries()]
    assert entries[-1].detail["session_switch"] == {
        "detected": True,
        "previous": "t1",
        "resumed": False,
    }
    await counted.client.prefetch("u1", "a1", "t1", query="back")
    entries = [entry async for entry in counted.runtime.log.entries()]
    assert entries[-1].detail["session_switch"]["resumed"] is True


@pytest.mark.parametrize(
    "command",
    [
        ("SET", "k", "v", "PX", 10_000),
        ("EVALSHA", "sha", 2, "k1", b"k2", 1.5, 1_700_000_000.123456, "中文 🙂", b"\x00\xff"),
        ("BLPOP", "wake", 0.987),
        ("XADD", "stream", "*", "e", '{"a": 1}'),
        ("SCRIPT LOAD", "return 1"),
    ],
)
def test_the_c_packer_sends_the_bytes_redis_py_would(command: tuple[Any, ...]) -> None:
    python, packing = Connection(), PackingConnection()
    assert b"".join(packing.pack_command(*command)) == b"".join(python.pack_command(*command))
