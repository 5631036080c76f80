"""``MemoryHTTPClient``: ``MemoryClient``'s interface, results and errors, over the gateway."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import time
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from memsvc.client import MemoryClient
from memsvc.errors import (
    ClientStateError,
    ConflictError,
    InvalidInputError,
    MemoryUnavailableError,
    NotFoundError,
    PermissionDeniedError,
    WriteRefusedError,
)
from memsvc.events import MemoryWritePayload
from memsvc.gateway import http_client
from memsvc.gateway.http_client import MemoryHTTPClient
from memsvc.ids import InvalidIdError
from memsvc.store.memfile import entry_hash
from tests.conftest import free_port, until
from tests.unit.gateway.conftest import Gateway, read_request, served, serving

# A session, connector or connection left open warns when it is collected: here that fails
# the test it surfaced in (and test_a_closed_client_leaves_nothing_open checks it at once).
pytestmark = [
    pytest.mark.filterwarnings("error::ResourceWarning"),
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture
async def server(gateway: Gateway) -> AsyncIterator[tuple[str, uvicorn.Server]]:
    """The gateway served by uvicorn on a loopback port: its base URL and the server."""
    async with served(gateway.app) as url_and_server:
        yield url_and_server


@pytest.fixture
async def remote(
    gateway: Gateway, server: tuple[str, uvicorn.Server]
) -> AsyncIterator[MemoryHTTPClient]:
    async with MemoryHTTPClient(server[0], gateway.tokens["alice"]) as client:
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
    sent = [MemoryWritePayload.model_validate(e.event["payload"]).mirror for e in writes]
    assert list(zip(sent, [e.detail.get("mirror") for e in writes], strict=True)) == [
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
    # also where a slow or absent gateway gives a result: a refusal is no outage to retry
    args = {"action": "add", "target": "memory", "content": "x"}
    with pytest.raises(PermissionDeniedError):
        await remote.call_tool("bob", "a1", "t1", "memory", args)
    with pytest.raises(PermissionDeniedError):
        await remote.prefetch("bob", "a1", "t1")


async def test_a_deadline_longer_than_the_gateway_takes_is_still_a_valid_call(
    remote: MemoryHTTPClient,
) -> None:
    """MemoryClient takes any deadline; the gateway caps what it is given, so the client
    hands it at most that and waits as long as it was asked to."""
    args = {"action": "add", "target": "memory", "content": "Patient"}
    result = await remote.call_tool("alice", "a1", "t1", "memory", args, deadline=90)
    assert result["success"] is True, result
    ctx = await remote.prefetch("alice", "a1", "t1", deadline=90)
    assert not ctx.degraded and "Patient" in ctx.snapshot


async def test_a_gateway_that_is_down_never_fails_a_turn() -> None:
    async with MemoryHTTPClient(f"http://127.0.0.1:{free_port()}", "token") as remote:
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


async def test_a_gateway_that_never_answers_is_given_up_on_at_the_deadline() -> None:
    """Connections accepted, requests read, nothing answered: every call ends at its deadline."""
    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read()  # until the client gives up and closes

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with MemoryHTTPClient(f"http://127.0.0.1:{port}", "token") as remote:
            started = time.monotonic()
            ctx = await remote.prefetch("alice", "a1", "t1", deadline=0.5)
            assert ctx.degraded and "did not answer within 0.5s" in ctx.skipped["service"]
            args = {"action": "add", "target": "memory", "content": "x"}
            result = await remote.call_tool("alice", "a1", "t1", "memory", args, deadline=0.5)
            assert result["success"] is False and result["pending"] is True
            with pytest.raises(MemoryUnavailableError, match="did not answer"):
                await remote.get_memory("alice", deadline=0.5)
            assert time.monotonic() - started < 30  # generous: bounded, not a timing claim
    finally:
        for writer in held:
            writer.close()
        listener.close()
        await listener.wait_closed()


async def test_calls_share_kept_alive_connections_up_to_the_limit(
    gateway: Gateway,
    server: tuple[str, uvicorn.Server],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, uvicorn_server = server
    connections = uvicorn_server.server_state.connections
    async with MemoryHTTPClient(url, gateway.tokens["alice"]) as remote:
        for _ in range(5):
            await remote.get_memory_config("alice")
        assert len(connections) == 1  # one connection, kept alive from call to call

    async def all_closed() -> bool:  # the server sees the client's close a moment later
        return not connections

    await until(all_closed)
    monkeypatch.setattr(http_client, "MAX_CONNECTIONS", 3)
    async with MemoryHTTPClient(url, gateway.tokens["alice"]) as remote:
        peak = 0

        async def call() -> None:
            nonlocal peak
            await remote.get_memory_config("alice")
            peak = max(peak, len(connections))

        await asyncio.gather(*(call() for _ in range(12)))
        assert 1 <= peak <= 3


async def test_a_closed_client_leaves_nothing_open(
    gateway: Gateway, server: tuple[str, uvicorn.Server]
) -> None:
    connections = server[1].server_state.connections

    async def left(url: str, *, close: bool) -> list[str]:
        """What warns once a client that made a call is gone."""
        remote: Any = MemoryHTTPClient(url, gateway.tokens["alice"])
        with contextlib.suppress(MemoryUnavailableError):
            await remote.get_memory("alice")
        if close:
            await remote.aclose()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del remote
            gc.collect()
            await asyncio.sleep(0.05)  # transports dropped by the collection close on the loop
        return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]

    assert await left(server[0], close=True) == []
    assert await left(f"http://127.0.0.1:{free_port()}", close=False) == []  # holds no socket

    async def all_closed() -> bool:
        return not connections

    await until(all_closed)  # the server saw the closed client's connection end
    # the check sees a client left open with its connection
    unclosed = await left(server[0], close=False)
    assert any(m.startswith("unclosed connections to 127.0.0.1") for m in unclosed), unclosed


async def test_a_call_after_close_is_refused(remote: MemoryHTTPClient) -> None:
    await remote.get_memory("alice")
    await remote.aclose()
    with pytest.raises(ClientStateError):
        await remote.prefetch("alice", "a1", "t1")
    with pytest.raises(ClientStateError):
        await remote.call_tool("alice", "a1", "t1", "memory", {"action": "add"})
    with pytest.raises(ClientStateError):
        await remote.get_memory("alice")


@pytest.mark.parametrize(
    ("status", "body", "json_object"),
    [
        (200, b"<html>maintenance</html>", False),
        (200, b'{"status": "ok"}', True),
        (504, b"<html>Gateway Timeout</html>", False),
        (502, b"", False),
    ],
    ids=["proxy-page", "other-service", "proxy-timeout", "bad-gateway"],
)
async def test_answers_a_proxy_or_another_service_gives_are_no_result_of_the_gateway(
    status: int, body: bytes, json_object: bool
) -> None:
    """The request may have reached the gateway: a write is pending, a prefetch degraded,
    and another call an outage unless the answer is a JSON object (which only the agent's
    calls check the shape of)."""

    async def other(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(
                b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body)
            )

    async with serving(other) as (url, _), MemoryHTTPClient(url, "token") as remote:
        ctx = await remote.prefetch("alice", "a1", "t1")
        assert ctx.degraded and ctx.text == ""
        args = {"action": "add", "target": "memory", "content": "x"}
        result = await remote.call_tool("alice", "a1", "t1", "memory", args)
        assert result["success"] is False and result["pending"] is True
        if json_object:
            assert await remote.get_memory("alice") == {"status": "ok"}
        else:
            with pytest.raises(MemoryUnavailableError):
                await remote.get_memory("alice")


async def test_ids_that_no_url_can_carry_are_refused_before_anything_is_sent(
    remote: MemoryHTTPClient,
) -> None:
    with pytest.raises(InvalidInputError):
        await remote.prefetch("alice", "a\ud800", "t1")
    with pytest.raises(InvalidInputError):
        await remote.write_outcome("alice", "\udfff")
    with pytest.raises(TypeError, match="agent_id must be a string"):
        await remote.tool_schemas("alice", None)  # type: ignore[arg-type]


async def test_a_bad_id_in_a_tool_call_raises_as_memory_client_raises(
    gateway: Gateway, remote: MemoryHTTPClient
) -> None:
    """The host's ids are its own mistake: never handed to the model as bad arguments."""
    args = {"action": "add", "target": "memory", "content": "x"}
    for ids in (("alice", "bad/agent", "t1"), ("alice", "a1", ".."), ("al ice", "a1", "t1")):
        with pytest.raises(InvalidIdError) as direct:
            await gateway.service.client.call_tool(*ids, "memory", args)
        with pytest.raises(InvalidIdError) as remotely:
            await remote.call_tool(*ids, "memory", args)
        assert str(remotely.value) == str(direct.value)
    assert (await remote.get_memory("alice", "a1"))["memory_md"] == []


async def test_a_value_that_would_change_the_path_is_refused_before_anything_is_sent(
    remote: MemoryHTTPClient,
) -> None:
    """A dot segment or a slash in an id would name another route (a proxy resolves dots)."""
    calls = (
        lambda: remote.write_outcome("alice", "../../admin/tokens"),
        lambda: remote.write_outcome("alice", ".."),
        lambda: remote.reset_memory_config("alice", "a/b"),
        lambda: remote.reset_memory_config("alice", "."),
        lambda: remote.remove_memory_entry("alice", "a1", "..", 0, expect="0" * 12),
        lambda: remote.replace_memory_entry("alice", "a1", "user/..", 0, "x", expect="0" * 12),
    )
    for call in calls:
        with pytest.raises(InvalidInputError, match="cannot name a path segment"):
            await call()


def test_a_token_from_the_environment_is_taken_without_its_line_break(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMSVC_GATEWAY_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("MEMSVC_GATEWAY_TOKEN", "msv_0123456789ab_secret\n")
    assert "Bearer msv_0123456789ab_secret\r\n" in MemoryHTTPClient.from_env()._origin._head


async def test_a_turn_whose_answer_was_lost_is_recorded_once_when_sent_again(
    gateway: Gateway,
) -> None:
    """The gateway takes the turn and its answer is lost on the way back: the error gives
    the turn's event id, and the turn sent again under it is recorded once."""
    forwarded: list[bytes] = []

    async def loses_the_first_answer(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while True:
            head, body = await read_request(reader)
            target = head.split(b" ")[1].decode().removeprefix("/base")
            headers = {**gateway.auth("alice"), "content-type": "application/json"}
            answer = await gateway.http.post(target, content=body, headers=headers)
            forwarded.append(body)
            if len(forwarded) == 1:
                writer.close()  # taken, and not answered
                return
            writer.write(
                f"HTTP/1.1 {answer.status_code} X\r\ncontent-type: application/json\r\n"
                f"content-length: {len(answer.content)}\r\n\r\n".encode()
                + answer.content
            )
            await writer.drain()

    turn = {"user_content": "q1", "assistant_content": "a1"}
    async with (
        serving(loses_the_first_answer) as (url, _),
        MemoryHTTPClient(url, gateway.tokens["alice"]) as remote,
    ):
        with pytest.raises(MemoryUnavailableError) as lost:
            await remote.sync_turn("alice", "a1", "t1", **turn)
        event_id = lost.value.event_id
        assert event_id is not None and f"event_id={event_id!r}" in str(lost.value)
        assert await remote.sync_turn("alice", "a1", "t1", event_id=event_id, **turn) == (event_id)
        later = await remote.sync_turn(
            "alice", "a1", "t1", user_content="q2", assistant_content="a2"
        )
    assert len(forwarded) == 3

    async def numbered() -> list[tuple[str, int]]:
        return [
            (e.event_id, e.detail["turn_index"])
            for e in await gateway.service.log()
            if e.type == "sync_turn" and e.outcome == "ok"
        ]

    await until(lambda: _count(numbered, 3))
    assert await numbered() == [(event_id, 1), (event_id, 1), (later, 2)]


async def _count(records: Any, count: int) -> bool:
    return len(await records()) >= count
