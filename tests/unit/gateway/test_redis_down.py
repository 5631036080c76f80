"""The gateway in Redis mode while Redis is away: every route answers 503 ``{"detail": ...}``.

Redis is a port nothing listens on (refused at once) or a server that accepts and never
answers (each command waits out the socket timeout); no real Redis is needed.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from redis.exceptions import TimeoutError as RedisTimeoutError

from memsvc.client import MemoryClient
from memsvc.errors import MemoryMisconfiguredError, MemoryUnavailableError
from memsvc.gateway.app import PREFIX, create_app, router
from memsvc.gateway.auth import RedisTokenStore, TokenRecord, Tokens
from memsvc.gateway.statuses import error_of
from memsvc.keys import Keys
from memsvc.redisconn import connect
from memsvc.settings import ServiceSettings
from tests.conftest import free_port
from tests.unit.gateway.test_auth_refusals import ADMIN_ONLY, REQUESTS

# well formed, so its record is looked up (in Redis)
TOKEN = "msv_0123456789ab_" + "A" * 43

# past the token (no_auth), what each route answers: a prefetch never fails, a tool call
# answers with a result for the model, an admin route refuses user "default" first
ANSWERS = {("POST", "/agent/prefetch"): 200, ("POST", "/agent/tool"): 200} | dict.fromkeys(
    ADMIN_ONLY, 403
)


def settings_for(tmp_path: Path, port: int, *, timeout: float = 1.5) -> ServiceSettings:
    return ServiceSettings(
        data_dir=tmp_path / "data",
        redis_url=f"redis://127.0.0.1:{port}/0",
        redis_connect_timeout_seconds=1.0,
        redis_timeout_seconds=timeout,
    )


Serve = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[Serve]:
    """``serve(port, no_auth=..., timeout=...)``: the gateway, its client opened by itself,
    over HTTP."""
    async with AsyncExitStack() as stack:

        async def start(
            port: int, *, no_auth: bool = False, timeout: float = 1.5
        ) -> httpx.AsyncClient:
            settings = settings_for(tmp_path, port, timeout=timeout)
            app: FastAPI = create_app(settings, no_auth=no_auth)
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx.ASGITransport(app=app)  # an error the app lets out: raised here
            http = httpx.AsyncClient(transport=transport, base_url="http://gateway")
            return await stack.enter_async_context(http)

        yield start


def sample_path(path: str) -> str:
    """A route's template with every path parameter filled in."""
    return re.sub(r"\{[^}]+\}", "x", path)


async def test_every_route_with_a_token_is_503_when_its_lookup_meets_no_redis(
    serve: Serve,
) -> None:
    http = await serve(free_port())
    headers = {"Authorization": f"Bearer {TOKEN}"}
    routes = [(method, route.path) for route in router.routes for method in route.methods]
    assert len(routes) >= 20
    for method, path in routes:
        response = await http.request(method, sample_path(path), headers=headers, json={})
        assert response.status_code == 503, (method, path, response.text)
        assert response.json() == {"detail": "Redis unavailable; retry later"}, (method, path)


async def test_every_call_past_the_token_answers_as_its_client_does_without_redis(
    serve: Serve,
) -> None:
    http = await serve(free_port(), no_auth=True)
    for (method, path), request in sorted(REQUESTS.items()):
        response = await http.request(
            method,
            PREFIX + request.get("path", path),
            params=request.get("params"),
            json=request.get("json"),
        )
        status = ANSWERS.get((method, path), 503)
        assert response.status_code == status, (method, path, response.text)
        if status == 503:  # in words that do not name the server
            assert response.json()["detail"] == "Redis unavailable; retry later", (method, path)
    prefetch = await http.post(f"{PREFIX}/agent/prefetch", json={"agent_id": "coder"})
    assert prefetch.json()["degraded"] is True
    tool = await http.post(
        f"{PREFIX}/agent/tool", json={"agent_id": "coder", "name": "memory", "args": {}}
    )
    assert tool.json()["success"] is False


async def test_a_redis_that_never_answers_costs_a_request_its_timeout_then_503(
    serve: Serve,
) -> None:
    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # takes every command, answers none

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    async with server:
        http = await serve(server.sockets[0].getsockname()[1])
        started = time.monotonic()
        response = await http.get(f"{PREFIX}/status", headers={"Authorization": f"Bearer {TOKEN}"})
        elapsed = time.monotonic() - started
    assert response.status_code == 503 and response.json()["detail"].startswith("Redis")
    assert elapsed < 30.0  # the 1.5 s socket timeout, generous for a busy machine


@pytest.mark.parametrize(
    ("lane", "deadline"),
    [("fast", 1), ("FastAPI's", 1), ("fast", "1"), ("FastAPI's", "1")],
    ids=["fast", "FastAPI's", "fast, as text", "FastAPI's, as text"],
)
async def test_a_calls_deadline_bounds_its_token_lookup_in_a_redis_that_never_answers(
    serve: Serve, lane: str, deadline: object
) -> None:
    """An agent asks for an answer within a second (a number, or text the route reads as
    one); Redis' socket timeout is a minute."""
    accepted: list[int] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        await reader.read()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    # any other query parameter takes the request the long way, through FastAPI
    params = {"user_id": "alice"} | ({} if lane == "fast" else {"trace": "1"})
    calls = {
        "/agent/prefetch": {"agent_id": "coder", "deadline": deadline},
        "/agent/tool": {"agent_id": "coder", "name": "memory", "args": {}, "deadline": deadline},
    }
    async with server:
        http = await serve(server.sockets[0].getsockname()[1], timeout=60.0)
        for path, body in calls.items():
            started = time.monotonic()
            response = await http.post(
                PREFIX + path,
                params=params,
                json=body,
                headers={"Authorization": f"Bearer {TOKEN}"},
                timeout=120,
            )
            elapsed = time.monotonic() - started
            assert response.status_code == 503, (path, response.text)
            assert response.json() == {"detail": "Redis unavailable; retry later"}
            assert elapsed < 30.0, path  # the deadline, not the socket's minute
        # callers that gave up leave one lookup to finish, not a connection each
        opened = len(accepted)
        for _ in range(10):
            short = {**calls["/agent/prefetch"], "deadline": 0.1}
            response = await http.post(
                f"{PREFIX}/agent/prefetch",
                params=params,
                json=short,
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            assert response.status_code == 503
        assert len(accepted) == opened


async def test_a_kept_token_needs_no_redis_within_any_deadline() -> None:
    """A record the gateway keeps (it hears revocations) is not looked up again: a stalled
    Redis costs the calls that carry it nothing."""

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    async with server:
        settings = ServiceSettings(
            redis_url=f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
        )
        redis = connect(settings.redis_url or "", settings)
        store = RedisTokenStore(redis, Keys("kept"), keep_seconds=60)
        tokens = Tokens(store)
        record = TokenRecord("0123456789ab", "alice", False, 0.0, "0" * 64)
        store._kept[record.id] = (time.monotonic() + 60, record)
        try:
            assert await store.find(record.id, within=0.001) == record
            with pytest.raises(RedisTimeoutError):  # another token: asked of Redis
                await store.find("ba9876543210", within=0.1)
            assert await tokens.authenticate(TOKEN, within=0.001) is None  # not its digest
        finally:
            await redis.aclose()


async def test_the_clients_own_reads_raise_memory_unavailable(tmp_path: Path) -> None:
    async with MemoryClient(settings=settings_for(tmp_path, free_port())) as mem:
        with pytest.raises(MemoryUnavailableError, match="Redis unavailable"):
            await mem.read_log("alice")
        with pytest.raises(MemoryUnavailableError, match="Redis unavailable"):
            await mem.write_outcome("alice", "0123456789abcdef")


async def test_a_redis_that_refuses_the_gateways_user_is_500_in_words_of_our_own(
    serve: Serve,
) -> None:
    """An ACL that leaves out what memsvc needs: no retry helps, so no 503, and the answer
    names neither the Redis user nor its rights."""

    connections: list[asyncio.StreamWriter] = []

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        while data := await reader.read(65536):
            commands = data.count(b"\r\n*") + data.startswith(b"*")
            writer.write(b"-NOPERM User svc has no permissions to run this command\r\n" * commands)
            await writer.drain()

    server = await asyncio.start_server(refuse, "127.0.0.1", 0)
    async with server:
        try:
            port = server.sockets[0].getsockname()[1]
            with_token = await serve(port)
            looked_up = await with_token.get(PREFIX, headers={"Authorization": f"Bearer {TOKEN}"})
            past_token = await serve(port, no_auth=True)
            read = await past_token.get(PREFIX, params={"agent_id": "coder"})
            args = {"action": "add", "content": "x"}
            tool = await past_token.post(
                f"{PREFIX}/agent/tool", json={"agent_id": "coder", "name": "memory", "args": args}
            )
        finally:  # the gateways' connections, before this loop closes
            for writer in connections:
                writer.close()
    for response in (looked_up, read):
        assert response.status_code == 500, response.text
        assert response.json() == {
            "detail": {
                "error": "Redis refuses the gateway; an operator must fix its access",
                "misconfigured": True,
            }
        }
        error = error_of(response.status_code, response.json()["detail"])  # as its client reads
        assert isinstance(error, MemoryMisconfiguredError) and not error.retryable
    assert (tool.json()["success"], tool.json()["retryable"]) == (False, False)
