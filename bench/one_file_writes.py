"""50 writers on one USER.md: latency and writes per second, this tree against a baseline.

    uv run python -m bench.one_file_writes [--writes 1000] [--writers 50] [--baseline REV]

Every writer is an agent of the same user adding entries to the user's shared
USER.md through the ``memory`` tool, all at once, through one and then two
worker processes. The latency is the caller's (publish to reply); writes per
second count acknowledged adds over the wall time of the whole run. The
baseline is the same run against workers started from ``REV`` (default: the
revision before batched writes), on the same Redis, in the same invocation.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time
from pathlib import Path

from bench.common import BASELINE, bench_env, latencies, pct, source_tree, worker
from memsvc.client import MemoryClient


async def _run(tree: Path | None, workers: int, writes: int, writers: int) -> tuple[float, ...]:
    async with bench_env() as bench:
        config = Path(bench.env["MEMSVC_DATA_DIR"]) / "config.yaml"
        config.write_text("memory:\n  builtin:\n    user_char_limit: 100000\n")
        bench.env["MEMSVC_CONFIG"] = str(config)
        async with worker(bench, tree=tree, count=workers):
            settings = bench.settings.model_copy(update={"config": config})
            async with MemoryClient(settings=settings) as mem:
                for n in range(writers):  # warm up: every agent's manager on the workers
                    await mem.prefetch("u", f"a{n}", "t")
                counter, agent = itertools.count(), itertools.cycle(range(writers))
                failed = 0

                async def add() -> None:
                    nonlocal failed
                    n = next(counter)
                    args = {"action": "add", "target": "user", "content": f"fact {n}"}
                    result = await mem.call_tool("u", f"a{next(agent)}", "t", "memory", args)
                    failed += not result.get("success")

                started = time.perf_counter()
                samples = await latencies(add, writes, writers)
                wall = time.perf_counter() - started
    return pct(samples, 50), pct(samples, 99), (writes - failed) / wall, failed


async def main(writes: int, writers: int, baseline: str) -> None:
    rows = []
    with source_tree(baseline) as old:
        for workers in (1, 2):
            for name, tree in (("baseline", old), ("this tree", None)):
                rows.append((workers, name, await _run(tree, workers, writes, writers)))
    sys.stdout.write(
        f"\n{writes:,} adds to one USER.md by {writers} concurrent writers (baseline: {baseline})\n"
        f"  {'':<24}{'p50 ms':>9}{'p99 ms':>9}{'writes/s':>10}{'refused':>9}\n"
    )
    for workers, name, (p50, p99, rate, failed) in rows:
        sys.stdout.write(
            f"  {workers} worker(s), {name:<12}{p50 * 1000:>9.1f}{p99 * 1000:>9.1f}"
            f"{rate:>10.1f}{failed:>9}\n"
        )
    for workers in (1, 2):
        before, after = (r for w, _, r in rows if w == workers)
        sys.stdout.write(
            f"  {workers} worker(s): writes/s x{after[2] / before[2]:.2f}, "
            f"p99 x{after[1] / before[1]:.2f}\n"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--writers", type=int, default=50)
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    asyncio.run(main(args.writes, args.writers, args.baseline))
