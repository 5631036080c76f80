"""The service for real: worker processes on the machine's Redis, killed at bad moments."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memsvc.client import MemoryClient
from memsvc.service.sessions import SessionState
from memsvc.store.memfile import parse
from tests.conftest import until
from tests.integration.conftest import WorkerPool

pytestmark = pytest.mark.integration


def entries(data_dir: Path, relative: str) -> list[str]:
    path = data_dir / relative
    if not path.exists():
        return []
    parsed = parse(path.read_bytes())
    assert parsed.canonical, f"{relative} is not canonical"
    return parsed.entries


async def test_two_workers_and_200_concurrent_agents_lose_no_write(workers: WorkerPool) -> None:
    await workers.start(2)
    users, agents_per_user = 20, 10
    data_dir = Path(workers.env["MEMSVC_DATA_DIR"])

    async def agent(mem: MemoryClient, user: int, agent: int) -> list[dict[str, Any]]:
        u, a = f"user-{user}", f"agent-{agent}"
        return [
            await mem.call_tool(
                u,
                a,
                f"t-{agent}",
                "memory",
                {
                    "target": "user",
                    "operations": [
                        {"action": "add", "content": f"{a} says fact one"},
                        {"action": "add", "content": f"{a} says fact two"},
                    ],
                },
            ),
            await mem.call_tool(
                u,
                a,
                f"t-{agent}",
                "memory",
                {"action": "add", "target": "memory", "content": f"private note of {a}"},
            ),
        ]

    async with (
        MemoryClient(settings=workers.settings()) as one,
        MemoryClient(settings=workers.settings()) as two,
    ):
        results = await asyncio.gather(
            *(
                agent(one if n % 2 else two, user, n)
                for user in range(users)
                for n in range(user * agents_per_user, (user + 1) * agents_per_user)
            )
        )
    assert all(r["success"] for pair in results for r in pair), [
        r for pair in results for r in pair if not r["success"]
    ][:3]
    await workers.renamed()
    for user in range(users):
        agents = range(user * agents_per_user, (user + 1) * agents_per_user)
        shared = entries(data_dir, f"users/user-{user}/USER.md")
        assert sorted(shared) == sorted(
            f"agent-{n} says fact {w}" for n in agents for w in ("one", "two")
        )
        for n in agents:
            assert entries(data_dir, f"users/user-{user}/agents/agent-{n}/MEMORY.md") == [
                f"private note of agent-{n}"
            ]
    served = [e.detail["worker"] async for e in _runtime_log(workers) if e.type == "memory_write"]
    assert len(served) == users * agents_per_user * 2
    assert len(set(served)) == 2  # both workers took their share
    assert min(served.count(w) for w in set(served)) > len(served) / 10


async def test_an_event_running_three_claim_idles_is_processed_and_logged_once(
    workers: WorkerPool,
) -> None:
    """The file is held busy by another writer for 3x claim_idle: the write waits for it
    in a live worker, and the second worker must not claim it meanwhile."""
    await workers.start(2)
    claim_idle = float(workers.env["MEMSVC_CLAIM_IDLE_SECONDS"])
    lock = workers.keys.store_lock("user", "slow", "a1")
    await workers.redis.set(lock, "another writer", px=int(3 * claim_idle * 1000))
    # generous: the call itself waits 3x claim_idle for the lock
    settings = workers.settings().model_copy(update={"tool_deadline_seconds": 60.0})
    async with MemoryClient(settings=settings) as mem:
        result = await mem.call_tool(
            "slow", "a1", "t1", "memory", {"action": "add", "target": "user", "content": "waited"}
        )
    assert result["success"] is True, result
    assert await workers.redis.get(lock) is None  # it really waited for the other writer
    data_dir = Path(workers.env["MEMSVC_DATA_DIR"])
    assert entries(data_dir, "users/slow/USER.md") == ["waited"]
    records = [e async for e in _runtime_log(workers) if e.type == "memory_write"]
    assert [(e.outcome, e.detail["deliveries"]) for e in records] == [("ok", 1)]
    assert all(p.poll() is None for p in workers.procs)


async def test_sigkill_mid_memory_write_loses_nothing_and_applies_nothing_twice(
    workers: WorkerPool,
) -> None:
    await workers.start(2)
    data_dir = Path(workers.env["MEMSVC_DATA_DIR"])
    agents, rounds = 40, 6

    async def agent(mem: MemoryClient, n: int) -> None:
        user, name = f"user-{n % 8}", f"agent-{n}"
        path = f"users/{user}/agents/{name}/MEMORY.md"
        for r in range(rounds):
            for args in (
                {"action": "add", "target": "memory", "content": f"temp {name} {r}"},
                {"action": "remove", "target": "memory", "old_text": f"temp {name} {r}"},
                {"action": "add", "target": "memory", "content": f"kept {name} {r}"},
            ):
                result = await mem.call_tool(user, name, "t", "memory", args)
                if result.get("pending"):  # its worker died: wait until a survivor applies it
                    want = args["action"] == "add"
                    text = args.get("content") or args["old_text"]

                    async def settled(text: str = text, want: bool = want) -> bool:
                        return (text in entries(data_dir, path)) == want

                    await until(settled)
                else:
                    assert result["success"], result

    async with MemoryClient(settings=workers.settings()) as mem:
        running = asyncio.gather(*(agent(mem, n) for n in range(agents)))
        held = await workers.kill_while_busy(0)
        await running
    assert held >= 1
    for n in range(agents):
        got = entries(data_dir, f"users/user-{n % 8}/agents/agent-{n}/MEMORY.md")
        assert got == [f"kept agent-{n} {r}" for r in range(rounds)], (n, got)
    # a write applied twice would answer "already exists" or "No entry matched" the 2nd time
    log = [e async for e in _runtime_log(workers)]
    writes = [e for e in log if e.type == "memory_write" and e.outcome == "ok"]
    assert len({e.event_id for e in writes}) == agents * rounds * 3
    assert all(e.detail["result"]["success"] for e in writes)
    assert any(e.detail["deliveries"] > 1 for e in writes)  # the dead worker's were claimed


async def _runtime_log(workers: WorkerPool) -> Any:
    from memsvc.service.eventlog import EventLog

    async for entry in EventLog(workers.redis, workers.keys).entries():
        yield entry


async def test_sigkill_mid_sync_turn_numbers_every_turn_exactly_once(
    workers: WorkerPool,
) -> None:
    await workers.start(2)
    threads, turns = 30, 10
    sent: dict[str, list[str]] = {}

    async def publish(mem: MemoryClient) -> None:
        for t in range(turns):
            for th in range(threads):
                event_id = await mem.sync_turn(
                    "u1", "a1", f"thread-{th}", user_content=f"q{t}", assistant_content=f"a{t}"
                )
                sent.setdefault(f"thread-{th}", []).append(event_id)

    async with MemoryClient(settings=workers.settings()) as mem:
        publishing = asyncio.create_task(publish(mem))
        held = await workers.kill_while_busy(0)
        await publishing
    assert held >= 1
    state = SessionState(workers.redis, workers.keys)

    async def all_numbered() -> bool:
        counts = [await state.turn_count("u1", "a1", f"thread-{th}") for th in range(threads)]
        return sum(counts) == threads * turns and await _pending(workers) == 0

    await until(all_numbered)
    for thread, ids in sent.items():
        ledger = await workers.redis.hgetall(workers.keys.turns("u1", "a1", thread))
        numbers = {k.decode(): int(v) for k, v in ledger.items() if k != b"_next"}
        assert set(numbers) == set(ids)  # every turn arrived
        # each numbered once, in the order it was published, whichever worker took it
        assert [numbers[event_id] for event_id in ids] == list(range(1, turns + 1))
        assert int(ledger[b"_next"]) == turns  # no number was burnt by a redelivery
    log = [e async for e in _runtime_log(workers) if e.type == "sync_turn"]
    assert any(e.detail["deliveries"] > 1 for e in log)  # the dead worker's were claimed


async def _pending(workers: WorkerPool) -> int:
    info = await workers.redis.xpending(workers.keys.events, workers.keys.workers_group)
    return int(info["pending"])


async def test_a_malformed_event_is_recorded_and_the_worker_stays_up(workers: WorkerPool) -> None:
    await workers.start(1)
    not_json = await workers.redis.xadd(workers.keys.events, {"e": b"\xff not json"})
    escaping = await workers.redis.xadd(
        workers.keys.events,
        {
            "e": json.dumps(
                {
                    "id": "x" * 32,
                    "type": "memory_write",
                    "user_id": "../../root",
                    "agent_id": "a",
                    "thread_id": "t",
                    "ts": 0,
                    "payload": {"args": {}},
                }
            ).encode()
        },
    )
    async with MemoryClient(settings=workers.settings()) as mem:
        result = await mem.call_tool(
            "u1", "a1", "t", "memory", {"action": "add", "target": "user", "content": "still up"}
        )
    assert result["success"] is True, result

    async def both_parked() -> bool:
        return int(await workers.redis.llen(workers.keys.dead_events)) >= 2

    await until(both_parked)  # the add's reply is not ordered against their parking
    dead = [json.loads(raw) for raw in await workers.redis.lrange(workers.keys.dead_events, 0, -1)]
    # each parked once with its own reason; events that finish in different turns of the
    # worker's loop send their pipelines apart, and those may land in either order
    assert len(dead) == 2
    assert {d["stream_id"].encode(): d["error"][:14] for d in dead} == {
        not_json: "not UTF-8 JSON",
        escaping: "user_id: Value",
    }
    errors = [d["error"][:14] for d in dead]
    assert workers.procs[0].poll() is None
    assert not (Path(workers.env["MEMSVC_DATA_DIR"]).parent / "root").exists()
    listed = await asyncio.to_thread(workers.run_cli, "dead-events", "list")
    assert [d["error"][:14] for d in json.loads(listed.stdout)] == errors
    # published again, the first is refused again: parked once more, last in the list
    retried = await asyncio.to_thread(workers.run_cli, "dead-events", "retry", "--limit", "1")
    assert json.loads(retried.stdout)["republished"] == 1, retried.stderr

    async def parked_again() -> bool:
        raw = await workers.redis.lrange(workers.keys.dead_events, 0, -1)
        return [json.loads(r)["error"][:14] for r in raw] == [*errors[1:], errors[0]]

    await until(parked_again)
    # a record memsvc did not park is left where it is, and the retry says so (exit 1)
    await workers.redis.lpush(workers.keys.dead_events, b"not json")
    retried = await asyncio.to_thread(workers.run_cli, "dead-events", "retry", "--limit", "1")
    assert retried.returncode == 1, retried.stderr
    assert json.loads(retried.stdout)["left"] == [
        {"position": 0, "why": "not an event memsvc parked"}
    ]

    async def parked_once_more() -> bool:
        raw = await workers.redis.lrange(workers.keys.dead_events, 0, -1)
        return raw[0] == b"not json" and [json.loads(r)["error"][:14] for r in raw[1:]] == errors

    await until(parked_once_more)


async def test_the_log_can_be_tailed_and_replayed_from_the_command_line(
    workers: WorkerPool, tmp_path: Path
) -> None:
    await workers.start(1)
    async with MemoryClient(settings=workers.settings()) as mem:
        await mem.call_tool(
            "alice",
            "coder",
            "t1",
            "memory",
            {"action": "add", "target": "user", "content": "Name: Alice"},
        )
        await mem.call_tool(
            "bob",
            "coder",
            "t2",
            "memory",
            {"action": "add", "target": "memory", "content": "bob's note"},
        )
        await mem.prefetch("alice", "coder", "t1")
    tail = await asyncio.to_thread(
        workers.run_cli, "log", "tail", "--user", "alice", "--type", "memory_write"
    )
    assert tail.returncode == 0, tail.stderr
    lines = tail.stdout.strip().splitlines()
    assert len(lines) == 1 and "memory_write" in lines[0] and "alice/coder/t1" in lines[0]
    assert "Entry added." in lines[0]
    as_json = await asyncio.to_thread(workers.run_cli, "log", "tail", "--json", "--limit", "3")
    assert [json.loads(line)["type"] for line in as_json.stdout.splitlines()] == [
        "memory_write",
        "memory_write",
        "prefetch",
    ]

    replay = await asyncio.to_thread(
        workers.run_cli, "replay", "--into", str(tmp_path / "replayed"), "--diff"
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr
    report = json.loads(replay.stdout)
    assert report["events"] == 2 and report["same_result"] == 2
    assert set(report["files"].values()) == {"same"}


async def test_log_tail_follow_streams_new_entries(workers: WorkerPool) -> None:
    await workers.start(1)
    follow = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "memsvc.cli",
        "log",
        "tail",
        "--follow",
        "--type",
        "prefetch",
        env=workers.env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await asyncio.sleep(1.0)  # let it reach the follow loop
        async with MemoryClient(settings=workers.settings()) as mem:
            await mem.prefetch("carol", "a", "t")
        assert follow.stdout is not None
        line = await asyncio.wait_for(follow.stdout.readline(), 20)
        assert b"prefetch" in line and b"carol/a/t" in line
    finally:
        follow.terminate()
        await follow.wait()
