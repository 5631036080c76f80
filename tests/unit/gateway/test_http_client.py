"""``MemoryHTTPClient``: ``MemoryClient``'s interface, results and errors, over the gateway."""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from memsvc.client import MemoryClient
from memsvc.errors import (
    ConflictError,
    InvalidInputError,
    MemoryUnavailableError,
    NotFoundError,
    PermissionDeniedError,
    WriteRefusedError,
)
from memsvc.gateway.http_client import MemoryHTTPClient
from memsvc.store.memfile import entry_hash
from tests.unit.gateway.conftest import Gateway


@pytest.fixture
async def remote(gateway: Gateway) -> AsyncIterator[MemoryHTTPClient]:
    transport = httpx.ASGITransport(app=gateway.app)
    async with MemoryHTTPClient(
        "http://gateway", gateway.tokens["alice"], transport=transport
    ) as client:
        yield client


def calls(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.iscoroutinefunction)
        if not name.startswith("_") and name not in ("aclose",)
    }


def test_it_has_every_call_of_the_memory_client_with_the_same_parameters() -> None:
    local, remote = calls(MemoryClient), calls(MemoryHTTPClient)
    assert set(local) == set(remote)
    for name, signature in local.items():
        assert list(signature.parameters.values()) == list(remote[name].parameters.values()), name


def test_it_is_importable_from_the_client_module() -> None:
    from memsvc.client import MemoryHTTPClient as exported

    assert exported is MemoryHTTPClient


async def test_the_person_calls_answer_as_the_memory_client_does(
    gateway: Gateway, remote: MemoryHTTPClient
) -> None:
    local = gateway.service.client
    added = await remote.add_memory_entry("alice", "a1", "user", "Lives in Paris")
    assert added == await local.add_memory_entry("carol", "a1", "user", "Lives in Paris")
    assert await remote.get_memory("alice", "a1") == await local.get_memory("alice", "a1")
    stale = entry_hash("Lives in Rome")
    for client in (remote, local):
        with pytest.raises(ConflictError) as conflict:
            await client.remove_memory_entry("alice", "a1", "user", 0, expect=stale)
        assert conflict.value.detail["current_entries"] == ["Lives in Paris"]
        with pytest.raises(WriteRefusedError) as refused:
            await client.add_memory_entry("alice", "a1", "user", "x" * 5000)
        assert "exceed the limit" in refused.value.detail["error"]
        with pytest.raises(InvalidInputError, match=r"security\.scan_content"):
            await client.update_memory_config("alice", {"security": {"scan_content": False}})
        with pytest.raises(NotFoundError):
            await client.search_memory("alice", "a1", "tea")
    replaced = await remote.replace_memory_entry(
        "alice", "a1", "user", 0, "Lives in Rome", expect=entry_hash("Lives in Paris")
    )
    assert replaced["replaced"] == "Lives in Paris"
    config = await remote.reset_memory_config("alice", "injection.enabled")
    assert config == await local.get_memory_config("alice")
    assert (await remote.memory_status("alice"))["providers"] == ["builtin"]
    page = await remote.read_log("alice", limit=1, event_type="config_read")
    assert page == await local.read_log("alice", limit=1, event_type="config_read")


async def test_explain_answers_as_the_memory_client_does(
    gateway: Gateway, remote: MemoryHTTPClient
) -> None:
    local = gateway.service.client
    args = {"action": "add", "target": "memory", "content": "Build with uv"}
    assert (await remote.call_tool("alice", "a1", "t1", "memory", args))["success"]
    for agent_id in ("a1", None):
        found = await remote.explain_memory("alice", "uv", agent_id=agent_id)
        same = await local.explain_memory("alice", "uv", agent_id=agent_id)
        assert found["log"]["records"] + 1 == same["log"]["records"]  # found's own record
        assert {**found, "log": None} == {**same, "log": None}
        (entry,) = found["entries"]
        assert entry["file"] == "agents/a1/MEMORY.md" and entry["now"] == "Build with uv"
        assert found["agent_id"] == agent_id
    for client in (remote, local):
        with pytest.raises(InvalidInputError):
            await client.explain_memory("alice", " ")
    with pytest.raises(PermissionDeniedError):
        await remote.explain_memory("bob", "uv")


async def test_the_agent_calls_answer_as_the_memory_client_does(
    remote: MemoryHTTPClient,
) -> None:
    args = {"action": "add", "target": "memory", "content": "Build with uv"}
    result = await remote.call_tool("alice", "a1", "t1", "memory", args)
    assert result["success"] is True
    invalid = await remote.call_tool("alice", "a1", "t1", "memory", {"action": "add", "x": 1})
    assert invalid["success"] is False and "Invalid memory arguments" in invalid["error"]
    ctx = await remote.prefetch("alice", "a1", "t1", "build")
    assert "Build with uv" in ctx.snapshot and not ctx.degraded and ctx.scrubber() is not None
    assert [s["name"] for s in await remote.tool_schemas("alice", "a1")] == ["memory"]
    assert "Build with uv" in await remote.reload_snapshot("alice", "a1", "t1")
    await remote.queue_prefetch("alice", "a1", "t1", "next")
    assert (
        len(await remote.sync_turn("alice", "a1", "t1", user_content="q", assistant_content="a"))
        == 32
    )
    assert len(await remote.session_switch("alice", "a1", "t2", parent_thread_id="t1")) == 32
    assert await remote.write_outcome("alice", "0123456789abcdef") is None


async def test_a_memory_write_without_its_mirror_says_so_to_the_worker(
    gateway: Gateway, remote: MemoryHTTPClient
) -> None:
    args = {"action": "add", "target": "memory", "content": "Kept out of Hindsight"}
    assert (await remote.call_tool("alice", "a1", "t1", "memory", args, mirror=False))["success"]
    args = {"action": "add", "target": "memory", "content": "Mirrored as ever"}
    assert (await remote.call_tool("alice", "a1", "t1", "memory", args))["success"]
    writes = [e for e in await gateway.service.log() if e.type == "memory_write"]
    assert [(e.event["payload"]["mirror"], e.detail.get("mirror")) for e in writes] == [
        (False, False),
        (True, None),
    ]


async def test_another_users_id_is_refused_as_the_gateway_refuses_it(
    remote: MemoryHTTPClient,
) -> None:
    with pytest.raises(PermissionDeniedError):
        await remote.get_memory("bob")
    with pytest.raises(PermissionDeniedError):
        await remote.sync_turn("bob", "a1", "t1", user_content="q", assistant_content="a")


async def test_a_gateway_that_is_down_never_fails_a_turn() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with MemoryHTTPClient(
        "http://down", "token", transport=httpx.MockTransport(refuse)
    ) as remote:
        started = time.monotonic()
        ctx = await remote.prefetch("alice", "a1", "t1", deadline=0.5)
        assert ctx.degraded and ctx.text == "" and "unreachable" in ctx.skipped["service"]
        assert time.monotonic() - started < 30  # generous: bounded, not a timing claim
        result = await remote.call_tool("alice", "a1", "t1", "memory", {"action": "add"})
        assert result["success"] is False and result["retryable"] is True
        with pytest.raises(MemoryUnavailableError):
            await remote.sync_turn("alice", "a1", "t1", user_content="q", assistant_content="a")
        with pytest.raises(MemoryUnavailableError):
            await remote.get_memory("alice")
