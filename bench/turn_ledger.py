"""What a thread's turn ledger holds in Redis after many turns: unbounded, and bounded.

    uv run python -m bench.turn_ledger [--turns 10000]

The ledger numbers each ``sync_turn`` once however often it is delivered. It used
to remember every event id of a thread; it now remembers at least the newest
``TURN_LEDGER_SIZE`` and at most twice that (two generations). Both are measured
in the same run on the machine's Redis (``MEMSVC_TEST_REDIS_URL``), under a key
prefix of their own, removed afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid

from redis.asyncio import Redis

from memsvc.keys import Keys
from memsvc.service.sessions import TURN_LEDGER_SIZE, SessionState


async def ledger_bytes(redis: Redis, keys: Keys, size: int, turns: int) -> tuple[int, int]:
    """Bytes of the ledger, and of its previous generation."""
    state = SessionState(redis, keys, ledger_size=size)
    for _ in range(turns):
        await state.turn_index("u", "a", "t", uuid.uuid4().hex)
    ledger = await redis.memory_usage(keys.turns("u", "a", "t")) or 0
    earlier = await redis.memory_usage(keys.earlier_turns("u", "a", "t")) or 0
    return ledger, earlier


async def main(turns: int) -> None:
    redis = Redis.from_url(os.environ.get("MEMSVC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"))
    prefixes = [f"bench-ledger-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    try:
        # as before: one generation that is never rotated, remembering every id
        unbounded, _ = await ledger_bytes(redis, Keys(prefixes[0]), 10**9, turns)
        bounded = sum(await ledger_bytes(redis, Keys(prefixes[1]), TURN_LEDGER_SIZE, turns))
    finally:
        for prefix in prefixes:
            found = [k async for k in redis.scan_iter(match=f"{prefix}*")]
            if found:
                await redis.delete(*found)
        await redis.aclose()
    print(f"{turns:,} turns in one thread")
    print(f"ledger remembering every turn (as before):            {unbounded:10,} B")
    print(f"ledger remembering the newest {TURN_LEDGER_SIZE:,} (two generations):  {bounded:10,} B")
    print(f"ratio:                                                 {unbounded / bounded:10.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10_000)
    asyncio.run(main(parser.parse_args().turns))
