"""A worker's read loop while Redis is down, and after it comes back empty."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest
from redis.exceptions import NoPermissionError, OutOfMemoryError, ResponseError
from structlog.testing import capture_logs

from memsvc.client import MemoryClient
from memsvc.errors import MemoryMisconfiguredError
from memsvc.service.consumer import Consumer
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings
from tests.conftest import until


async def test_the_read_loop_backs_off_then_rejoins_a_redis_that_came_back_empty(
    tmp_path: Path,
) -> None:
    settings = ServiceSettings(data_dir=tmp_path / "data", key_prefix="svc", redis_url=None)
    server = fakeredis.FakeServer()
    redis = fakeredis.aioredis.FakeRedis(server=server)
    runtime = Runtime(settings, redis)
    consumer = Consumer(runtime, name="w1")
    add = {"action": "add", "target": "memory", "content": "before"}
    with capture_logs() as logs:
        task = asyncio.create_task(consumer.run())
        async with MemoryClient(settings=settings, redis=redis) as mem:
            assert (await mem.call_tool("u1", "a1", "t1", "memory", add))["success"]
            server.connected = False

            def failures() -> list[dict[str, Any]]:
                return [e for e in logs if e["event"] == "consumer_read_failed"]

            async def two_failures() -> bool:
                return len(failures()) >= 2

            await until(two_failures)
            for entry in failures()[:2]:  # waits double from 0.25-0.5 s, with jitter
                ceiling = 0.25 * 2 ** entry["failures"]
                assert ceiling / 2 <= entry["retry_in"] <= ceiling, failures()
            server.connected = True
            await redis.flushall()  # Redis restarted without its data: no stream, no group
            again = await mem.call_tool(
                "u1", "a1", "t1", "memory", {**add, "content": "after"}, deadline=30
            )
        assert again["success"], again
        assert any(e["event"] == "consumer_rejoined" for e in logs)
        await consumer.stop(1.0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await runtime.aclose()
    await redis.aclose()


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    """A worker's runtime on an in-memory Redis of its own (events claimed after 0.3 s)."""
    settings = ServiceSettings(
        data_dir=tmp_path / "data", key_prefix="svc", redis_url=None, claim_idle_seconds=0.3
    )
    redis = fakeredis.aioredis.FakeRedis()
    runtime = Runtime(settings, redis)
    yield runtime
    await runtime.aclose()
    await redis.aclose()


async def test_a_worker_started_while_redis_refuses_writes_joins_once_it_takes_them(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of memory, Redis refuses even joining a group that exists: the worker waits it
    out rather than running on without ever reading an event."""
    consumer = Consumer(runtime, name="w1")
    join = runtime.bus.join
    refusals = [OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")] * 2

    async def refusing(name: str) -> None:
        if refusals:
            raise refusals.pop()
        await join(name)

    monkeypatch.setattr(runtime.bus, "join", refusing)
    add = {"action": "add", "target": "memory", "content": "a fact"}
    with capture_logs() as logs:
        task = asyncio.create_task(consumer.run())
        async with MemoryClient(settings=runtime.settings, redis=runtime.redis) as mem:
            result = await mem.call_tool("u1", "a1", "t1", "memory", add, deadline=30)
        assert result["success"], result
        joins = [e["failures"] for e in logs if e["event"] == "consumer_join_failed"]
        assert joins == [1, 2]
        await consumer.stop(1.0)
        await task


async def test_a_worker_stopped_while_it_waits_to_join_ends(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    consumer = Consumer(runtime, name="w1")

    async def refusing(name: str) -> None:
        raise OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")

    monkeypatch.setattr(runtime.bus, "join", refusing)
    task = asyncio.create_task(consumer.run())
    await asyncio.sleep(0.3)
    await consumer.stop(1.0)
    await asyncio.wait_for(task, timeout=30)


async def test_a_worker_redis_refuses_for_good_ends_its_run_and_says_why(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ACL without XREADGROUP (or a join it refuses): no wait fixes it, so the run ends
    with the error rather than retrying for ever."""

    async def refusing(*_: Any, **__: Any) -> Any:
        raise NoPermissionError("this user has no permissions to run the 'xreadgroup' command")

    monkeypatch.setattr(runtime.bus, "read", refusing)
    with pytest.raises(MemoryMisconfiguredError, match="xreadgroup"):
        await asyncio.wait_for(Consumer(runtime, name="w1", exit_when_refused=True).run(), 30)
    monkeypatch.setattr(runtime.bus, "join", refusing)
    with pytest.raises(MemoryMisconfiguredError):
        await asyncio.wait_for(Consumer(runtime, name="w2", exit_when_refused=True).run(), 30)


async def test_a_worker_whose_finish_redis_refuses_for_good_stops_reading(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ACL without XACK fails an event's last step after its log record: retrying it
    would add a record every ``claim_idle``, and every other event would fail alike."""
    finishes: list[str] = []

    async def refusing(delivery: Any, *_: Any, **__: Any) -> None:
        finishes.append(delivery.stream_id)
        raise ResponseError("The user executing the script can't run this command or subcommand")

    monkeypatch.setattr(runtime.bus, "finish", refusing)
    consumer = Consumer(runtime, name="w1", exit_when_refused=True)
    task = asyncio.create_task(consumer.run())
    async with MemoryClient(settings=runtime.settings, redis=runtime.redis) as mem:
        await mem.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a")
        with pytest.raises(MemoryMisconfiguredError):
            await asyncio.wait_for(task, timeout=30)
    await asyncio.sleep(1.0)  # three claim_idles: nothing claims it again
    assert len(finishes) == 1
    await consumer.stop(1.0)


async def test_a_worker_logs_its_periodic_work_failing_sparingly_and_its_recovery_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis out of memory for an hour fails a worker's beat, refresh, claim and check
    every heartbeat: each loop logs its 1st, 2nd, 4th, 8th ... failure, not every one."""
    settings = ServiceSettings(
        data_dir=tmp_path / "data", key_prefix="svc", redis_url=None, claim_idle_seconds=0.2
    )
    redis = fakeredis.aioredis.FakeRedis()
    runtime = Runtime(settings, redis)
    refusing = 11
    beats = 0
    beat = runtime.bus.beat

    async def beat_while_full(consumer: str) -> None:
        nonlocal beats
        beats += 1
        if beats <= refusing:
            raise OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")
        await beat(consumer)

    monkeypatch.setattr(runtime.bus, "beat", beat_while_full)
    consumer = Consumer(runtime, name="w1")
    with capture_logs() as logs:
        task = asyncio.create_task(consumer.run())

        async def recovered() -> bool:
            return any(e.get("after") == "beat_failed" for e in logs)

        await until(recovered)
        await consumer.stop(1.0)
        await task
    failed = [e["failures"] for e in logs if e["event"] == "beat_failed"]
    assert failed == [1, 2, 4, 8]
    assert all(e["consumer"] == "w1" for e in logs if e["event"] == "beat_failed")
    back = [e for e in logs if e["event"] == "redis_reachable_again"]
    assert [(e["after"], e["failures"]) for e in back] == [("beat_failed", refusing)]
    await runtime.aclose()
