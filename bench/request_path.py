"""Round trips through a worker on the request path: ``prefetch`` and ``memory`` add.

    uv run python -m bench.request_path [--calls 2000] [--agents 50]

Each is measured at ``--agents`` concurrent agents through one ``memsvc worker``
process, and divided by two baselines measured in the same run at the same
concurrency: a raw Redis round trip (what the bus adds over the network), and
the same operation called in-process on a ``MemoryManager`` with the same Redis
(what the bus adds over doing the work locally).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools

from bench.common import bench_env, latencies, pct, report, worker
from memsvc.client import MemoryClient
from memsvc.service.runtime import Runtime


async def main(calls: int, agents: int) -> None:
    async with bench_env() as bench, worker(bench):
        redis = bench.redis
        runtime = Runtime(bench.settings, redis)
        counter = itertools.count()

        def add_args() -> dict[str, str]:
            return {"action": "add", "target": "memory", "content": f"note {next(counter)}"}

        async with MemoryClient(settings=bench.settings) as mem:
            for n in range(agents):  # warm up: files, snapshots, managers on both sides
                await mem.call_tool("u", f"a{n}", "t", "memory", add_args())
                await mem.prefetch("u", f"a{n}", "t")
            raw = await latencies(lambda: redis.set(f"{bench.keys.prefix}:k", "v"), calls, agents)

            agent = itertools.cycle(range(agents))

            async def via_bus_prefetch() -> object:
                return await mem.prefetch("u", f"a{next(agent)}", "t")

            async def via_bus_add() -> object:
                return await mem.call_tool("u", f"a{next(agent)}", "t", "memory", add_args())

            async def local_prefetch() -> object:
                memory = await runtime.memory("u", f"a{next(agent)}")
                return await memory.manager.prefetch_all("", thread_id="t")

            async def local_add() -> object:
                memory = await runtime.memory("u", f"b{next(agent)}")
                return await memory.manager.memory_write(add_args(), thread_id="t")

            bus_prefetch = await latencies(via_bus_prefetch, calls, agents)
            bus_add = await latencies(via_bus_add, calls, agents)
            loc_prefetch = await latencies(local_prefetch, calls, agents)
            loc_add = await latencies(local_add, calls, agents)
        await runtime.aclose()

        rows = [
            ("prefetch via worker", pct(bus_prefetch, 50), pct(bus_prefetch, 99)),
            ("memory add via worker", pct(bus_add, 50), pct(bus_add, 99)),
        ]
        report(
            f"request path, {calls:,} calls per row at {agents} concurrent agents",
            rows,
            (pct(raw, 50), pct(raw, 99)),
            "raw SET round trip",
        )
        report(
            "the same, against the operation called in-process",
            [("prefetch via worker", pct(bus_prefetch, 50), pct(bus_prefetch, 99))],
            (pct(loc_prefetch, 50), pct(loc_prefetch, 99)),
            "prefetch in-process",
        )
        report(
            "",
            [("memory add via worker", pct(bus_add, 50), pct(bus_add, 99))],
            (pct(loc_add, 50), pct(loc_add, 99)),
            "memory add in-process",
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--agents", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.agents))
