"""The builtin store: bytes on disk, backups, locks and what happens when they fail."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

import pytest
import structlog.testing
from redis.asyncio import Redis

from memsvc.errors import LockLostError, LockTimeoutError, LockUnavailableError
from memsvc.keys import Keys
from memsvc.paths import DataLayout, Target
from memsvc.store.edits import EditRejected, Op
from memsvc.store.filestore import BuiltinStore, Limits
from memsvc.store.journal import FileJournal
from memsvc.store.locks import FileLocks, RedisLocks
from memsvc.store.memfile import parse
from tests.conftest import free_port

pytestmark = pytest.mark.usefixtures("file_jobs")


async def test_writes_the_hermes_byte_format(file_store: BuiltinStore) -> None:
    await file_store.write("user", [Op("add", "Name: 张三"), Op("add", "Likes\nshort answers")])
    assert file_store.path("user").read_bytes() == "Name: 张三\n§\nLikes\nshort answers".encode()


async def test_files_are_private_to_the_owner(file_store: BuiltinStore) -> None:
    await file_store.write("memory", [Op("add", "note")])
    mode = stat.S_IMODE(os.stat(file_store.path("memory")).st_mode)
    assert mode == 0o600


async def test_user_file_is_shared_by_agents_and_memory_file_is_not(layout: DataLayout) -> None:
    locks = FileLocks(layout)
    a = BuiltinStore(layout, locks, user_id="u1", agent_id="a")
    b = BuiltinStore(layout, locks, user_id="u1", agent_id="b")
    await a.write("user", [Op("add", "shared fact")])
    await a.write("memory", [Op("add", "a's note")])
    assert await b.read("user") == ["shared fact"]
    assert await b.read("memory") == []


async def test_removing_the_last_entry_leaves_a_zero_byte_file(file_store: BuiltinStore) -> None:
    await file_store.write("user", [Op("add", "x")])
    await file_store.write("user", [Op("remove", old_text="x")])
    assert file_store.path("user").read_bytes() == b""


async def test_a_write_rereads_the_file_so_other_writers_are_not_overwritten(
    file_store: BuiltinStore,
) -> None:
    await file_store.write("user", [Op("add", "first")])
    file_store.path("user").write_bytes("first\n§\nwritten elsewhere".encode())
    await file_store.write("user", [Op("add", "third")])
    assert await file_store.read("user") == ["first", "written elsewhere", "third"]


async def test_normalising_a_hand_edited_file_keeps_a_backup_first(
    file_store: BuiltinStore,
) -> None:
    path = file_store.path("user")
    path.parent.mkdir(parents=True)
    original = b"\xef\xbb\xbfhand written\n\xc2\xa7\nhand written\n"
    path.write_bytes(original)
    await file_store.write("user", [Op("add", "new")])
    assert path.read_bytes() == "hand written\n§\nnew".encode()
    backups = sorted(path.parent.glob("USER.md.*.bak"))
    assert [b.read_bytes() for b in backups] == [original]


async def test_a_no_op_leaves_a_non_canonical_file_untouched(file_store: BuiltinStore) -> None:
    path = file_store.path("user")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"a\n")
    await file_store.write("user", [Op("add", "a")])
    assert path.read_bytes() == b"a\n"
    assert not list(path.parent.glob("*.bak"))


async def test_canonical_files_get_no_backup(file_store: BuiltinStore) -> None:
    await file_store.write("user", [Op("add", "a")])
    await file_store.write("user", [Op("add", "b")])
    assert not list(file_store.path("user").parent.glob("*.bak"))


async def test_a_rejected_edit_changes_nothing_on_disk(file_store: BuiltinStore) -> None:
    await file_store.write("user", [Op("add", "a")])
    before = file_store.path("user").read_bytes()
    with pytest.raises(EditRejected):
        await file_store.write("user", [Op("add", "b"), Op("remove", old_text="zzz")])
    assert file_store.path("user").read_bytes() == before


async def test_no_temp_files_are_left_behind(file_store: BuiltinStore) -> None:
    for i in range(5):
        await file_store.write("memory", [Op("add", f"n{i}")])
    names = {p.name for p in file_store.path("memory").parent.iterdir()}
    assert names == {"MEMORY.md", "MEMORY.md.lock"}


async def test_many_waiters_in_one_process_do_not_starve_the_holder(
    layout: DataLayout, fake_redis: Redis
) -> None:
    # 100 tasks on one hot file within a short lease: polling them all would starve the holder
    locks = RedisLocks(
        fake_redis,
        Keys("t"),
        lease_seconds=2,
        wait_seconds=30,
    )
    store = BuiltinStore(
        layout,
        locks,
        user_id="u1",
        agent_id="a1",
        limits=Limits(user=100_000),
        journal=FileJournal(fake_redis, Keys("t")),
    )
    await asyncio.gather(*(store.write("user", [Op("add", f"n{i}")]) for i in range(100)))
    assert len(await store.read("user")) == 100


async def test_concurrent_writers_through_the_redis_lock_lose_nothing(
    layout: DataLayout, fake_redis: Redis
) -> None:
    locks = RedisLocks(
        fake_redis,
        Keys("t"),
        lease_seconds=5,
        wait_seconds=10,
    )
    stores = [
        BuiltinStore(
            layout,
            locks,
            user_id="u1",
            agent_id=f"a{i}",
            limits=Limits(user=100_000),
            journal=FileJournal(fake_redis, Keys("t")),
        )
        for i in range(4)
    ]
    await asyncio.gather(
        *(
            s.write("user", [Op("add", f"fact {i}-{n}")])
            for i, s in enumerate(stores)
            for n in range(25)
        )
    )
    entries = await stores[0].read("user")
    assert sorted(entries) == sorted(f"fact {i}-{n}" for i in range(4) for n in range(25))
    assert parse(stores[0].path("user").read_bytes()).canonical


async def test_concurrent_writers_through_file_locks_lose_nothing(layout: DataLayout) -> None:
    locks = FileLocks(
        layout,
    )
    store = BuiltinStore(layout, locks, user_id="u1", agent_id="a1", limits=Limits(user=100_000))
    await asyncio.gather(*(store.write("user", [Op("add", f"fact {n}")]) for n in range(60)))
    assert sorted(await store.read("user")) == sorted(f"fact {n}" for n in range(60))


async def test_a_writer_whose_lease_expired_does_not_overwrite_the_file(
    layout: DataLayout, fake_redis: Redis
) -> None:
    keys = Keys("t")
    locks = RedisLocks(fake_redis, keys, lease_seconds=5, wait_seconds=1)
    journal = FileJournal(fake_redis, keys)
    store = BuiltinStore(layout, locks, user_id="u1", agent_id="a1", journal=journal)
    await store.write("user", [Op("add", "kept")])
    await store.settled()
    journal.known("user", "u1", "a1")  # a writer that takes the lease first: it holds one

    class StolenLease(RedisLocks):
        @contextlib.asynccontextmanager
        async def hold(
            self, target: Target, user_id: str, agent_id: str, **options: Any
        ) -> AsyncIterator:
            async with super().hold(target, user_id, agent_id, **options) as lease:
                # the lease runs out and another writer takes the key
                await fake_redis.set(keys.store_lock(target, user_id, agent_id), "someone-else")
                yield lease

    stale = BuiltinStore(
        layout, StolenLease(fake_redis, keys), user_id="u1", agent_id="a1", journal=journal
    )
    with pytest.raises(LockLostError):
        await stale.write("user", [Op("add", "must not land")])
    assert await store.read("user") == ["kept"]
    assert [p.name for p in store.path("user").parent.iterdir() if p.suffix == ".tmp"] == []


@pytest.mark.parametrize("keep", [True, False])
async def test_a_lock_kept_outlives_its_lease_while_its_holder_works(
    fake_redis: Redis, keep: bool
) -> None:
    """A mirror waiting on a slow Hindsight holds its lock past the lease: kept, another
    worker waits for it; not kept, the other takes it once the lease runs out."""
    keys = Keys("t")
    mine = RedisLocks(fake_redis, keys, lease_seconds=1.0, wait_seconds=30)
    theirs = RedisLocks(fake_redis, keys, lease_seconds=1.0, wait_seconds=30)
    order: list[str] = []
    held = asyncio.Event()

    async def slow_holder() -> None:
        async with mine.hold_key("t:mirror:lock", keep=keep):
            held.set()
            await asyncio.sleep(2.5)  # two and a half leases
            order.append("first done")

    async def other() -> None:
        await held.wait()
        async with theirs.hold_key("t:mirror:lock"):
            order.append("second in")

    with structlog.testing.capture_logs() as logs:
        await asyncio.gather(slow_holder(), other())
    if keep:
        assert order == ["first done", "second in"]
        assert not [e for e in logs if e["event"] == "lock_expired_before_release"]
    else:
        assert order == ["second in", "first done"]
    assert await fake_redis.get("t:mirror:lock") is None


async def test_a_busy_file_times_out_without_writing(layout: DataLayout, fake_redis: Redis) -> None:
    keys = Keys("t")
    await fake_redis.set(keys.store_lock("user", "u1", "a1"), "held-elsewhere", px=60_000)
    locks = RedisLocks(fake_redis, keys, lease_seconds=5, wait_seconds=0.05)
    store = BuiltinStore(
        layout, locks, user_id="u1", agent_id="a1", journal=FileJournal(fake_redis, keys)
    )
    with pytest.raises(LockTimeoutError):
        await store.write("user", [Op("add", "x")])
    assert not store.path("user").exists()


async def test_redis_outage_is_reported_and_nothing_is_written(layout: DataLayout) -> None:
    dead = Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.2)
    store = BuiltinStore(
        layout,
        RedisLocks(dead, Keys("t")),
        user_id="u1",
        agent_id="a1",
        journal=FileJournal(dead, Keys("t")),
    )
    with pytest.raises(LockUnavailableError):
        await store.write("user", [Op("add", "x")])
    assert not store.path("user").exists()
    await dead.aclose()


async def test_a_lock_released_after_expiry_is_only_logged(
    layout: DataLayout, fake_redis: Redis
) -> None:
    keys = Keys("t")
    locks = RedisLocks(fake_redis, keys, lease_seconds=5, wait_seconds=1)
    async with locks.hold("user", "u1", "a1"):
        await fake_redis.delete(keys.store_lock("user", "u1", "a1"))
    # the key is free again for the next writer
    async with locks.hold("user", "u1", "a1"):
        pass


async def test_an_acquire_whose_caller_left_gives_the_lease_back(fake_redis: Redis) -> None:
    keys = Keys("t")
    locks = RedisLocks(fake_redis, keys, lease_seconds=30, wait_seconds=1)

    async def leave_while_acquiring() -> None:
        async with locks.hold("user", "u1", "a1"):
            raise AssertionError("the caller left before the lock was taken")

    caller = asyncio.ensure_future(leave_while_acquiring())
    await asyncio.sleep(0)  # the acquire is queued in the shared pipeline, not yet answered
    caller.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await caller

    # taken for nobody, it is released at once, not held until its 30 s lease runs out
    async with locks.hold("user", "u1", "a1"):
        pass
    assert await fake_redis.exists(keys.store_lock("user", "u1", "a1")) == 0


async def test_writes_go_on_after_redis_lost_its_scripts(redis_store: BuiltinStore) -> None:
    await redis_store.write("user", [Op("add", "before")])
    await redis_store._journal._redis.script_flush()  # type: ignore[union-attr]  # a restart
    await redis_store.write("user", [Op("add", "after")])
    assert await redis_store.read("user") == ["before", "after"]
