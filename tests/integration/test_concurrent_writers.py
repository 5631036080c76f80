"""Writers in separate OS processes on one USER.md, serialised by the machine's Redis."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from memsvc.memfile import parse

WORKERS, ADDS = 4, 50


@pytest.mark.integration
async def test_four_processes_adding_fifty_entries_each_lose_nothing(
    tmp_path: Path, real_redis: Redis, real_redis_url: str, test_prefix: str
) -> None:
    script = Path(__file__).with_name("writer_process.py")
    config = tmp_path / "config.yaml"  # 200 entries are far over USER.md's default 1,375 chars
    config.write_text("memory:\n  builtin:\n    user_char_limit: 20000\n")
    start_at = time.time() + 1.5  # all processes begin together, after their imports
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            real_redis_url,
            test_prefix,
            str(tmp_path),
            str(config),
            str(w),
            str(ADDS),
            str(start_at),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for w in range(WORKERS)
    ]
    reports = []
    for proc in procs:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        reports.append(json.loads(out))
    assert all(r["failures"] == [] for r in reports), reports

    raw = (tmp_path / "users/shared-user/USER.md").read_bytes()
    parsed = parse(raw)
    assert parsed.canonical
    expected = {f"worker {w} fact {n}" for w in range(WORKERS) for n in range(ADDS)}
    assert set(parsed.entries) == expected
    assert len(parsed.entries) == WORKERS * ADDS
    # each worker's own entries keep their order: no write was replayed or reordered
    for w in range(WORKERS):
        mine = [e for e in parsed.entries if e.startswith(f"worker {w} ")]
        assert mine == [f"worker {w} fact {n}" for n in range(ADDS)]
    assert await real_redis.keys(f"{test_prefix}:*") == []  # every lock was released
