"""Events fully processed per second by one worker, against arq no-op jobs per second.

    uv run python -m bench.worker_throughput [--events 5000]

Both queues are filled first, then one worker process drains its queue while
the count is polled; the rate is measured from the first processed item to the
last. The baseline is an arq worker running a no-op job with the same job-loop
settings (``max_jobs``, ``poll_delay``) on the same Redis, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

from arq.connections import RedisSettings, create_pool

from bench.common import bench_env, worker
from memsvc.events import SyncTurnEvent, SyncTurnPayload, encode, stamp


async def drain_rate(remaining: Callable[[], Awaitable[int]], total: int) -> float:
    """Items per second from the first item leaving the queue until it is empty."""
    first: tuple[float, int] | None = None
    while True:
        left = await remaining()
        now = time.perf_counter()
        if first is None and left < total:
            first = (now, left)
        if left <= 0:
            break
        await asyncio.sleep(0.005)
    assert first is not None
    started, left_then = first
    return left_then / max(now - started, 1e-9)


async def main(events: int) -> None:
    async with bench_env() as bench:
        redis = bench.redis
        # memsvc: sync_turn events through the consumer, turn ledger, log, ack
        async with redis.pipeline(transaction=False) as pipe:
            for n in range(events):
                event = SyncTurnEvent(
                    **stamp(),
                    user_id=f"u{n % 50}",
                    agent_id="a",
                    thread_id=f"t{n % 500}",
                    payload=SyncTurnPayload(
                        user_content="question " * 20, assistant_content="answer " * 40
                    ),
                )
                pipe.xadd(bench.keys.events, {"e": encode(event)})
            await pipe.execute()

        async def log_missing() -> int:
            return events - await redis.xlen(bench.keys.log)

        async with worker(bench):
            ours = await drain_rate(log_missing, events)

        # arq: no-op jobs with the same job-loop settings
        queue = f"{bench.keys.prefix}:noop"
        pool = await create_pool(
            RedisSettings.from_dsn(bench.settings.redis_url or ""), default_queue_name=queue
        )
        for n in range(events):
            await pool.enqueue_job("noop", _job_id=f"{bench.keys.prefix}:noop:{n}")
        proc = subprocess.Popen(
            [sys.executable, "-m", "arq", "bench.noop_worker.NoopWorkerSettings"],
            env={**bench.env, "BENCH_NOOP_QUEUE": queue},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        async def jobs_left() -> int:
            return int(await redis.zcard(queue))

        baseline = await drain_rate(jobs_left, events)
        proc.wait(timeout=120)
        await pool.aclose()

    sys.stdout.write(f"\nworker throughput, {events:,} items, one worker process\n")
    sys.stdout.write(f"  arq no-op jobs           {baseline:>10,.0f} /s   1.00\n")
    sys.stdout.write(f"  sync_turn events         {ours:>10,.0f} /s   {ours / baseline:.2f}\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    asyncio.run(main(parser.parse_args().events))
