"""The gateway on the whole service of ``tests.unit.conftest``, and its tokens."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from memsvc.gateway.app import PREFIX, create_app
from memsvc.gateway.auth import FileTokenStore, Tokens
from memsvc.paths import DataLayout
from tests.unit.conftest import Service


@dataclass
class Gateway:
    """An app serving through the test's service, an HTTP client for it, named tokens."""

    app: FastAPI
    http: httpx.AsyncClient
    service: Service
    tokens: dict[str, str]  # alice, bob, root (an admin), revoked (was alice's)

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    async def call(
        self, method: str, path: str, *, as_: str = "alice", **kwargs: object
    ) -> httpx.Response:
        return await self.http.request(method, PREFIX + path, headers=self.auth(as_), **kwargs)  # type: ignore[arg-type]


async def issue_tokens(tokens: Tokens) -> dict[str, str]:
    issued = {name: (await tokens.add(name))[1] for name in ("alice", "bob")}
    issued["root"] = (await tokens.add("root", admin=True))[1]
    revoked, issued["revoked"] = await tokens.add("alice")
    await tokens.revoke(revoked.id)
    return issued


@pytest.fixture
def no_auth() -> bool:
    return False


@pytest.fixture
async def gateway(service: Service, no_auth: bool) -> AsyncIterator[Gateway]:
    tokens = Tokens(FileTokenStore(DataLayout.at(service.settings.data_dir)))
    issued = await issue_tokens(tokens)
    app = create_app(service.settings, client=service.client, no_auth=no_auth)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
            yield Gateway(app, http, service, issued)


class _InProcess(uvicorn.Server):
    """uvicorn on the test's own loop: the test runner keeps its signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def served(app: FastAPI) -> AsyncIterator[tuple[str, uvicorn.Server]]:
    """``app`` served by uvicorn on a loopback port of its own, in this loop; its base URL
    and the server. The app's lifespan stays the caller's (``gateway`` has entered it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        server = _InProcess(uvicorn.Config(app, lifespan="off", log_level="warning"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            while not server.started:
                if serving.done():
                    await serving  # its error, if it failed to start
                    raise RuntimeError("uvicorn exited before it started")
                await asyncio.sleep(0.01)
            yield f"http://127.0.0.1:{sock.getsockname()[1]}", server
        finally:
            server.should_exit = True
            await serving


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request as the server reads it: its head and its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return head, await reader.readexactly(length)


@contextlib.asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback HTTP server scripted by ``handler`` (run on each connection): its URL, and
    a list that counts the connections it accepted. Its handlers end before it is gone."""
    accepted: list[int] = []
    writers: list[asyncio.StreamWriter] = []
    handlers: list[asyncio.Task[Any]] = []

    async def each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        handlers.append(task)
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await handler(reader, writer)

    server = await asyncio.start_server(each, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/base", accepted
    finally:
        for writer in writers:
            writer.close()  # the handlers' reads end with their connections
        server.close()
        await server.wait_closed()
        if handlers:
            await asyncio.wait(handlers, timeout=30)  # generous: only a hung handler waits
