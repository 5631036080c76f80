"""A write answered as queued while Redis did not confirm its publish is never lost."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from structlog.testing import capture_logs

from memsvc.client import MemoryClient
from memsvc.events import MemoryWriteEvent
from tests.conftest import until
from tests.unit.conftest import Service

ADD = {"action": "add", "target": "user", "content": "Name: Ada"}

Publish = Callable[..., Awaitable[str]]


def first_publish(
    monkeypatch: pytest.MonkeyPatch, client: MemoryClient, instead: Callable[[Publish, Any], Any]
) -> list[str]:
    """The client's first publish of a memory write goes through ``instead(real, event)``;
    the others through Redis. Returns the ids of the writes published, in order."""
    bus = client.bus
    real = bus.publish
    published: list[str] = []

    async def publish(event: Any, **kwargs: Any) -> str:
        if isinstance(event, MemoryWriteEvent):
            published.append(event.id)
            if len(published) == 1:
                return await instead(real, event)  # type: ignore[no-any-return]
        return await real(event, **kwargs)

    monkeypatch.setattr(bus, "publish", publish)
    return published


async def applied(service: Service, event_id: str) -> bool:
    outcome = await service.client.write_outcome("u1", event_id)
    return outcome is not None and outcome.get("success") is True


async def user_md(service: Service) -> bytes:
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
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=1.0)

    async def both_logged() -> bool:
        return len([e for e in await service.log() if e.event_id == published[0]]) == 2

    await until(both_logged)
    assert published == [published[0]] * 2
    assert await user_md(service) == b"Name: Ada"
    records = [e for e in await service.log() if e.event_id == published[0]]
    assert [r.detail["result"] for r in records] == [records[0].detail["result"]] * 2
    assert result["success"] is True or result.get("pending") is True


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
    async def never(real: Publish, event: Any) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    first_publish(monkeypatch, service.client, never)
    result = await service.client.call_tool("u1", "a1", "t1", "memory", ADD, deadline=0.2)
    assert result["pending"] is True
    assert service.client._outbox.waiting == [result["event_id"]]
    with capture_logs() as logs:
        await service.client.aclose()
    (lost,) = [line for line in logs if line["event"] == "writes_not_published"]
    assert lost["event_ids"] == [result["event_id"]]
    assert not service.client._outbox.waiting
