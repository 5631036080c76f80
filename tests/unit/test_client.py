"""MemoryClient when Redis refuses: documented results and errors, and a listener that
backs off instead of hammering a Redis that is down."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest
from redis.asyncio import Redis
from redis.exceptions import (
    AuthenticationError,
    NoPermissionError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from structlog.testing import capture_logs

from memsvc import client as client_module
from memsvc.client import MemoryClient
from memsvc.errors import (
    ClientStateError,
    MemoryMisconfiguredError,
    MemoryServiceError,
    MemoryUnavailableError,
    WritePendingError,
)
from memsvc.redisconn import Outage
from memsvc.settings import ServiceSettings
from tests.conftest import free_port, until


@pytest.fixture
def settings(tmp_path: Path) -> ServiceSettings:
    return ServiceSettings(data_dir=tmp_path / "data", key_prefix="svc", redis_url=None)


REFUSALS = {
    "out of memory": OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
    "read-only replica": ReadOnlyError("You can't write against a read only replica."),
    "failing snapshots": ResponseError("MISCONF Redis is configured to save RDB snapshots"),
    "a script running long": ResponseError("BUSY Redis is busy running a script."),
}
# what Redis keeps refusing until an operator acts (the words are redis-py's, as it parses
# Redis 7's replies)
LASTING_REFUSALS = {
    "a wrong password": AuthenticationError("invalid username-password pair or user is disabled."),
    "an ACL without the command": NoPermissionError("this user has no permissions"),
    "a key of another type": ResponseError(
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    ),
    "a server without the command": ResponseError(
        "unknown command 'BLMPOP', with args beginning with: "
    ),
}


async def _refusing(
    settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch, error: Exception | None
) -> AsyncIterator[MemoryClient]:
    """A client whose Redis refuses every connection (nothing listens on the port) if
    ``error`` is None, else every publish with ``error``."""
    if error is None:
        redis = Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.2)
    else:
        redis = fakeredis.aioredis.FakeRedis()
    async with MemoryClient(settings=settings, redis=redis) as mem:
        if error is not None:

            async def publish(*_: Any, **__: Any) -> str:
                raise error

            monkeypatch.setattr(mem.bus, "publish", publish)
        yield mem
    await redis.aclose()


@pytest.fixture(params=["no connection", *REFUSALS])
async def refused(
    request: pytest.FixtureRequest, settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[MemoryClient]:
    """A client whose Redis is away or refuses for now: over ``maxmemory`` under
    ``noeviction``, a replica (an old primary after a failover), snapshots failing, a script
    running long."""
    async for mem in _refusing(settings, monkeypatch, REFUSALS.get(request.param)):
        yield mem


@pytest.fixture(params=list(LASTING_REFUSALS))
async def misconfigured(
    request: pytest.FixtureRequest, settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[MemoryClient]:
    """A client whose Redis refuses it until an operator acts."""
    async for mem in _refusing(settings, monkeypatch, LASTING_REFUSALS[request.param]):
        yield mem


def calls_that_raise(mem: MemoryClient) -> list[Any]:
    """One of each call that raises when Redis does not take it (the tool and prefetch
    answer instead)."""
    return [
        mem.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a"),
        mem.session_switch("u1", "a1", "t2"),
        mem.queue_prefetch("u1", "a1", "t1"),
        mem.tool_schemas("u1", "a1"),
        mem.reload_snapshot("u1", "a1", "t1"),
    ]


async def test_call_tool_when_redis_refuses_says_nothing_was_saved_and_may_be_retried(
    refused: MemoryClient,
) -> None:
    args = {"action": "add", "target": "memory", "content": "a fact"}
    result = await refused.call_tool("u1", "a1", "t1", "memory", args)
    assert (result["success"], result["retryable"]) == (False, True)
    assert "Nothing was saved" in result["error"]


async def test_other_calls_raise_memory_unavailable_when_redis_refuses(
    refused: MemoryClient,
) -> None:
    for call in calls_that_raise(refused):
        with pytest.raises(MemoryUnavailableError) as raised:
            await call
        assert isinstance(raised.value, MemoryServiceError)  # one tree to catch


async def test_prefetch_when_redis_refuses_is_degraded_and_says_why(
    refused: MemoryClient,
) -> None:
    ctx = await refused.prefetch("u1", "a1", "t1", deadline=0.5)
    assert (ctx.degraded, ctx.text) == (True, "")
    assert set(ctx.skipped) == {"service", "builtin"}


async def test_call_tool_when_redis_refuses_for_good_says_nothing_was_saved_and_not_to_retry(
    misconfigured: MemoryClient,
) -> None:
    args = {"action": "add", "target": "memory", "content": "a fact"}
    with capture_logs() as logs:
        result = await misconfigured.call_tool("u1", "a1", "t1", "memory", args)
    assert (result["success"], result["retryable"]) == (False, False)
    assert "Nothing was saved" in result["error"]
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["memory_misconfigured"]


async def test_other_calls_raise_misconfigured_when_redis_refuses_for_good(
    misconfigured: MemoryClient,
) -> None:
    for call in calls_that_raise(misconfigured):
        with pytest.raises(MemoryMisconfiguredError) as raised:
            await call
        assert isinstance(raised.value, MemoryServiceError)  # one tree to catch
        assert not raised.value.retryable


async def test_prefetch_when_redis_refuses_for_good_is_degraded_and_says_why(
    misconfigured: MemoryClient,
) -> None:
    ctx = await misconfigured.prefetch("u1", "a1", "t1", deadline=0.5)
    assert (ctx.degraded, ctx.text) == (True, "")
    assert ctx.skipped["service"].startswith("Redis refuses memsvc")


async def test_a_client_redis_refuses_its_replies_for_good_sends_no_request(
    settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ACL without BLMPOP: a request sent could never hear its answer (a write would be
    answered pending, applied or not), so none is sent, and none is said to be saved."""
    redis = fakeredis.aioredis.FakeRedis()

    async def refused(*_: Any, **__: Any) -> Any:
        raise NoPermissionError("this user has no permissions to run the 'blmpop' command")

    monkeypatch.setattr(redis, "blmpop", refused)
    published: list[Any] = []
    with capture_logs() as logs:
        async with MemoryClient(settings=settings, redis=redis) as mem:
            publish = mem.bus.publish

            async def counted(event: Any, **kwargs: Any) -> str:
                published.append(event)
                return await publish(event, **kwargs)

            monkeypatch.setattr(mem.bus, "publish", counted)

            async def refusal_heard() -> bool:
                return any(e["event"] == "client_inbox_refused" for e in logs)

            await until(refusal_heard)
            add = {"action": "add", "target": "memory", "content": "a fact"}
            result = await mem.call_tool("u1", "a1", "t1", "memory", add)
            with pytest.raises(MemoryMisconfiguredError):
                await mem.tool_schemas("u1", "a1")
            ctx = await mem.prefetch("u1", "a1", "t1", deadline=0.5)
            await mem.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a")
    assert (result["success"], result["retryable"]) == (False, False)
    assert ctx.degraded and ctx.skipped["service"].startswith("Redis refuses memsvc")
    assert [event.type for event in published] == ["sync_turn"]  # it waits for no reply
    await redis.aclose()


async def test_calls_waiting_when_redis_starts_refusing_their_replies_end_then_and_say_so(
    settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ACL that loses BLMPOP while requests wait: each ends when the refusal is heard,
    not at its deadline, and says what became of it (a write is queued, another call may
    have run)."""
    redis = fakeredis.aioredis.FakeRedis()
    revoked = asyncio.Event()

    async def refused_once_revoked(*_: Any, **__: Any) -> Any:
        await revoked.wait()
        raise NoPermissionError("this user has no permissions to run the 'blmpop' command")

    monkeypatch.setattr(redis, "blmpop", refused_once_revoked)
    wait = 120.0  # far past what the test waits for: a call ending is the refusal's doing
    add = {"action": "add", "target": "memory", "content": "a fact"}
    async with MemoryClient(settings=settings, redis=redis) as mem:
        started = asyncio.get_running_loop().time()
        calls = asyncio.gather(
            mem.prefetch("u1", "a1", "t1", deadline=wait),
            mem.call_tool("u1", "a1", "t1", "memory", add, deadline=wait),
            mem.call_tool("u1", "a1", "t1", "hindsight_retain", {"content": "x"}, deadline=wait),
            mem.tool_schemas("u1", "a1", deadline=wait),
            mem.replace_memory_entry("u1", "a1", "memory", 0, "y", expect="0" * 12, deadline=wait),
            return_exceptions=True,
        )

        async def all_sent() -> bool:
            return int(await redis.xlen(mem.settings.key_prefix + ":events")) == 5

        await until(all_sent)
        revoked.set()
        prefetched, added, retained, schemas, replaced = await asyncio.wait_for(calls, 60)
        waited = asyncio.get_running_loop().time() - started
    assert waited < wait / 2
    assert prefetched.degraded and prefetched.skipped["service"].startswith("Redis refuses memsvc")
    assert prefetched.skipped["service"].endswith("(the request was sent)")
    assert added["pending"] and added["event_id"]
    assert added["error"].startswith("Memory cannot read its answer"), added
    assert "queued" in added["error"]
    assert "pending" not in retained and retained["event_id"], retained
    assert retained["error"].startswith("Memory cannot read its answer"), retained
    assert isinstance(schemas, MemoryMisconfiguredError) and schemas.sent
    assert "after the request was sent" in str(schemas)
    assert isinstance(replaced, WritePendingError) and replaced.event_id
    assert "queued" in str(replaced)
    await redis.aclose()


async def test_the_inbox_listener_backs_off_while_redis_is_down_and_says_when_it_is_back(
    settings: ServiceSettings,
) -> None:
    server = fakeredis.FakeServer()
    redis = fakeredis.aioredis.FakeRedis(server=server)
    server.connected = False
    with capture_logs() as logs:
        async with MemoryClient(settings=settings, redis=redis):

            def failures() -> list[dict[str, Any]]:
                return [e for e in logs if e["event"] == "client_inbox_unavailable"]

            async def two_failures() -> bool:
                return len(failures()) >= 2

            await until(two_failures)
            # each wait doubles from 0.25-0.5 s, with jitter
            for entry in failures()[:2]:
                ceiling = 0.25 * 2 ** entry["failures"]
                assert ceiling / 2 <= entry["retry_in"] <= ceiling, failures()
            server.connected = True

            async def back() -> bool:
                return any(e["event"] == "redis_reachable_again" for e in logs)

            await until(back)
    await redis.aclose()


async def test_a_request_redis_takes_wakes_the_inbox_listener_from_its_backoff(
    settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis is back once it takes a request: the reply is read then, not after what is
    left of a backoff that grew through the outage."""

    def slow(event: str, **fields: Any) -> Outage:  # waits of five to ten minutes
        return Outage(event, **{**fields, "base": 600.0, "cap": 600.0})

    monkeypatch.setattr(client_module, "Outage", slow)
    redis = fakeredis.aioredis.FakeRedis()
    read = redis.blmpop
    down = True

    async def blmpop(*args: Any, **kwargs: Any) -> Any:
        if down:
            raise RedisConnectionError("Connection refused")
        return await read(*args, **kwargs)

    monkeypatch.setattr(redis, "blmpop", blmpop)
    with capture_logs() as logs:
        async with MemoryClient(settings=settings, redis=redis) as mem:

            async def backing_off() -> bool:
                return any(e["event"] == "client_inbox_unavailable" for e in logs)

            await until(backing_off)  # a ten-minute wait has begun
            down = False
            replying = asyncio.ensure_future(mem.tool_schemas("u1", "a1", deadline=60))

            async def asked() -> bool:
                return int(await redis.xlen(mem.settings.key_prefix + ":events")) == 1

            await until(asked)
            ((_, fields),) = await redis.xrange(mem.settings.key_prefix + ":events")
            event = json.loads(fields[b"e"])
            await redis.rpush(
                event["reply_to"], json.dumps({"id": event["id"], "ok": True, "schemas": []})
            )
            assert await asyncio.wait_for(replying, 60) == []
    await redis.aclose()


class _LosesOneCancel(fakeredis.FakeAsyncRedis):
    """A Redis whose blocked pop returns normally once when cancelled, as redis-py's can
    on Python 3.11: the task goes on with ``cancelling() == 1`` and no pending cancel."""

    lost = calls = 0

    async def blmpop(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        try:
            return await super().blmpop(*args, **kwargs)
        except asyncio.CancelledError:
            if self.lost:
                raise
            self.lost += 1
            return None


async def test_close_ends_the_listener_even_when_a_cancellation_is_lost(
    settings: ServiceSettings,
) -> None:
    redis = _LosesOneCancel()
    mem = MemoryClient(settings=settings, redis=redis)
    await mem.__aenter__()
    await asyncio.sleep(0.1)  # the listener is blocked in its pop
    closing = asyncio.create_task(mem.aclose())
    # generous: a close that waits on a listener nobody stops never ends (asyncio.wait
    # does not cancel it, which would stop the listener by a second cancellation)
    await asyncio.wait({closing}, timeout=10)
    assert closing.done() and redis.lost == 1
    calls = redis.calls
    await asyncio.sleep(2.5)  # a listener still running would have polled again (1 s pops)
    assert redis.calls == calls


async def test_a_client_used_outside_its_block_says_so_for_every_call(
    settings: ServiceSettings,
) -> None:
    mem = MemoryClient(settings=settings, redis=fakeredis.FakeAsyncRedis())

    def calls() -> list[Any]:
        return [
            mem.prefetch("u1", "a1", "t1"),
            mem.queue_prefetch("u1", "a1", "t1"),
            mem.call_tool("u1", "a1", "t1", "memory", {"action": "add", "content": "x"}),
            mem.tool_schemas("u1", "a1"),
            mem.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a"),
            mem.session_switch("u1", "a1", "t2"),
            mem.reload_snapshot("u1", "a1", "t1"),
            mem.write_outcome("u1", "e" * 32),
        ]

    for call in calls():
        with pytest.raises(ClientStateError, match="async with"):
            await call
    async with mem:
        pass
    for call in calls():
        with pytest.raises(ClientStateError, match="closed"):
            await call
    with pytest.raises(ClientStateError, match="closed"):
        await mem.__aenter__()


async def test_the_inbox_listener_waits_out_an_error_reply_as_it_does_an_outage(
    settings: ServiceSettings,
) -> None:
    """An ACL without BLMPOP, or snapshots failing: the listener ended on the first error
    reply, and every later reply went unheard."""

    class Refusing(fakeredis.FakeAsyncRedis):
        refusals = 2

        async def blmpop(self, *args: Any, **kwargs: Any) -> Any:
            if self.refusals:
                self.refusals -= 1
                raise NoPermissionError("this user has no permissions to run the 'blmpop' command")
            return await super().blmpop(*args, **kwargs)

    redis = Refusing()
    with capture_logs() as logs:
        async with MemoryClient(settings=settings, redis=redis) as mem:

            async def back() -> bool:  # an error reply is not Redis being away: "recovered"
                return any(e["event"] == "recovered" for e in logs)

            await until(back)
            assert mem._listener is not None and not mem._listener.done()
    assert [e["failures"] for e in logs if e["event"] == "client_inbox_unavailable"] == [1, 2]
    (recovered,) = [e for e in logs if e["event"] == "recovered"]
    assert recovered["after"] == "client_inbox_unavailable"
    await redis.aclose()


def test_an_agent_process_that_configured_no_logging_keeps_its_stdout_clean() -> None:
    """An agent may speak a protocol on stdout (an MCP server over stdio): structlog left
    unconfigured printed the client's outage warnings there."""
    script = """
import asyncio
from memsvc.client import MemoryClient
from memsvc.settings import ServiceSettings

async def main():
    settings = ServiceSettings(redis_url="redis://127.0.0.1:{port}/0", key_prefix="svc")
    async with MemoryClient(settings=settings) as mem:
        await mem.prefetch("u1", "a1", "t1", deadline=0.5)
        await asyncio.sleep(1.0)  # the inbox listener has failed and said so by now

asyncio.run(main())
""".replace("{port}", str(free_port()))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == ""
    assert "client_inbox_unavailable" in done.stderr
