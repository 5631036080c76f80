"""A separate OS process that adds entries to one USER.md through the Redis lock.

Run by ``test_concurrent_writers``; prints one JSON line with its results.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from redis.asyncio import Redis

from memsvc.config import ConfigLoader
from memsvc.keys import Keys
from memsvc.locks import RedisLocks
from memsvc.paths import DataLayout
from memsvc.security import Scanner
from memsvc.sessions import SessionState
from memsvc.store import BuiltinStore, Limits
from memsvc.tool import MemoryTool


async def main(
    redis_url: str,
    prefix: str,
    data_dir: str,
    config: str,
    worker: int,
    count: int,
    start_at: float,
) -> None:
    redis = Redis.from_url(redis_url)
    layout = DataLayout.at(data_dir)
    builtin = (await ConfigLoader(layout, Path(config)).effective("shared-user")).config.builtin
    locks = RedisLocks(redis, Keys(prefix), lease_seconds=5, wait_seconds=60)
    store = BuiltinStore(
        layout,
        locks,
        user_id="shared-user",
        agent_id=f"agent-{worker}",
        limits=Limits(user=builtin.user_char_limit, memory=builtin.memory_char_limit),
    )
    counter = SessionState(redis, Keys(prefix)).failures("shared-user", f"agent-{worker}")
    tool = MemoryTool(store, Scanner(), counter)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    failures = []
    for n in range(count):
        result = (
            await tool.call(
                {"action": "add", "target": "user", "content": f"worker {worker} fact {n}"},
                thread_id="t",
            )
        ).result
        if not result["success"]:
            failures.append(result)
    await redis.aclose()
    sys.stdout.write(json.dumps({"worker": worker, "failures": failures}) + "\n")


if __name__ == "__main__":
    url, prefix, data_dir, config, worker, count, start_at = sys.argv[1:8]
    asyncio.run(main(url, prefix, data_dir, config, int(worker), int(count), float(start_at)))
