"""The gateway's cost over the bus: ``prefetch`` and ``memory`` add through ``memsvc serve``.

    uv run python -m bench.gateway [--calls 2000] [--clients 50] [--rounds 4]
                                   [--baseline REV] [--gateway-baseline REV]

One ``memsvc worker`` and one ``memsvc serve`` process on the machine's Redis;
``--clients`` concurrent callers make each call over HTTP to the gateway (which
publishes the event), divided by the same call made through ``MemoryClient`` in
this process (the event published directly), in the same run, at the same
concurrency. Goal: a ratio of at most 1.5.

The HTTP calls are made through ``MemoryHTTPClient`` (what a Python agent pays)
and through a minimal HTTP/1.1 client, one kept-alive connection per caller
(what the gateway costs an agent whose HTTP stack is cheap); with ``--baseline
REV`` also through ``MemoryHTTPClient`` as ``REV`` wrote it (its module loaded
beside this tree's, the rest of memsvc this tree's): the before and after of a
change to the client, in one run (before ad9f4da the client ran on aiohttp:
``uv run --with aiohttp python -m bench.gateway --baseline REV``). With
``--gateway-baseline REV`` a second gateway runs from a checkout of ``REV``
beside this tree's, and both HTTP rows are measured through it too: the before
and after of a change to the gateway, in one run. Every process shares the
machine's cores, so a client's own CPU slows the worker it waits for: each row
also gives this process's CPU per call (``getrusage``: user + system), which is
the caller's, and the gateway process's (``/proc``), which is what serving the
call cost.
The rows take turns, ``--rounds`` times, ``--calls`` calls each in all, so that
load from elsewhere on the machine falls on all of them alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import re
import resource
import socket
import subprocess
import sys
import types
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.common import (
    ROOT,
    Bench,
    bench_env,
    latencies,
    memsvc_processes,
    note_adds,
    pct,
    process_cpu_seconds,
    source_tree,
    worker,
)
from memsvc.client import MemoryClient
from memsvc.gateway.auth import RedisTokenStore, Tokens
from memsvc.gateway.http_client import MemoryHTTPClient


@contextlib.asynccontextmanager
async def gateway(bench: Bench, tree: Path | None = None) -> AsyncIterator[tuple[str, int]]:
    """``memsvc serve`` (from ``tree``, else this one) on a free port; its base URL and pid
    once it is ready."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as http:

        async def ready() -> bool:
            return (await http.get(base_url + "/readyz")).status_code == 200

        async with memsvc_processes(
            bench, "serve", "--port", str(port), ready=ready, tree=tree
        ) as (proc,):
            yield base_url, proc.pid


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


def client_at(revision: str) -> Any:
    """``MemoryHTTPClient`` as ``revision`` wrote it: its module, loaded under a name of its
    own beside this tree's (what it imports of memsvc is this tree's)."""
    path = "memsvc/gateway/http_client.py"
    source = subprocess.run(
        ["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType(f"bench_http_client_{revision}")
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return module.MemoryHTTPClient


def cpu_seconds() -> float:
    """This process's CPU time so far, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main(
    calls: int, clients: int, rounds: int, baseline: str | None, gateway_baseline: str | None
) -> None:
    old_client = client_at(baseline) if baseline else None
    async with contextlib.AsyncExitStack() as stack:
        bench = await stack.enter_async_context(bench_env())
        await stack.enter_async_context(worker(bench))
        # the gateways a row's HTTP calls go through: this tree's, and REV's if asked for
        gateways = {"": await stack.enter_async_context(gateway(bench))}
        if gateway_baseline is not None:
            old_tree = stack.enter_context(source_tree(gateway_baseline))
            gateways[f", gateway @{gateway_baseline}"] = await stack.enter_async_context(
                gateway(bench, old_tree)
            )
        _, token = await Tokens(RedisTokenStore(bench.redis, bench.keys)).add("u")
        add_args = note_adds()

        direct = await stack.enter_async_context(MemoryClient(settings=bench.settings))
        # each row: its client and the gateway whose CPU it reads (None: no gateway)
        clients_by_name: dict[str, tuple[Any, int | None]] = {"MemoryClient": (direct, None)}
        raws: dict[str, tuple[RawHTTP, int]] = {}
        for suffix, (base_url, pid) in gateways.items():
            clients_by_name[f"MemoryHTTPClient{suffix}"] = (
                await stack.enter_async_context(
                    MemoryHTTPClient(base_url, token, settings=bench.settings)
                ),
                pid,
            )
            if old_client is not None and not suffix:
                clients_by_name[f"MemoryHTTPClient @{baseline}"] = (
                    await stack.enter_async_context(
                        old_client(base_url, token, settings=bench.settings)
                    ),
                    pid,
                )
            raws[f"raw HTTP/1.1{suffix}"] = (RawHTTP(base_url, token), pid)
            stack.callback(raws[f"raw HTTP/1.1{suffix}"][0].close)
        agent = itertools.cycle(range(clients))
        calls_of: dict[str, Callable[[], Awaitable[Any]]] = {}
        pid_of: dict[str, int | None] = {}
        for n, (name, (mem, server)) in enumerate(clients_by_name.items()):

            def prefetch(mem: Any = mem) -> Any:
                return mem.prefetch("u", f"a{next(agent)}", "t")

            def add(mem: Any = mem, n: int = n) -> Any:
                # each client adds to files of its own agents: every row writes the same sizes
                return mem.call_tool("u", f"c{n}a{next(agent)}", "t", "memory", add_args())

            calls_of[f"prefetch via {name}"], calls_of[f"add via {name}"] = prefetch, add
            pid_of[f"prefetch via {name}"] = pid_of[f"add via {name}"] = server
        for n, (name, (raw, pid)) in enumerate(raws.items()):

            def raw_prefetch(raw: RawHTTP = raw) -> Any:
                ids = {"agent_id": f"a{next(agent)}", "thread_id": "t", "deadline": 29.0}
                return raw.post("/api/memory/v2/agent/prefetch?user_id=u", ids)

            def raw_add(raw: RawHTTP = raw, n: int = n) -> Any:
                ids = {"agent_id": f"r{n}a{next(agent)}", "thread_id": "t", "name": "memory"}
                return raw.post("/api/memory/v2/agent/tool?user_id=u", {**ids, "args": add_args()})

            calls_of[f"prefetch via {name}"] = raw_prefetch
            calls_of[f"add via {name}"] = raw_add
            pid_of[f"prefetch via {name}"] = pid_of[f"add via {name}"] = pid
        # warm up at full concurrency: files, snapshots, managers, every connection
        for call in calls_of.values():
            await latencies(call, clients * 2, clients)
        rows: dict[str, list[float]] = {name: [] for name in calls_of}
        cpu: dict[str, float] = dict.fromkeys(calls_of, 0.0)
        served: dict[str, float] = dict.fromkeys(calls_of, 0.0)
        for done in range(rounds):
            share = calls // rounds + (1 if done < calls % rounds else 0)
            for operation in ("prefetch", "add"):
                for name, call in calls_of.items():
                    if name.startswith(operation + " "):
                        server = pid_of[name]
                        started = cpu_seconds()
                        serving = process_cpu_seconds(server) if server else 0.0
                        rows[name] += await latencies(call, share, clients)
                        cpu[name] += cpu_seconds() - started
                        served[name] += (process_cpu_seconds(server) if server else 0.0) - serving

        for operation in ("prefetch", "add"):
            names = [name for name in rows if name.startswith(operation + " ")]
            base = pct(rows[names[0]], 50), pct(rows[names[0]], 99)
            title = (
                f"{operation}: {calls:,} calls per row at {clients} concurrent clients, "
                f"{rounds} rounds"
                if operation == "prefetch"
                else f"memory {operation}"
            )
            width = max(len(name) for name in names) + 2
            sys.stdout.write(
                f"\n{title}\n  {'':<{width}}{'p50 ms':>9}{'p99 ms':>9}{'p50 ratio':>11}"
                f"{'p99 ratio':>11}{'caller CPU ms/call':>20}{'gateway CPU ms/call':>21}\n"
            )
            for name in names:
                p50, p99 = pct(rows[name], 50), pct(rows[name], 99)
                sys.stdout.write(
                    f"  {name:<{width}}{p50 * 1000:>9.2f}{p99 * 1000:>9.2f}{p50 / base[0]:>11.2f}"
                    f"{p99 / base[1]:>11.2f}{cpu[name] / len(rows[name]) * 1000:>20.3f}"
                    f"{served[name] / len(rows[name]) * 1000:>21.3f}\n"
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--baseline", help="also MemoryHTTPClient as this revision wrote it")
    parser.add_argument("--gateway-baseline", help="also through a gateway of this revision")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.clients, args.rounds, args.baseline, args.gateway_baseline))
