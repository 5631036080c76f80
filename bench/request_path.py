"""Round trips through a worker on the request path: ``prefetch`` and ``memory`` add.

    uv run python -m bench.request_path [--calls 2000] [--agents 50] [--rounds 2]
                                        [--baseline REV]

Each is measured at ``--agents`` concurrent agents through one ``memsvc worker``
process, and divided by two baselines measured in the same run at the same
concurrency: a raw Redis round trip (what the bus adds over the network), and
the same operation called in-process on a ``MemoryManager`` with the same Redis
(what the bus adds over doing the work locally). With ``--baseline REV`` the
calls through a worker are also made through a worker started from ``REV``: the
before and after of a change to the worker, in one run. Each worker runs from
the start of the run to its end, as a deployed one lives through many requests
(what builds up in a long-lived process, such as its collector's pauses, is
measured too); the rows take turns, ``--rounds`` times, and their samples are
pooled, so that other work on the machine weighs on each alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from bench.common import (
    Bench,
    bench_env,
    latencies,
    note_adds,
    pct,
    report,
    source_tree,
    worker,
)
from memsvc.client import MemoryClient
from memsvc.service.runtime import Runtime


@contextlib.asynccontextmanager
async def through_worker(
    tree: Path | None, agents: int
) -> AsyncIterator[Callable[[int], Awaitable[tuple[list[float], list[float]]]]]:
    """A worker from ``tree`` (else this one), warmed up, with a key prefix and data dir
    of its own: it lives through every round, as a deployed worker lives through many
    requests, and the calls it serves are measured by rounds."""
    add_args = note_adds()
    agent = itertools.cycle(range(agents))

    async with (
        bench_env() as bench,
        worker(bench, tree=tree),
        MemoryClient(settings=bench.settings) as mem,
    ):
        for n in range(agents):  # warm up: files, snapshots, managers
            await mem.call_tool("u", f"a{n}", "t", "memory", add_args())
            await mem.prefetch("u", f"a{n}", "t")

        async def prefetch() -> object:
            return await mem.prefetch("u", f"a{next(agent)}", "t")

        async def add() -> object:
            return await mem.call_tool("u", f"a{next(agent)}", "t", "memory", add_args())

        async def measure(calls: int) -> tuple[list[float], list[float]]:
            return await latencies(prefetch, calls, agents), await latencies(add, calls, agents)

        yield measure


async def in_process(bench: Bench, calls: int, agents: int) -> dict[str, list[float]]:
    """The raw round trip, and prefetch and add called on a ``MemoryManager`` here."""
    runtime = Runtime(bench.settings, bench.redis)
    add_args = note_adds()
    agent = itertools.cycle(range(agents))

    async def prefetch() -> object:
        memory = await runtime.memory("u", f"a{next(agent)}")
        return await memory.manager.prefetch_all("", thread_id="t")

    async def add() -> object:
        memory = await runtime.memory("u", f"b{next(agent)}")
        return await memory.manager.memory_write(add_args(), thread_id="t")

    try:
        for _ in range(2):  # warm up: files, snapshots, managers
            await latencies(prefetch, agents, agents)
            await latencies(add, agents, agents)
        key = f"{bench.keys.prefix}:k"
        return {
            "raw": await latencies(lambda: bench.redis.set(key, "v"), calls, agents),
            "prefetch": await latencies(prefetch, calls, agents),
            "add": await latencies(add, calls, agents),
        }
    finally:
        await runtime.aclose()


async def main(calls: int, agents: int, rounds: int, baseline: str | None) -> None:
    samples: dict[str, list[float]] = defaultdict(list)
    names = ["this tree"] if baseline is None else [f"@{baseline}", "this tree"]
    share = max(1, calls // rounds)
    async with contextlib.AsyncExitStack() as stack:
        old = stack.enter_context(source_tree(baseline))
        trees = [None] if old is None else [old, None]
        workers = [await stack.enter_async_context(through_worker(t, agents)) for t in trees]
        bench = await stack.enter_async_context(bench_env())
        for _ in range(rounds):
            for name, measure in zip(names, workers, strict=True):
                prefetch, add = await measure(share)
                samples[f"prefetch {name}"] += prefetch
                samples[f"add {name}"] += add
            for kind, values in (await in_process(bench, share, agents)).items():
                samples[kind] += values

    def rows(kind: str) -> list[tuple[str, float, float]]:
        label = {"prefetch": "prefetch via worker", "add": "memory add via worker"}[kind]
        return [
            (f"{label}{'' if baseline is None else ', ' + name}", *quantiles(f"{kind} {name}"))
            for name in names
        ]

    def quantiles(row: str) -> tuple[float, float]:
        return pct(samples[row], 50), pct(samples[row], 99)

    report(
        f"request path, {share * rounds:,} calls per row at {agents} concurrent agents, "
        f"{rounds} rounds",
        rows("prefetch") + rows("add"),
        quantiles("raw"),
        "raw SET round trip",
    )
    report(
        "the same, against the operation called in-process",
        rows("prefetch"),
        quantiles("prefetch"),
        "prefetch in-process",
    )
    report("", rows("add"), quantiles("add"), "memory add in-process")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", help="also through a worker of this revision")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.agents, args.rounds, args.baseline))
