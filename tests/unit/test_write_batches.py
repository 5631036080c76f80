"""Writes queued for one file go to disk together, each with its own outcome; waiters are woken."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import structlog
from redis.asyncio import Redis

from memsvc.builtin.tool import MemoryTool
from memsvc.errors import LockLostError
from memsvc.keys import Keys
from memsvc.paths import DataLayout
from memsvc.security.scanner import Scanner
from memsvc.service.sessions import SessionState
from memsvc.store.edits import Applied, EditRejected, Op
from memsvc.store.filestore import BuiltinStore, Limits
from memsvc.store.journal import FileJournal
from memsvc.store.locks import RedisLocks, wake_key
from memsvc.store.memfile import parse
from memsvc.store.receipts import Receipt, Receipts

KEYS = Keys("batch")


def store_on(
    layout: DataLayout, redis: Redis, *, limits: Limits | None = None
) -> tuple[BuiltinStore, FileJournal]:
    journal = FileJournal(redis, KEYS)
    locks = RedisLocks(redis, KEYS, lease_seconds=5, wait_seconds=10)
    store = BuiltinStore(
        layout, locks, user_id="u1", agent_id="a1", limits=limits or Limits(), journal=journal
    )
    return store, journal


def count_commits(journal: FileJournal, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    commits: list[int] = []
    original = journal.commit

    async def counted(*args: Any, **kwargs: Any) -> int:
        commits.append(len(kwargs.get("receipts", ())))
        return await original(*args, **kwargs)

    monkeypatch.setattr(journal, "commit", counted)
    return commits


async def test_writes_queued_for_one_file_share_one_commit_and_keep_their_order(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, journal = store_on(layout, fake_redis, limits=Limits(user=10_000))
    commits = count_commits(journal, monkeypatch)
    contents = [f"fact {n}" for n in range(30)]
    results = await asyncio.gather(*(store.write("user", [Op("add", c)]) for c in contents))
    # each write hears of its own change
    assert [[change.content for change in r.changes] for r in results] == [[c] for c in contents]
    assert await store.read("user") == contents  # answered once committed...
    await store.settled()
    assert parse(store.path("user").read_bytes()).entries == contents  # ...renamed right after
    assert len(commits) < len(contents) / 2, commits  # the first alone, then the rest together
    head = await journal.head("user", "u1", "a1")
    assert head is not None and head.version == len(commits)


async def test_a_write_refused_in_a_batch_leaves_its_neighbours_applied(
    layout: DataLayout, fake_redis: Redis
) -> None:
    store, _ = store_on(layout, fake_redis, limits=Limits(user=40))

    def refuse_secret(before: list[str], applied: Applied) -> None:
        if any("secret" in change.content for change in applied.changes):
            raise EditRejected("blocked", op_index=0, op=Op("add"))

    writes = [
        store.write("user", [Op("add", "short one")]),
        store.write("user", [Op("add", "x" * 39)]),  # does not fit beside the first
        store.write("user", [Op("add", "a secret")], vet=refuse_secret),
        store.write("user", [Op("add", "short two")]),
    ]
    outcomes = await asyncio.gather(*writes, return_exceptions=True)
    assert isinstance(outcomes[0], Applied) and isinstance(outcomes[3], Applied)
    assert isinstance(outcomes[1], EditRejected) and isinstance(outcomes[2], EditRejected)
    await store.settled()
    assert parse(store.path("user").read_bytes()).entries == ["short one", "short two"]


async def test_a_failed_commit_fails_every_write_of_its_batch_and_lands_none(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, journal = store_on(layout, fake_redis)
    await store.write("user", [Op("add", "before")])
    original = journal.commit
    calls = 0

    async def lost_once(*args: Any, **kwargs: Any) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise LockLostError("another writer committed this file first")
        return await original(*args, **kwargs)

    monkeypatch.setattr(journal, "commit", lost_once)
    # hold the file's lock so that both writes queue up and go as one batch
    await fake_redis.set(KEYS.store_lock("user", "u1", "a1"), "elsewhere", px=60_000)
    first = asyncio.create_task(store.write("user", [Op("add", "one")]))
    second = asyncio.create_task(store.write("user", [Op("add", "two")]))
    await asyncio.sleep(0.05)
    await fake_redis.delete(KEYS.store_lock("user", "u1", "a1"))
    await fake_redis.rpush(wake_key(KEYS.store_lock("user", "u1", "a1")), "1")
    outcomes = await asyncio.gather(first, second, return_exceptions=True)
    assert all(isinstance(o, LockLostError) for o in outcomes), outcomes
    assert calls == 1
    assert await store.read("user") == ["before"]
    assert (await store.write("user", [Op("add", "after")])).changes  # the file is usable


async def test_a_write_whose_caller_gave_up_while_queued_is_dropped(
    layout: DataLayout, fake_redis: Redis
) -> None:
    store, _ = store_on(layout, fake_redis)
    lock = KEYS.store_lock("user", "u1", "a1")
    await fake_redis.set(lock, "elsewhere", px=60_000)
    first = asyncio.create_task(store.write("user", [Op("add", "first")]))
    await asyncio.sleep(0.05)  # the first is the batch now waiting for the lock
    kept = asyncio.create_task(store.write("user", [Op("add", "kept")]))
    dropped = asyncio.create_task(store.write("user", [Op("add", "dropped")]))
    await asyncio.sleep(0.01)
    dropped.cancel()
    await fake_redis.delete(lock)
    await fake_redis.rpush(wake_key(lock), "1")
    await asyncio.gather(first, kept)
    with pytest.raises(asyncio.CancelledError):
        await dropped
    assert await store.read("user") == ["first", "kept"]


async def test_each_event_of_a_batch_keeps_its_own_receipt_and_applies_once(
    layout: DataLayout, fake_redis: Redis
) -> None:
    store, _ = store_on(layout, fake_redis)
    failures = SessionState(fake_redis, KEYS).failures("u1", "a1")
    tool = MemoryTool(store, Scanner(), failures)
    receipts = Receipts(fake_redis, KEYS)
    await failures.record("t", "e0")  # a failure earlier in the turn: a successful write clears it

    async def call(n: int) -> dict[str, Any]:
        args = {"action": "add", "target": "user", "content": f"entry {n}"}
        outcome = await tool.call(args, thread_id="t", receipt=receipts.for_event("u1", f"e{n}"))
        return outcome.result

    results = await asyncio.gather(*(call(n) for n in range(8)))
    assert all(r["success"] for r in results)
    for n in range(8):
        receipt = await receipts.for_event("u1", f"e{n}").load()
        assert isinstance(receipt, Receipt) and receipt.result == results[n]
        assert [c.content for c in receipt.changes] == [f"entry {n}"]
    assert await fake_redis.get(failures.key("t")) is None
    again = await call(3)  # a redelivery: the same answer, no second entry
    assert again == results[3]
    assert await store.read("user") == [f"entry {n}" for n in range(8)]


async def test_a_waiter_is_woken_by_the_release_instead_of_polling(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    locks = RedisLocks(fake_redis, KEYS, lease_seconds=30, wait_seconds=30)
    other = RedisLocks(fake_redis, KEYS, lease_seconds=30, wait_seconds=30)  # another process
    blocked: list[float] = []
    original = fake_redis.blpop

    async def counted(*args: Any, **kwargs: Any) -> Any:
        blocked.append(kwargs["timeout"])
        return await original(*args, **kwargs)

    monkeypatch.setattr(fake_redis, "blpop", counted)
    order: list[str] = []
    held = asyncio.Event()

    async def holder() -> None:
        async with other.hold_key("k"):
            held.set()
            await asyncio.sleep(0.4)
            order.append("released")

    async def waiter() -> None:
        await held.wait()
        async with locks.hold_key("k"):
            order.append("acquired")

    await asyncio.gather(holder(), waiter())
    assert order == ["released", "acquired"]
    assert len(blocked) == 1, blocked  # one blocked wait, ended by the release


async def test_a_lease_whose_holder_died_is_taken_when_it_runs_out(fake_redis: Redis) -> None:
    await fake_redis.set("k", "a-dead-holder", px=300)  # nobody will release it
    locks = RedisLocks(fake_redis, KEYS, lease_seconds=5, wait_seconds=10)
    started = time.monotonic()
    async with locks.hold_key("k") as lease:
        assert lease.fence is not None and await fake_redis.get("k") == lease.fence.token.encode()
    assert time.monotonic() - started >= 0.25


async def test_a_batch_runs_as_its_first_writes_caller(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its log lines are those of the caller of its first write (its event's and thread's),
    not of whichever caller started the file's queue."""
    store, journal = store_on(layout, fake_redis)
    seen: list[tuple[str, int]] = []  # the thread each batch ran as, and its size
    write_batch = BuiltinStore._write_batch
    committing, go_on = asyncio.Event(), asyncio.Event()

    async def watched(self: BuiltinStore, target: Any, batch: list[Any]) -> None:
        seen.append((structlog.contextvars.get_contextvars()["thread_id"], len(batch)))
        await write_batch(self, target, batch)

    async def held(*args: Any, **kwargs: Any) -> int:
        if not committing.is_set():
            committing.set()
            await go_on.wait()
        return await commit(*args, **kwargs)

    commit = journal.commit
    monkeypatch.setattr(BuiltinStore, "_write_batch", watched)
    monkeypatch.setattr(journal, "commit", held)

    async def add(thread: str) -> Applied:
        structlog.contextvars.bind_contextvars(thread_id=thread)
        return await store.write("user", [Op("add", f"from {thread}")])

    first = asyncio.create_task(add("t1"))
    async with asyncio.timeout(30):
        await committing.wait()
    later = [asyncio.create_task(add(thread)) for thread in ("t2", "t3")]
    await asyncio.sleep(0)  # both queued behind the first batch
    go_on.set()
    await asyncio.gather(first, *later)
    await store.settled()
    assert seen == [("t1", 1), ("t2", 2)]
    assert await store.read("user") == ["from t1", "from t2", "from t3"]
