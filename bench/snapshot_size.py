"""What frozen snapshots take in Redis: one copy per thread before, one per distinct snapshot now.

    uv run python -m bench.snapshot_size [--threads 1000] [--agents 20] [--baseline REV]

``--agents`` agents (one user each) start ``--threads`` threads between them on
files that do not change, each snapshot about 2.6 KB as the issue measured. The
same snapshots are stored by this tree's cache and by the cache of ``REV``
(its module loaded from git, on the same Redis, in the same run); the figure is
``MEMORY USAGE`` summed over every key each cache wrote.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import types
import uuid

from redis.asyncio import Redis

from bench.common import BASELINE, REDIS_URL, ROOT
from memsvc.builtin.snapshot import RedisSnapshotCache, Snapshot, render_block
from memsvc.keys import Keys


def _baseline_cache(revision: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{revision}:memsvc/builtin/snapshot.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("baseline_snapshot")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:memsvc/builtin/snapshot.py", "exec"), module.__dict__)
    return module


async def _stored(redis: Redis, cache: object, keys: Keys, threads: int, agents: int) -> int:
    for n in range(threads):
        user = f"u{n % agents}"
        memory = [f"{user}: note {i} about the billing service and its deploys" for i in range(36)]
        snapshot = Snapshot(
            memory_block=render_block("memory", memory, 2200),
            user_block=render_block("user", [f"Name: {user}", "Prefers short answers"], 1375),
            taken_at=1_700_000_000.0 + n,
        )
        await cache.put_first(user, "a", f"t{n}", snapshot)  # type: ignore[attr-defined]
    total = 0
    async for key in redis.scan_iter(match=f"{keys.prefix}:*", count=1000):
        total += int(await redis.memory_usage(key) or 0)
    return total


async def main(threads: int, agents: int, baseline: str) -> None:
    old = _baseline_cache(baseline)
    redis = Redis.from_url(REDIS_URL)
    sizes = {}
    try:
        for name, make in (
            ("baseline", lambda k: old.RedisSnapshotCache(redis, k)),
            ("this tree", lambda k: RedisSnapshotCache(redis, k)),
        ):
            keys = Keys(f"memsvc-bench-{uuid.uuid4().hex[:8]}")
            try:
                sizes[name] = await _stored(redis, make(keys), keys, threads, agents)
            finally:
                stale = [k async for k in redis.scan_iter(match=f"{keys.prefix}:*", count=1000)]
                if stale:
                    await redis.delete(*stale)
    finally:
        await redis.aclose()
    before, after = sizes["baseline"], sizes["this tree"]
    sys.stdout.write(
        f"\nsnapshots of {threads:,} threads of {agents} agents, files unchanged "
        f"(baseline: {baseline})\n"
        f"  baseline   {before:>12,} B  ({before / threads:,.0f} B per thread)\n"
        f"  this tree  {after:>12,} B  ({after / threads:,.0f} B per thread)\n"
        f"  ratio      {before / after:>12.1f}x less\n"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    asyncio.run(main(args.threads, args.agents, args.baseline))
