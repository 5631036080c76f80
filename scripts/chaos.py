"""Drive worker processes hard while hurting them, then count what was lost.

    python scripts/chaos.py kill --seconds 60 --workers 3   # SIGKILL a worker, start another
    python scripts/chaos.py stop --seconds 60 --workers 3   # SIGSTOP a worker past claim_idle

Agents add distinct entries through ``MemoryClient`` against the Redis of
``MEMSVC_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``) under a key prefix
of their own, into a temporary data dir. A call answered ``pending`` is looked up
by event id once the storm is over. At the end every acknowledged add must be in
its file exactly once - as memsvc serves it the moment the storm ends, on disk once
the files settled, and on disk once the workers stopped; the script prints one JSON
line with the counts and exits 1 if anything was lost or doubled. A file can lag its
journal for a moment when a stalled writer resumes and renames its older version late
(memsvc serves the journal's head meanwhile, and that writer repairs the file): the
report says how many files lagged at the end and how long they took to settle.
Everything it starts, it stops and removes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from memsvc.client import MemoryClient
from memsvc.keys import Keys
from memsvc.paths import DataLayout
from memsvc.settings import ServiceSettings
from memsvc.store.atomicfile import read_file
from memsvc.store.filestore import CurrentFile
from memsvc.store.journal import FileJournal
from memsvc.store.memfile import parse

USERS, AGENTS_PER_USER = 8, 4


def files_on_disk(data_dir: Path) -> list[tuple[str, str]]:
    """Every (user, entry) of the USER.md files as they are on disk."""
    found: list[tuple[str, str]] = []
    for u in range(USERS):
        path = data_dir / "data" / "users" / f"user-{u}" / "USER.md"
        if path.exists():
            found += [(f"user-{u}", e) for e in parse(path.read_bytes()).entries]
    return found


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM (after SIGCONT, for a stopped one): each finishes what it holds."""
    for w in workers:
        if w.poll() is None:
            w.send_signal(signal.SIGCONT)
            w.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.wait(timeout=20)
        except subprocess.TimeoutExpired:
            w.kill()


async def read_as_served(
    url: str, prefix: str, data_dir: Path
) -> tuple[list[tuple[str, str]], int]:
    """Every (user, entry) as memsvc serves it, and how many files lag their journal."""
    layout = DataLayout.at(data_dir / "data")
    redis = Redis.from_url(url)
    journal = FileJournal(redis, Keys(prefix))
    served: list[tuple[str, str]] = []
    lagging = 0
    try:
        for u in range(USERS):
            user = f"user-{u}"
            path = layout.anchored(layout.store_file("user", user, f"agent-{u}-0"))
            current = CurrentFile(
                await read_file(path), await journal.head("user", user, f"agent-{u}-0")
            )
            lagging += current.lagging
            served += [(user, e) for e in parse(current.data).entries]
    finally:
        await redis.aclose()
    return served, lagging


async def wait_until_settled(url: str, prefix: str, data_dir: Path, *, within: float) -> float:
    """Seconds until no file lags its journal (the stalled writers repaired them)."""
    start = time.monotonic()
    while time.monotonic() - start < within:
        _, lagging = await read_as_served(url, prefix, data_dir)
        if not lagging:
            break
        await asyncio.sleep(0.2)
    return round(time.monotonic() - start, 2)


async def main(args: argparse.Namespace) -> int:
    url = os.environ.get("MEMSVC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    prefix = f"chaos-{uuid.uuid4().hex[:8]}"
    data_dir = Path(tempfile.mkdtemp(prefix="memsvc-chaos-"))
    config = data_dir / "config.yaml"
    config.write_text("memory:\n  builtin:\n    user_char_limit: 1000000\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMSVC_")},
        "MEMSVC_REDIS_URL": url,
        "MEMSVC_KEY_PREFIX": prefix,
        "MEMSVC_DATA_DIR": str(data_dir / "data"),
        "MEMSVC_CONFIG": str(config),
        "MEMSVC_CLAIM_IDLE_SECONDS": str(args.claim_idle),
        "MEMSVC_LOCK_LEASE_SECONDS": str(args.lease),
        "MEMSVC_LOCK_WAIT_SECONDS": "10",
    }
    logs = data_dir / "logs"
    logs.mkdir()
    workers: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        out = open(logs / f"worker-{len(workers)}.log", "wb")  # noqa: SIM115
        workers.append(
            subprocess.Popen(
                [sys.executable, "-m", "memsvc.cli", "worker"], env=env, stdout=out, stderr=out
            )
        )

    for _ in range(args.workers):
        start()
    settings = ServiceSettings(
        redis_url=url,
        key_prefix=prefix,
        data_dir=data_dir / "data",
        config=config,
        claim_idle_seconds=args.claim_idle,
        tool_deadline_seconds=args.deadline,
        lock_lease_seconds=args.lease,
        hindsight_reflect_timeout_seconds=min(8.0, args.deadline / 2),
    )
    acknowledged: list[tuple[str, str]] = []
    pending: list[tuple[str, str, str]] = []  # user, content, event id
    refused: list[dict[str, Any]] = []
    hurts = 0
    until = time.time() + args.seconds

    async def agent(mem: MemoryClient, user: str, agent_id: str) -> None:
        n = 0
        while time.time() < until:
            content = f"{agent_id} fact {n}"
            args = {"action": "add", "target": "user", "content": content}
            result = await mem.call_tool(user, agent_id, "t", "memory", args)
            if result.get("success"):
                acknowledged.append((user, content))
            elif result.get("pending"):
                pending.append((user, content, result["event_id"]))
            else:
                refused.append(result)
            n += 1

    async def storm() -> None:
        nonlocal hurts
        rng = random.Random(args.seed)
        await asyncio.sleep(2)
        while time.time() < until - 2:
            await asyncio.sleep(rng.uniform(0.5, 1.5) * args.seconds / max(1, args.hurts))
            live = [w for w in workers if w.poll() is None]
            victim = rng.choice(live)
            if args.mode == "kill":
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                start()
            else:
                victim.send_signal(signal.SIGSTOP)
                await asyncio.sleep(rng.uniform(1.5, 3.0) * args.claim_idle)
                victim.send_signal(signal.SIGCONT)
            hurts += 1

    try:
        async with MemoryClient(settings=settings) as mem:
            await asyncio.gather(
                storm(),
                *(
                    agent(mem, f"user-{u}", f"agent-{u}-{a}")
                    for u in range(USERS)
                    for a in range(AGENTS_PER_USER)
                ),
            )
            settle = time.time() + 120  # queued writes land once the storm is over
            unsettled = list(pending)
            while unsettled and time.time() < settle:
                still = []
                for user, content, event_id in unsettled:
                    outcome = await mem.write_outcome(user, event_id)
                    if outcome is None:
                        still.append((user, content, event_id))
                    elif outcome.get("success"):
                        acknowledged.append((user, content))
                    else:
                        refused.append(outcome)
                unsettled = still
                await asyncio.sleep(0.5)
        # What a reader gets now: a file whose stalled writer renamed an older version
        # late is served from its journal's head until the writer repairs it.
        served, lagging = await read_as_served(url, prefix, data_dir)
        lost_as_served = len(set(acknowledged) - set(served))
        settled_in = await wait_until_settled(url, prefix, data_dir, within=60)
        on_disk = files_on_disk(data_dir)
        lost = set(acknowledged) - set(on_disk)
        stop_workers(workers)
        lost_after_stop = len(set(acknowledged) - set(files_on_disk(data_dir)))
        report = {
            "mode": args.mode,
            "seconds": args.seconds,
            "workers": args.workers,
            "hurts": hurts,
            "acknowledged": len(acknowledged),
            "answered_pending": len(pending),
            "never_settled": len(unsettled),
            "refused": len(refused),
            "lost_as_served": lost_as_served,
            "files_lagging_at_end": lagging,
            "seconds_until_files_settled": settled_in,
            "lost": len(lost),
            "lost_after_workers_stopped": lost_after_stop,
            "duplicated": len(on_disk) - len(set(on_disk)),
            "workers_exited": sum(
                1
                for w in workers
                if w.poll() is not None and w.returncode not in (-signal.SIGKILL, 0)
            ),
        }
        sys.stdout.write(json.dumps(report) + "\n")
        bad = (
            lost_as_served
            or report["lost"]
            or lost_after_stop
            or report["duplicated"]
            or report["never_settled"]
        )
        return 1 if bad else 0
    finally:
        stop_workers(workers)
        redis = Redis.from_url(url)
        keys = [k async for k in redis.scan_iter(match=f"*{prefix}*", count=1000)]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["kill", "stop"])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--hurts", type=int, default=14, help="roughly how many kills or stops")
    parser.add_argument("--claim-idle", type=float, default=2.0)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--deadline", type=float, default=5.0, help="the clients' tool deadline")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the data dir and worker logs")
    sys.exit(asyncio.run(main(parser.parse_args())))
