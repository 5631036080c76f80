"""``sync_turn`` publish latency on the request path, against a raw Redis round trip.

    uv run python -m bench.publish [--calls 10000] [--concurrency 50]

Both are measured on the same client, the same Redis and the same concurrency
in this run; the goal is a p50 ratio of at most 2.
"""

from __future__ import annotations

import argparse
import asyncio

from bench.common import bench_env, latencies, pct, report
from memsvc.client import MemoryClient

TURN = (
    "What's the weather in Beijing tomorrow?",
    "Tomorrow in Beijing: sunny, 3 to 11 °C, light wind from the north.",
)


async def main(calls: int, concurrency: int) -> None:
    async with bench_env() as bench:
        async with MemoryClient(settings=bench.settings) as mem:
            redis = bench.redis
            await redis.set(f"{bench.keys.prefix}:warm", "1")
            for _ in range(200):  # warm both paths (connections, pydantic)
                await redis.set(f"{bench.keys.prefix}:warm", "x")
                await mem.sync_turn("u", "a", "t", user_content=TURN[0], assistant_content=TURN[1])
            raw = await latencies(
                lambda: redis.set(f"{bench.keys.prefix}:k", "v"), calls, concurrency
            )
            n = iter(range(10**9))
            pub = await latencies(
                lambda: mem.sync_turn(
                    "u", "a", f"t{next(n) % 500}", user_content=TURN[0], assistant_content=TURN[1]
                ),
                calls,
                concurrency,
            )
        report(
            f"sync_turn publish, {calls:,} calls from {concurrency} tasks",
            [("sync_turn (XADD of event)", pct(pub, 50), pct(pub, 99))],
            (pct(raw, 50), pct(raw, 99)),
            "raw SET round trip",
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.concurrency))
