"""The gateway's cost over the bus: ``prefetch`` and ``memory`` add through ``memsvc serve``.

    uv run python -m bench.gateway [--calls 2000] [--clients 50]

One ``memsvc worker`` and one ``memsvc serve`` process on the machine's Redis;
``--clients`` concurrent callers make each call over HTTP to the gateway (which
publishes the event), divided by the same call made through ``MemoryClient`` in
this process (the event published directly), in the same run, at the same
concurrency. Goal: a ratio of at most 1.5.

The HTTP calls are made twice: through ``MemoryHTTPClient`` (httpx: what a Python
agent pays) and through a minimal HTTP/1.1 client, one kept-alive connection per
caller (what the gateway costs an agent whose HTTP stack is cheap). Every process
shares the machine's cores, so a client's own CPU slows the worker it waits for.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import re
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.common import Bench, bench_env, latencies, memsvc_process, pct, report, worker
from memsvc.client import MemoryClient
from memsvc.gateway.auth import RedisTokenStore, Tokens
from memsvc.gateway.http_client import MemoryHTTPClient


@contextlib.asynccontextmanager
async def gateway(bench: Bench) -> AsyncIterator[str]:
    """``memsvc serve`` on a free port; its base URL once it is ready."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as http:

        async def ready() -> bool:
            return (await http.get(base_url + "/readyz")).status_code == 200

        async with memsvc_process(bench, "serve", "--port", str(port), ready=ready):
            yield base_url


class RawHTTP:
    """A minimal HTTP/1.1 client: one kept-alive connection per caller, one write a request."""

    _LENGTH = re.compile(rb"\r\ncontent-length: *([0-9]+)", re.IGNORECASE)

    def __init__(self, base_url: str, token: str) -> None:
        url = urlsplit(base_url)
        self._address = (url.hostname or "127.0.0.1", url.port or 80)
        self._auth = f"Authorization: Bearer {token}\r\n"
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        data = json.dumps(body).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: gateway\r\n{self._auth}"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        request = head.encode() + data
        if self._idle:
            reader, writer = self._idle.pop()
            writer.write(request)
            try:
                answer = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):  # closed while idle
                writer.close()
                reader, writer, answer = await self._fresh(request)
        else:
            reader, writer, answer = await self._fresh(request)
        match = self._LENGTH.search(answer)
        payload = await reader.readexactly(int(match.group(1)) if match else 0)
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(answer.split(b"\r\n")[0].decode())
        self._idle.append((reader, writer))
        return json.loads(payload)

    async def _fresh(
        self, request: bytes
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
        reader, writer = await asyncio.open_connection(*self._address)
        writer.write(request)
        return reader, writer, await reader.readuntil(b"\r\n\r\n")

    def close(self) -> None:
        for _, writer in self._idle:
            writer.close()


async def main(calls: int, clients: int) -> None:
    async with bench_env() as bench, worker(bench), gateway(bench) as base_url:
        _, token = await Tokens(RedisTokenStore(bench.redis, bench.keys)).add("u")
        counter = itertools.count()

        def add_args() -> dict[str, str]:
            return {"action": "add", "target": "memory", "content": f"note {next(counter)}"}

        raw = RawHTTP(base_url, token)
        async with (
            MemoryClient(settings=bench.settings) as direct,
            MemoryHTTPClient(base_url, token, settings=bench.settings) as remote,
        ):
            agent = itertools.cycle(range(clients))

            def prefetch(mem: Any) -> Any:
                return mem.prefetch("u", f"a{next(agent)}", "t")

            def add(mem: Any, agents: str) -> Any:
                return mem.call_tool("u", f"{agents}{next(agent)}", "t", "memory", add_args())

            def raw_prefetch() -> Any:
                ids = {"agent_id": f"a{next(agent)}", "thread_id": "t", "deadline": 29.0}
                return raw.post("/api/memory/v2/agent/prefetch?user_id=u", ids)

            def raw_add() -> Any:
                ids = {"agent_id": f"r{next(agent)}", "thread_id": "t", "name": "memory"}
                return raw.post("/api/memory/v2/agent/tool?user_id=u", {**ids, "args": add_args()})

            # warm up at full concurrency: files, snapshots, managers, every connection
            for call in (
                lambda: prefetch(direct),
                lambda: prefetch(remote),
                raw_prefetch,
                lambda: add(direct, "m"),
                lambda: add(remote, "g"),
                raw_add,
            ):
                await latencies(call, clients * 2, clients)
            rows: dict[str, list[float]] = {}
            for name, call in (
                ("prefetch via MemoryClient", lambda: prefetch(direct)),
                ("prefetch via gateway, httpx", lambda: prefetch(remote)),
                ("prefetch via gateway, raw", raw_prefetch),
                ("add via MemoryClient", lambda: add(direct, "m")),
                ("add via gateway, httpx", lambda: add(remote, "g")),
                ("add via gateway, raw", raw_add),
            ):
                rows[name] = await latencies(call, calls, clients)
        raw.close()

        def figures(name: str) -> tuple[str, float, float]:
            return name, pct(rows[name], 50), pct(rows[name], 99)

        for operation in ("prefetch", "add"):
            _, *base = figures(f"{operation} via MemoryClient")
            report(
                f"{operation}: {calls:,} calls per row at {clients} concurrent clients"
                if operation == "prefetch"
                else f"memory {operation}",
                [figures(f"{operation} via gateway, {how}") for how in ("httpx", "raw")],
                (base[0], base[1]),
                f"{operation} via MemoryClient",
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.clients))
