"""A write answered as queued while Redis did not confirm its publish is never lost."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from structlog.testing import capture_logs

from memsvc.client import MemoryClient
from memsvc.errors import MemoryUnavailableError, WritePendingError
from memsvc.events import MemoryWriteEvent, MemoryWritePayload, SyncTurnEvent, stamp
from memsvc.outbox import Outbox
from memsvc.redisconn import SentThenLost
from tests.conftest import until
from tests.unit.conftest import Service

ADD = {"action": "add", "target": "user", "content": "Name: Ada"}

Publish = Callable[..., Awaitable[str]]


def first_publish(
    monkeypatch: pytest.MonkeyPatch,
    client: MemoryClient,
    instead: Callable[[Publish, Any], Any],
    *,
    every: bool = False,
) -> list[str]:
    """The client's first publish of a memory write (``every``: each one) goes through
    ``instead(real, event)``; the others through Redis. Returns the ids of the writes
    published, in order."""
    bus = client.bus
    real = bus.publish
    published: list[str] = []

    async def publish(event: Any, **kwargs: Any) -> str:
        if isinstance(event, MemoryWriteEvent):
            published.append(event.id)
            if every or len(published) == 1:
                return await instead(real, event)  # type: ignore[no-any-return]
        return await real(event, **kwargs)

    monkeypatch.setattr(bus, "publish", publish)
    return published


async def applied(service: Service, event_id: str) -> bool:
    outcome = await service.client.write_outcome("u1", event_id)
    return outcome is not None and outcome.get("success") is True


async def user_md(service: Service) -> bytes:
    await service.settled()  # renamed: a write is answered once committed
    return (service.settings.data_dir / "users/u1/USER.md").read_bytes()


async def test_a_write_that_never_reached_redis_is_published_again(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection its publish waited for was still being opened when the caller's
    deadline came, and failed later: nothing reached Redis, and the caller was told the
    write is queued. It is published again, and applied."""

    async def never_sent(real: Publish, event: Any) -> str:
        await asyncio.sleep(0.5)
        raise RedisConnectionError("Timeout connecting to server")

    published = first_publish(monkeypatch, service.client, never_sent)
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=0.2)
    assert result["pending"] is True and "do not repeat it" in result["error"]
    await until(lambda: applied(service, result["event_id"]))
    assert published == [result["event_id"]] * 2
    assert await user_md(service) == b"Name: Ada"


async def test_a_write_that_did_reach_redis_unconfirmed_is_applied_once(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent, and its confirmation lost: published again, it arrives twice and counts once."""

    async def sent_unconfirmed(real: Publish, event: Any) -> str:
        await real(event)
        raise RedisTimeoutError("Timeout reading from socket")

    published = first_publish(monkeypatch, service.client, sent_unconfirmed)
    # the first copy landed: its reply comes within the deadline
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=30.0)
    assert result["success"] is True, result

    async def both_logged() -> bool:
        return len([e for e in await service.log() if e.event_id == published[0]]) == 2

    await until(both_logged)
    assert published == [published[0]] * 2
    assert await user_md(service) == b"Name: Ada"
    records = [e for e in await service.log() if e.event_id == published[0]]
    assert [r.detail["result"] for r in records] == [records[0].detail["result"]] * 2


async def test_a_write_whose_connection_broke_after_sending_is_never_called_unsaved(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The publish was written and the connection lost before Redis confirmed it (a
    proxy dropped the reply): the write landed, and the caller is not told nothing was
    saved. It is kept and published again, and counts once."""

    async def sent_then_lost(real: Publish, event: Any) -> str:
        await real(event)
        raise SentThenLost("Connection closed by server.")

    published = first_publish(monkeypatch, service.client, sent_then_lost)
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=30.0)
    assert result["success"] is True, result  # the copy that landed was answered

    async def both_logged() -> bool:
        return len([e for e in await service.log() if e.event_id == published[0]]) == 2

    await until(both_logged)
    assert published == [published[0]] * 2
    assert await user_md(service) == b"Name: Ada"


async def test_a_request_that_is_no_write_hears_a_lost_connection_at_once(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a write is worth its deadline's wait for a reply that may come: a read is
    answered "unavailable" at once, and nothing is kept."""

    async def lost(event: Any, **_: Any) -> str:
        raise SentThenLost("Connection closed by server.")

    monkeypatch.setattr(service.client.bus, "publish", lost)
    with pytest.raises(MemoryUnavailableError, match="Redis unavailable"):
        # a wait for the reply would outlast this bound (the deadline is far beyond it)
        await asyncio.wait_for(service.client.get_memory("u1", deadline=600.0), 60.0)
    # another tool's call (a retain stores a fact) is not published again, nor called unsaved
    retain = {"content": "The staging DB is pg-17"}
    result = await service.client.call_tool("u1", "a1", "t1", "hindsight_retain", retain)
    assert result["success"] is False and "retryable" not in result
    assert "may still be done" in result["error"] and "Nothing was saved" not in result["error"]
    assert not service.client._outbox.waiting


async def test_a_write_refused_at_once_is_not_kept(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis refused the connection: the caller hears nothing was saved, and nothing is
    published behind its back (it may call again)."""

    async def refused(real: Publish, event: Any) -> str:
        raise RedisConnectionError("Connection refused")

    published = first_publish(monkeypatch, service.client, refused)
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD)
    assert result["success"] is False and "pending" not in result
    await asyncio.sleep(1.0)  # a retry would have come by now (the first waits 0.25 s at most)
    assert len(published) == 1 and not service.client._outbox.waiting


async def test_a_client_closing_with_a_write_redis_never_took_names_it(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_up: list[str] = []

    async def never(real: Publish, event: Any) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            given_up.append(event.id)
            raise
        raise AssertionError("unreachable")

    first_publish(monkeypatch, service.client, never, every=True)
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=0.2)
    assert result["pending"] is True
    assert service.client._outbox.waiting == [result["event_id"]]
    with capture_logs() as logs:
        await service.client.aclose()
    (lost,) = [line for line in logs if line["event"] == "write_not_confirmed"]
    assert lost["event_id"] == result["event_id"]
    assert not service.client._outbox.waiting
    await asyncio.sleep(0)
    assert given_up and set(given_up) == {result["event_id"]}  # no attempt left running


async def test_a_write_found_unconfirmed_as_the_client_closes_is_named_not_kept(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call still in flight when ``aclose`` begins: nothing is left trying after it."""

    async def slow(real: Publish, event: Any) -> str:
        await asyncio.sleep(0.5)
        raise RedisConnectionError("Timeout connecting to server")

    first_publish(monkeypatch, service.client, slow)
    call = asyncio.create_task(
        service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=0.3)
    )
    await asyncio.sleep(0.05)
    with capture_logs() as logs:
        await service.client.aclose()  # nothing kept yet: returns at once
        result = await call
    assert result["pending"] is True
    (lost,) = [line for line in logs if line["event"] == "write_not_confirmed"]
    assert lost["event_id"] == result["event_id"]
    assert not service.client._outbox.waiting


async def test_a_caller_cancelled_before_its_answer_leaves_nothing_kept(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not told its write is queued, the caller may do it again: nothing goes on behind it."""
    started, released = asyncio.Event(), asyncio.Event()

    async def slow(real: Publish, event: Any) -> str:
        started.set()
        await released.wait()  # until the caller is gone, however busy the machine
        return await real(event)

    published = first_publish(monkeypatch, service.client, slow)
    call = asyncio.create_task(service.client.call_tool("u1", "a1", "t1", "memory", ADD))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    released.set()
    await asyncio.sleep(1.0)  # past when a publish still under way would have landed
    assert len(published) == 1 and not service.client._outbox.waiting
    assert not (service.settings.data_dir / "users/u1/USER.md").exists()


async def test_a_caller_cancelled_while_it_waits_for_the_reply_leaves_nothing_kept(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past Redis' timeout the write was kept, and the caller waits on for its reply: a
    cancellation then takes it back out of the outbox."""

    async def never(real: Publish, event: Any) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    published = first_publish(monkeypatch, service.client, never)
    seconds = service.settings.redis_timeout_seconds
    call = asyncio.create_task(
        service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=seconds + 30)
    )

    async def kept() -> bool:
        return bool(service.client._outbox.waiting)

    await until(kept)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    async def dropped() -> bool:
        return not service.client._outbox.waiting

    await until(dropped)
    await asyncio.sleep(1.0)  # past the outbox's first pause: no second copy comes
    assert len(published) == 1
    assert not (service.settings.data_dir / "users/u1/USER.md").exists()


async def test_closing_a_client_that_never_opened_fully_raises_nothing_new(
    service: Service, tmp_path: Path
) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    client = MemoryClient(settings=service.settings.model_copy(update={"data_dir": a_file}))
    with pytest.raises(OSError):
        await client.__aenter__()
    await client.aclose()  # cleanup after the failed open: the open's error is the one seen


async def test_a_publish_given_up_on_that_fails_later_leaves_no_unread_error(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy waited for past the outbox's timeout is replaced by another; when it fails
    later, its error is read, not printed by asyncio as never retrieved on every retry."""
    loop = asyncio.get_running_loop()
    unread: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: unread.append(context))

    async def fails_late(real: Publish, event: Any) -> str:
        await asyncio.sleep(1.0)
        raise RedisTimeoutError("Timeout reading from socket")

    published = first_publish(monkeypatch, service.client, fails_late)
    monkeypatch.setattr(service.client._outbox, "_timeout", 0.2)
    try:
        result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=0.1)
        assert result["pending"] is True
        await until(lambda: applied(service, result["event_id"]))
        await asyncio.sleep(1.5)  # the first copy has failed by now
        gc.collect()
        assert len(published) >= 2
        assert unread == []
    finally:
        loop.set_exception_handler(None)


@pytest.mark.parametrize("landed", [True, False], ids=["sent, unconfirmed", "never sent"])
async def test_a_turn_redis_did_not_confirm_is_kept_and_numbered_once(
    service: Service, monkeypatch: pytest.MonkeyPatch, landed: bool
) -> None:
    """A ``sync_turn`` whose publish may have landed is not called unsaved (a caller told
    "retry later" would record the turn twice): it is pending, published again with its
    thread's turn queue, and numbered once."""
    bus = service.client.bus
    real = bus.publish
    sent: list[tuple[str, str | None]] = []

    async def publish(event: Any, **kwargs: Any) -> str:
        if isinstance(event, SyncTurnEvent):
            sent.append((event.id, kwargs.get("order")))
            if len(sent) == 1:
                if landed:
                    await real(event, **kwargs)
                    raise RedisTimeoutError("Timeout reading from socket")
                raise SentThenLost("Connection closed by server.")  # as if it may have
        return await real(event, **kwargs)

    monkeypatch.setattr(bus, "publish", publish)
    turn = {"user_content": "Q1", "assistant_content": "A1"}
    with pytest.raises(WritePendingError, match="do not send it again") as pending:
        await service.client.sync_turn("u1", "a1", "t1", **turn)
    first = pending.value.event_id

    async def published() -> bool:
        return not service.client._outbox.waiting

    await until(published)
    second = await service.client.sync_turn(
        "u1", "a1", "t1", user_content="Q2", assistant_content="A2"
    )
    assert [event_id for event_id, _ in sent] == [first, first, second]
    assert sent[0][1] is not None and sent[1][1] == sent[0][1]  # sent again to its queue

    async def numbered() -> dict[str, set[int]]:
        turns: dict[str, set[int]] = {}
        for entry in await service.log():
            if entry.type == "sync_turn":
                turns.setdefault(entry.event_id, set()).add(entry.detail["turn_index"])
        return turns

    await until(lambda: _has(numbered, second))
    assert await numbered() == {first: {1}, second: {2}}


async def _has(numbered: Callable[[], Awaitable[dict[str, set[int]]]], event_id: str) -> bool:
    return event_id in await numbered()


async def test_turns_of_two_users_or_threads_under_one_id_are_each_kept(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's id may be its caller's own, and one gateway's client serves every user:
    the same id pending for alice, for bob and for another thread of alice's is three turns
    kept, each published and numbered in its own thread."""
    bus = service.client.bus
    real = bus.publish
    stalled = True

    async def publish(event: Any, **kwargs: Any) -> str:
        if isinstance(event, SyncTurnEvent) and stalled:
            raise SentThenLost("Connection closed by server.")  # may have landed, or not
        return await real(event, **kwargs)

    monkeypatch.setattr(bus, "publish", publish)
    turn = {"user_content": "Q", "assistant_content": "A", "event_id": "turn-0001"}
    for user, thread in (("alice", "t1"), ("bob", "t1"), ("alice", "t2")):
        with pytest.raises(WritePendingError):
            await service.client.sync_turn(user, "a1", thread, **turn)
    assert service.client._outbox.waiting == ["turn-0001"] * 3
    stalled = False

    async def logged() -> list[tuple[str, str, int]]:
        return sorted(
            (e.user_id, e.thread_id, e.detail["turn_index"])
            for e in await service.log()
            if e.type == "sync_turn"
        )

    async def all_three() -> bool:
        return len(await logged()) >= 3

    await until(all_three)
    assert await logged() == [("alice", "t1", 1), ("alice", "t2", 1), ("bob", "t1", 1)]
    assert service.client.unconfirmed == []  # published, and none given up


async def test_a_write_its_caller_gave_up_on_while_the_client_closes_is_not_listed(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``unconfirmed`` lists the writes answered as queued and given up at close; one whose
    caller was cancelled before it was answered never was queued for anyone."""
    outbox = Outbox(service.client.bus, timeout=5.0)
    stalled: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    event = MemoryWriteEvent(
        **stamp(), user_id="u1", agent_id="a1", thread_id="t1", payload=MemoryWritePayload(args=ADD)
    )
    assert outbox.keep(event, stalled)
    closing = asyncio.create_task(outbox.close(grace=0.5))
    await asyncio.sleep(0.1)
    outbox.drop(event)  # its caller was cancelled meanwhile
    await closing
    assert outbox.given_up == [] and not outbox._dropped
    unstarted = MemoryWriteEvent(
        **stamp(), user_id="u1", agent_id="a1", thread_id="t1", payload=MemoryWritePayload(args=ADD)
    )
    fresh = Outbox(service.client.bus, timeout=5.0)
    assert fresh.keep(unstarted, asyncio.get_running_loop().create_future())
    fresh.drop(unstarted)  # before its keeper ever ran
    await asyncio.sleep(0.05)
    assert not fresh.waiting and not fresh._dropped  # nothing left behind
    kept = MemoryWriteEvent(
        **stamp(), user_id="u1", agent_id="a1", thread_id="t1", payload=MemoryWritePayload(args=ADD)
    )
    late = Outbox(service.client.bus, timeout=5.0)
    assert late.keep(kept, asyncio.get_running_loop().create_future())
    await late.close(grace=0.1)
    assert late.given_up == [kept.id]
