"""A separate OS process that adds entries to USER.md files through the Redis lock.

Run by ``test_concurrent_writers``; takes one JSON argument (see ``main``) and
prints one JSON line with what it wrote: the adds that were acknowledged and the
ones that were refused.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from memsvc.builtin.tool import MemoryTool
from memsvc.config import ConfigLoader
from memsvc.keys import Keys
from memsvc.logs import configure_logging
from memsvc.paths import DataLayout
from memsvc.security.scanner import Scanner
from memsvc.service.sessions import SessionState
from memsvc.store.filestore import BuiltinStore, Limits
from memsvc.store.journal import FileJournal
from memsvc.store.locks import RedisLocks


async def main(spec: dict[str, Any]) -> None:
    """``count`` adds to ``shared-user``, or with ``seconds`` as many as fit, spread over
    ``users`` files, each under a lease of ``lease`` seconds."""
    redis = Redis.from_url(spec["redis_url"])
    keys = Keys(spec["prefix"])
    layout = DataLayout.at(spec["data_dir"])
    worker = spec["worker"]
    users = [f"shared-user-{u}" for u in range(spec.get("users", 0))] or ["shared-user"]
    locks = RedisLocks(redis, keys, lease_seconds=spec.get("lease", 5), wait_seconds=60)
    tools = []
    for user in users:
        builtin = (await ConfigLoader(layout, Path(spec["config"])).effective(user)).config.builtin
        store = BuiltinStore(
            layout,
            locks,
            user_id=user,
            agent_id=f"agent-{worker}",
            limits=Limits(user=builtin.user_char_limit, memory=builtin.memory_char_limit),
            journal=FileJournal(redis, keys),
        )
        counter = SessionState(redis, keys).failures(user, f"agent-{worker}")
        tools.append((user, MemoryTool(store, Scanner(), counter)))
    await asyncio.sleep(max(0.0, spec["start_at"] - time.time()))
    until = time.time() + spec.get("seconds", 0)
    acknowledged: list[list[str]] = []
    failures = []
    n = 0
    while n < spec.get("count", 0) or time.time() < until:
        user, tool = tools[n % len(tools)]
        content = f"worker {worker} fact {n}"
        result = (
            await tool.call({"action": "add", "target": "user", "content": content}, thread_id="t")
        ).result
        if result["success"]:
            acknowledged.append([user, content])
        else:
            failures.append(result)
        n += 1
    await redis.aclose()
    out = {"worker": worker, "acknowledged": acknowledged, "failures": failures}
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    configure_logging("warning")  # to stderr: stdout carries the report
    asyncio.run(main(json.loads(sys.argv[1])))
