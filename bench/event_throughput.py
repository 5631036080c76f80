"""Events one worker processes per second, this tree against an earlier revision, one run.

    uv run python -m bench.event_throughput [--events 3000] [--baseline REV] [--rounds 2]

Two kinds of event, the ones an agent sends most: a repeat ``prefetch`` (the
thread's snapshot is taken already) and a ``memory_write`` that adds an entry.
50 agents (one user each) share the load. For each kind and each tree the
stream is filled first, then one worker process drains it while the event log
is counted; the rate runs from the first processed event to the last. The
baseline is the same workload on a worker started from ``REV`` (default: the
revision before the round-trip work), alternating trees ``--rounds`` times on
the same Redis; the ratio is this tree's rate over the baseline's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

from bench.common import BASELINE, Bench, bench_env, source_tree, worker
from bench.worker_throughput import drain_rate
from memsvc.events import (
    MemoryWriteEvent,
    MemoryWritePayload,
    PrefetchEvent,
    PrefetchPayload,
    encode,
    stamp,
)

AGENTS = 50


def _prefetch(n: int) -> PrefetchEvent:
    return PrefetchEvent(
        **stamp(),
        user_id=f"u{n % AGENTS}",
        agent_id="a",
        thread_id="t",
        payload=PrefetchPayload(query="what next"),
    )


def _add(n: int) -> MemoryWriteEvent:
    args = {"action": "add", "target": "memory", "content": f"note {n}"}
    return MemoryWriteEvent(
        **stamp(),
        user_id=f"u{n % AGENTS}",
        agent_id="a",
        thread_id="t",
        payload=MemoryWritePayload(args=args),
    )


async def _publish(bench: Bench, events: list[PrefetchEvent] | list[MemoryWriteEvent]) -> None:
    async with bench.redis.pipeline(transaction=False) as pipe:
        for event in events:
            pipe.xadd(bench.keys.events, {"e": encode(event)})
        await pipe.execute()


async def _rate(tree: Path | None, kind: str, events: int) -> float:
    async with bench_env() as bench:
        redis = bench.redis
        async with worker(bench, tree=tree):
            # every agent has a file and a frozen snapshot: the prefetches are repeats
            await _publish(bench, [_add(n) for n in range(AGENTS)])
            await _publish(bench, [_prefetch(n) for n in range(AGENTS)])

            async def unprimed() -> int:
                return 2 * AGENTS - await redis.xlen(bench.keys.log)

            await drain_rate(unprimed, 2 * AGENTS)
            logged = await redis.xlen(bench.keys.log)
            make = _prefetch if kind == "prefetch" else _add
            await _publish(bench, [make(AGENTS + n) for n in range(events)])

            async def missing() -> int:
                return logged + events - await redis.xlen(bench.keys.log)

            return await drain_rate(missing, events)


async def main(events: int, baseline: str, rounds: int) -> None:
    rates: dict[tuple[str, str], list[float]] = {}
    with source_tree(baseline) as old:
        for _ in range(rounds):
            for kind in ("prefetch", "add"):
                for name, tree in (("baseline", old), ("this tree", None)):
                    rates.setdefault((kind, name), []).append(await _rate(tree, kind, events))
    sys.stdout.write(
        f"\nevents per second, one worker, {events:,} events over {AGENTS} agents, "
        f"median of {rounds} rounds (baseline: {baseline})\n"
    )
    for kind, label in (("prefetch", "repeat prefetch"), ("add", "memory add")):
        before = statistics.median(rates[(kind, "baseline")])
        after = statistics.median(rates[(kind, "this tree")])
        sys.stdout.write(
            f"  {label:<18} baseline {before:>8,.0f}/s   this tree {after:>8,.0f}/s"
            f"   ratio {after / before:.2f}\n"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.events, args.baseline, args.rounds))
