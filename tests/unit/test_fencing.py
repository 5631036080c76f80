"""A writer that stalls anywhere in the write path never costs another writer's write.

Writer A is stopped at each step of its write in turn; meanwhile its lease runs
out and writer B (another host: its own locks and journal objects) writes and is
acknowledged; then A resumes. B's write must survive, A's must be either saved
(and said so) or refused (and said so), and the file must end canonical and in
step with the journal.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from redis.asyncio import Redis

from memsvc.builtin.tool import MemoryTool
from memsvc.errors import LockUnavailableError
from memsvc.keys import Keys
from memsvc.paths import DataLayout
from memsvc.security.scanner import Scanner
from memsvc.service import runtime
from memsvc.service.runtime import Runtime
from memsvc.service.sessions import SessionState
from memsvc.settings import ServiceSettings
from memsvc.store import atomicfile, filejobs, journal
from memsvc.store.edits import Op
from memsvc.store.filestore import BuiltinStore
from memsvc.store.journal import FileJournal
from memsvc.store.locks import FileLocks, RedisLocks, wake_key
from memsvc.store.memfile import parse, serialise
from memsvc.store.receipts import Receipts
from tests.conftest import until

pytestmark = pytest.mark.usefixtures("file_jobs")

KEYS = Keys("fence")
T = TypeVar("T")
# the steps of a write, in order; A commits its write from "committed" on
STEPS = ["locked", "read", "temp_written", "committed", "renamed", "confirmed"]


class Writer:
    """One host's view: its own lock queue, journal and store on the shared Redis."""

    def __init__(self, layout: DataLayout, redis: Redis) -> None:
        self.journal = FileJournal(redis, KEYS)
        self.store = BuiltinStore(
            layout,
            RedisLocks(
                redis,
                KEYS,
                lease_seconds=5,
                wait_seconds=5,
            ),
            user_id="u1",
            agent_id="a1",
            journal=self.journal,
        )
        self.tool = MemoryTool(
            self.store, Scanner(), SessionState(redis, KEYS).failures("u1", "a1")
        )

    async def add(self, content: str) -> dict[str, Any]:
        """The answer to an add, once the file's rename and confirmation that follow the
        answer (given once the journal has the write) are done too."""
        args = {"action": "add", "target": "user", "content": content}
        result = (await self.tool.call(args, thread_id="t")).result
        await self.store.settled()
        return result


def stall_at(
    writer: Writer, step: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[asyncio.Event, asyncio.Event]:
    """Stop ``writer`` once at ``step``: returns (it stopped there, let it go on)."""
    stopped, resume = asyncio.Event(), asyncio.Event()

    async def pause() -> None:
        if not stopped.is_set():
            stopped.set()
            await resume.wait()

    def around(obj: Any, name: str, before: str, after: str) -> None:
        original: Callable[..., Awaitable[Any]] = getattr(obj, name)

        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            if step == before:
                await pause()
            result = await original(*args, **kwargs)
            if step == after:
                await pause()
            return result

        monkeypatch.setattr(obj, name, wrapped)

    around(writer.store, "_head_and_receipts", "locked", "read")
    around(writer.journal, "commit", "temp_written", "committed")
    around(writer.journal, "confirm", "renamed", "confirmed")
    return stopped, resume


def on_disk(path: Path) -> list[str]:
    parsed = parse(path.read_bytes())
    assert parsed.canonical
    return parsed.entries


# A writes under the lock it takes first (another host wrote the file last), or it wrote
# the file last itself: it plans from the disk and its commit takes the lease
WAYS = [("locked", step) for step in STEPS] + [
    ("first", step) for step in STEPS[STEPS.index("temp_written") :]
]


@pytest.mark.parametrize(("way", "step"), WAYS)
async def test_a_writer_stalled_at_any_step_loses_no_acknowledged_write(
    way: str, step: str, layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first commit stalled before it commits holds no lease to lose: overtaken, it
    takes the lock and reads, as any other writer, and its write is saved."""
    a, b = Writer(layout, fake_redis), Writer(layout, fake_redis)
    last = a if way == "first" else Writer(layout, fake_redis)
    assert (await last.add("before both"))["success"]
    takes = commits_of(a, monkeypatch)
    stopped, resume = stall_at(a, step, monkeypatch)
    first = asyncio.create_task(a.add("from A"))
    await stopped.wait()
    await fake_redis.delete(KEYS.store_lock("user", "u1", "a1"))  # A's lease runs out
    second = await b.add("from B")
    assert second["success"], second
    resume.set()
    result = await first

    path = a.store.path("user")
    served = await b.store.read("user")  # readers never see a late rename's loss...
    assert "from B" in served and "before both" in served

    async def in_step() -> bool:  # ...and the file itself is put right
        entries = on_disk(path)
        return "from B" in entries and "before both" in entries

    await until(in_step)
    entries = on_disk(path)
    if way == "first" or STEPS.index(step) >= STEPS.index("committed"):
        assert result["success"], result  # committed before its lease ran out: it counts
    else:
        assert not result["success"] and result["retryable"] is True
    assert ("from A" in entries) is result["success"]
    assert takes[0] is (way == "first")
    assert sorted(await b.store.read("user")) == sorted(entries)
    head = await b.journal.head("user", "u1", "a1")
    assert head is not None and parse(head.data).entries == entries  # file in step
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


async def late_rename_then_death(
    layout: DataLayout, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A commits "from A" and stalls; its lease runs out and B adds "from B"; A renames its
    older version over B's and dies before its confirmation. Returns the file."""
    a, b = Writer(layout, redis), Writer(layout, redis)
    stopped, resume = stall_at(a, "committed", monkeypatch)

    async def dies(*args: Any, **kwargs: Any) -> int:
        raise asyncio.CancelledError  # the process is gone right after its rename

    first = asyncio.create_task(a.add("from A"))
    await stopped.wait()
    await redis.delete(KEYS.store_lock("user", "u1", "a1"))
    assert (await b.add("from B"))["success"]
    monkeypatch.setattr(a.journal, "confirm", dies)
    resume.set()
    assert (await first)["success"]  # answered once renamed, before the confirmation it never made
    path = a.store.path("user")
    assert on_disk(path) == ["from A"]  # the late rename: B's entry is not on disk
    return path


async def test_a_stale_rename_by_a_writer_that_then_died_is_served_and_repaired(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A renames its older version over B's and dies before it can notice: readers still
    see B's write, and the file is put right without anyone writing again."""
    path = await late_rename_then_death(layout, fake_redis, monkeypatch)

    reader = Writer(layout, fake_redis)
    assert sorted(await reader.store.read("user")) == ["from A", "from B"]

    async def repaired() -> bool:
        return sorted(on_disk(path)) == ["from A", "from B"]

    await until(repaired)


def worker_runtime(layout: DataLayout, redis: Redis) -> Runtime:
    """What a worker's check of unconfirmed commits runs on, over the same Redis and files."""
    settings = ServiceSettings(
        data_dir=layout.root,
        key_prefix=KEYS.prefix,
        redis_url=None,
        lock_lease_seconds=0.5,
        lock_wait_seconds=0.5,
    )
    return Runtime(settings, redis)


async def due(redis: Redis) -> list[list[str]]:
    return [json.loads(member) for member in await redis.zrange(KEYS.journal_due, 0, -1)]


async def test_a_stale_rename_nobody_reads_again_is_put_right_by_a_workers_check(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, and then no one reads or writes the file: the commit whose rename was
    never confirmed is looked at by a worker, so the file on disk (what Hermes and
    people read) gets B's write back without waiting for the next access."""
    monkeypatch.setattr(journal, "CHECK_AFTER_SECONDS", 0.0)
    path = await late_rename_then_death(layout, fake_redis, monkeypatch)
    assert len(await due(fake_redis)) == 1  # B confirmed its rename; A never did

    await worker_runtime(layout, fake_redis).check_due_commits()
    assert sorted(on_disk(path)) == ["from A", "from B"]
    assert await due(fake_redis) == []  # A's replacement was renamed: nothing can land late


async def test_a_commit_whose_writer_died_before_its_rename_is_watched_while_it_may_land(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "CHECK_AFTER_SECONDS", 0.0)
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    assert await due(fake_redis) == []  # a confirmed rename leaves nothing to look at
    stopped, resume = stall_at(a, "committed", monkeypatch)
    stalled = asyncio.create_task(a.add("two"))
    await stopped.wait()  # committed, its replacement staged and not renamed
    await fake_redis.delete(KEYS.store_lock("user", "u1", "a1"))  # its lease runs out
    path = a.store.path("user")
    assert on_disk(path) == ["one"]

    worker = worker_runtime(layout, fake_redis)
    await worker.check_due_commits()
    assert on_disk(path) == ["one", "two"]  # put right from the journal
    assert len(await due(fake_redis)) == 1  # its writer may still rename: kept
    monkeypatch.setattr(runtime, "LATE_RENAME_SECONDS", 0.0)
    await worker.check_due_commits()
    assert await due(fake_redis) == []  # given up on after LATE_RENAME_SECONDS
    resume.set()
    assert (await stalled)["success"]  # its late rename is put right by itself
    await until(lambda: _in_step(path))


async def _in_step(path: Path) -> bool:
    return on_disk(path) == ["one", "two"]


async def test_a_check_that_cannot_put_a_file_right_keeps_it_due(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "CHECK_AFTER_SECONDS", 0.0)
    a = Writer(layout, fake_redis)
    stopped, resume = stall_at(a, "committed", monkeypatch)
    stalled = asyncio.create_task(a.add("one"))
    await stopped.wait()  # A still holds the lock: the check's repair cannot take it
    worker = worker_runtime(layout, fake_redis)
    await worker.check_due_commits()
    assert not a.store.path("user").exists() and len(await due(fake_redis)) == 1
    monkeypatch.setattr(runtime, "LATE_RENAME_SECONDS", 0.0)
    await worker.check_due_commits()  # still failing, but an hour has gone by: dropped
    assert await due(fake_redis) == []
    resume.set()
    assert (await stalled)["success"]


async def test_what_no_writer_marked_is_dropped_and_a_mark_that_fails_fails_no_write(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "CHECK_AFTER_SECONDS", 0.0)
    odd = ["not json", '["elsewhere", "u", "a", "fp"]', '["user", "../etc", "a", "fp"]']
    await fake_redis.zadd(KEYS.journal_due, dict.fromkeys(odd, 0))
    await worker_runtime(layout, fake_redis).check_due_commits()
    assert await due(fake_redis) == []
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]  # the scripts are loaded: no second try hides it
    await fake_redis.set(KEYS.journal_due, "not a sorted set")  # every ZADD on it fails
    assert (await a.add("two"))["success"]
    assert on_disk(a.store.path("user")) == ["one", "two"]


async def test_an_edit_made_behind_the_services_back_is_taken_as_it_is(
    layout: DataLayout, fake_redis: Redis
) -> None:
    """Only memsvc's own superseded versions count as stale; a hand edit is not undone."""
    a = Writer(layout, fake_redis)
    await a.add("one")
    await a.add("two")
    path = a.store.path("user")
    path.write_bytes(b"edited by hand")
    assert await a.store.read("user") == ["edited by hand"]
    assert (await a.add("three"))["success"]
    assert on_disk(path) == ["edited by hand", "three"]


@pytest.mark.parametrize("deleted", ["file", "user folder"])
@pytest.mark.parametrize("writes", [1, 2])
async def test_a_file_deleted_by_hand_stays_deleted(
    deleted: str, writes: int, layout: DataLayout, fake_redis: Redis
) -> None:
    """Deleting a memory file by hand is an edit too: the journal's copy of the write that
    created the file is not served or put back."""
    a = Writer(layout, fake_redis)
    for n in range(writes):
        assert (await a.add(f"SSN 123-45-678{n}"))["success"]
    path = a.store.path("user")

    async def confirmed() -> bool:  # the rename's confirmation travels after the reply
        head = await a.journal.head("user", "u1", "a1")
        return head is not None and not head.unconfirmed

    await until(confirmed)
    if deleted == "file":
        path.unlink()
    else:
        shutil.rmtree(path.parent)
    assert await a.store.read("user") == []
    assert (await a.add("likes tea"))["success"]
    assert on_disk(path) == ["likes tea"]


async def test_a_rename_whose_confirmation_was_lost_is_confirmed_by_the_check(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check of a commit left unconfirmed finds its file in place and confirms it, so
    that the file deleted later stays deleted."""
    a = Writer(layout, fake_redis)
    confirm = a.journal.confirm
    lost = []

    async def lose_the_first(*args: Any, **kwargs: Any) -> int:
        if not lost:
            lost.append(args)
            raise LockUnavailableError("cannot confirm to the file journal: connection reset")
        return await confirm(*args, **kwargs)

    monkeypatch.setattr(a.journal, "confirm", lose_the_first)
    assert (await a.add("SSN 123-45-6789"))["success"]

    async def confirmation_lost() -> bool:  # it travels after the reply
        return bool(lost)

    await until(confirmation_lost)
    head = await a.journal.head("user", "u1", "a1")
    assert head is not None and head.fingerprint in head.unconfirmed
    assert await a.store.put_right("user") is False  # the workers' check of due commits
    head = await a.journal.head("user", "u1", "a1")
    assert head is not None and not head.unconfirmed
    path = a.store.path("user")
    path.unlink()
    assert await a.store.read("user") == []
    await asyncio.sleep(0.1)  # no repair brings it back
    assert not path.exists()


async def test_a_writer_cancelled_after_its_late_rename_still_puts_the_file_right(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker drops an event another worker took over (its task is cancelled) right after
    its stalled write renamed an older version over B's: the file still ends in step,
    without anyone reading or writing it again."""
    a, b = Writer(layout, fake_redis), Writer(layout, fake_redis)
    stopped, resume = stall_at(a, "committed", monkeypatch)
    first = asyncio.create_task(a.add("from A"))
    await stopped.wait()
    await fake_redis.delete(KEYS.store_lock("user", "u1", "a1"))
    assert (await b.add("from B"))["success"]
    confirm = a.journal.confirm

    async def cancelled_then_confirm(*args: Any, **kwargs: Any) -> int:
        first.cancel()  # the heartbeat found the event gone, just after the late rename
        await asyncio.sleep(0)
        return await confirm(*args, **kwargs)

    monkeypatch.setattr(a.journal, "confirm", cancelled_then_confirm)
    resume.set()
    with pytest.raises(asyncio.CancelledError):
        await first
    path = a.store.path("user")

    async def settled() -> bool:
        return sorted(on_disk(path)) == ["from A", "from B"]

    await until(settled, timeout=10)


def in_event(call: Callable[[], Awaitable[T]]) -> tuple[asyncio.Task[T], Callable[[], None]]:
    """``call()`` run as a worker runs an event: its task, and what ends the event (the
    consumer ends it once its answer is sent)."""
    context, end = filejobs.event_started()
    return asyncio.get_running_loop().create_task(call(), context=context), end


async def test_a_write_is_answered_before_its_file_is_touched_and_served_meanwhile(
    layout: DataLayout, fake_redis: Redis
) -> None:
    """The answer waits for the journal, not for the disk: the file is synced and renamed
    once the event's answer has left, and until then every reader (on any host) serves
    the write from the journal's head."""
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    args = {"action": "add", "target": "user", "content": "two"}
    task, end = in_event(lambda: a.tool.call(args, thread_id="t"))
    assert (await task).result["success"]
    path = a.store.path("user")
    assert on_disk(path) == ["one"]  # the event has not ended: its answer is on its way
    assert await Writer(layout, fake_redis).store.read("user") == ["one", "two"]
    end()
    await a.store.settled()
    assert on_disk(path) == ["one", "two"]
    head = await a.journal.head("user", "u1", "a1")
    assert head is not None and not head.unconfirmed  # renamed and confirmed


async def test_an_event_that_writes_a_file_twice_is_not_held_up_by_its_first_write(
    layout: DataLayout, fake_redis: Redis
) -> None:
    """The first write's rename waits for the event's end, and the event waits for its
    second write: the second, queued, lets the first go on at once."""
    a = Writer(layout, fake_redis)

    async def twice() -> list[dict[str, Any]]:
        return [
            (
                await a.tool.call({"action": "add", "target": "user", "content": c}, thread_id="t")
            ).result
            for c in ("one", "two")
        ]

    task, end = in_event(twice)
    results = await asyncio.wait_for(task, 30)
    assert all(r["success"] for r in results), results
    end()
    await a.store.settled()
    assert on_disk(a.store.path("user")) == ["one", "two"]


@pytest.mark.parametrize("journalled", [True, False])
async def test_a_replacement_reaches_the_disk_before_its_name_and_its_name_before_it_counts(
    journalled: bool, layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever answers first, the temp file is synced before its rename and the folder
    after it, and the journal hears of the rename only once the folder is synced."""
    if journalled:
        writer = Writer(layout, fake_redis)
        store, steps = writer.store, []
        commit, confirm = writer.journal.commit, writer.journal.confirm

        async def committing(*args: Any, **kwargs: Any) -> int:
            steps.append("commit")
            return await commit(*args, **kwargs)

        async def confirming(*args: Any, **kwargs: Any) -> int:
            steps.append("confirm")
            return await confirm(*args, **kwargs)

        monkeypatch.setattr(writer.journal, "commit", committing)
        monkeypatch.setattr(writer.journal, "confirm", confirming)
    else:
        store, steps = BuiltinStore(layout, FileLocks(layout), user_id="u1", agent_id="a1"), []
    fsync, replace = os.fsync, os.replace

    def syncing(fd: int) -> None:
        steps.append("sync folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "sync file")
        fsync(fd)

    def renaming(*args: Any, **kwargs: Any) -> None:
        steps.append("rename")
        replace(*args, **kwargs)

    monkeypatch.setattr(os, "fsync", syncing)
    monkeypatch.setattr(os, "replace", renaming)
    await store.write("user", [Op("add", "one")])
    await store.settled()
    disk = ["sync file", "rename", "sync folder"]
    assert steps == (["commit", *disk, "confirm"] if journalled else disk)
    assert on_disk(store.path("user")) == ["one"]


async def lagging_after_a_failed_rename(
    layout: DataLayout, redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> Writer:
    """A writer that added "one", then "two", whose rename failed after its commit (the
    answer counts it): the file lags its journal. Renames work again afterwards."""
    a = Writer(layout, redis)
    assert (await a.add("one"))["success"]
    rename = atomicfile._rename

    def fails(staged: atomicfile.Staged) -> None:
        raise OSError(errno.EIO, "the disk failed")

    monkeypatch.setattr(atomicfile, "_rename", fails)
    assert (await a.add("two"))["success"]  # committed: it counts
    monkeypatch.setattr(atomicfile, "_rename", rename)
    return a


async def test_a_rename_that_fails_after_its_commit_loses_no_answered_write(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = await lagging_after_a_failed_rename(layout, fake_redis, monkeypatch)
    path = a.store.path("user")
    assert on_disk(path) == ["one"]
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert await Writer(layout, fake_redis).store.read("user") == ["one", "two"]
    assert (await a.add("three"))["success"]
    assert on_disk(path) == ["one", "two", "three"]


async def test_a_batch_waits_for_the_answers_of_its_own_writes_not_the_first_writers(
    layout: DataLayout, fake_redis: Redis
) -> None:
    """Event A's write starts the file's queue; event B's, queued behind it, is renamed
    once B has answered, while A still runs."""
    a = Writer(layout, fake_redis)
    path = a.store.path("user")

    def add(content: str) -> Callable[[], Awaitable[Any]]:
        args = {"action": "add", "target": "user", "content": content}
        return lambda: a.tool.call(args, thread_id="t")

    first, a_ends = in_event(add("from A"))
    assert (await first).result["success"]
    second, b_ends = in_event(add("from B"))
    assert (await second).result["success"]
    b_ends()

    async def renamed() -> bool:
        return on_disk(path) == ["from A", "from B"]

    await until(renamed, timeout=10)  # A has not ended
    a_ends()
    await a.store.settled()


async def test_a_repair_a_read_asks_for_does_not_wait_for_the_reads_answer(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that finds the file behind its journal starts a repair; the repair's
    rename (and the file's lock) do not wait for the reading event to end."""
    a = await lagging_after_a_failed_rename(layout, fake_redis, monkeypatch)
    path = a.store.path("user")
    assert on_disk(path) == ["one"]
    reading, _ = in_event(lambda: a.store.read("user"))  # an event that never ends here
    assert await reading == ["one", "two"]

    async def repaired() -> bool:
        return on_disk(path) == ["one", "two"]

    await until(repaired, timeout=10)
    assert await fake_redis.get(KEYS.store_lock("user", "u1", "a1")) is None  # released


def commits_of(writer: Writer, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each commit ``writer`` makes from now on is to take its lease (in order)."""
    takes: list[bool] = []
    commit = writer.journal.commit

    async def watched(*args: Any, **kwargs: Any) -> int:
        takes.append(kwargs["takes"])
        return await commit(*args, **kwargs)

    monkeypatch.setattr(writer.journal, "commit", watched)
    return takes


async def test_the_writer_of_a_file_takes_the_lease_with_its_next_commit(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its file on disk still the one it renamed and confirmed, a writer plans its next
    write from the disk and its commit takes the lease: no acquire and no read first.
    The lease goes back with the rename's confirmation, as any other."""
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    acquires = 0
    acquire = RedisLocks._acquire

    async def counted(self: RedisLocks, *args: Any, **kwargs: Any) -> Any:
        nonlocal acquires
        acquires += 1
        return await acquire(self, *args, **kwargs)

    monkeypatch.setattr(RedisLocks, "_acquire", counted)
    takes = commits_of(a, monkeypatch)
    assert (await a.add("two"))["success"]
    assert (await a.add("three"))["success"]
    assert (acquires, takes) == (0, [True, True])
    assert on_disk(a.store.path("user")) == ["one", "two", "three"]
    assert await fake_redis.get(KEYS.store_lock("user", "u1", "a1")) is None  # given back
    head = await a.journal.head("user", "u1", "a1")
    assert head is not None and head.version == 3 and not head.unconfirmed


async def test_a_writer_whose_file_another_host_wrote_since_goes_the_usual_way(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(Overtaken between its plan and its commit, its first commit is refused: see the
    stalled writer above.)"""
    a, b = Writer(layout, fake_redis), Writer(layout, fake_redis)
    assert (await a.add("from A"))["success"]
    assert (await b.add("from B"))["success"]  # the file A renamed is gone
    takes = commits_of(a, monkeypatch)
    assert (await a.add("A again"))["success"]
    assert takes == [False]  # under the lock, from what it read there
    assert on_disk(a.store.path("user")) == ["from A", "from B", "A again"]


async def test_a_first_commit_waits_for_a_lock_another_host_holds(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    lock = KEYS.store_lock("user", "u1", "a1")
    await fake_redis.set(lock, "another host's token", px=5000)
    takes = commits_of(a, monkeypatch)
    adding = asyncio.create_task(a.add("two"))

    async def refused() -> bool:
        return takes == [True]

    await until(refused)
    await asyncio.sleep(0.2)
    assert not adding.done() and on_disk(a.store.path("user")) == ["one"]
    await fake_redis.delete(lock)  # the other host is done: its release wakes the waiter
    await fake_redis.rpush(wake_key(lock), "1")
    assert (await adding)["success"]
    assert takes == [True, False]
    assert on_disk(a.store.path("user")) == ["one", "two"]


async def test_a_first_commit_keeps_an_edit_made_by_hand(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is no longer the one its writer renamed: it goes the usual way, which takes
    an edit behind memsvc's back as it is."""
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    path = a.store.path("user")
    path.write_bytes(serialise(["one", "by hand"]))
    takes = commits_of(a, monkeypatch)
    assert (await a.add("two"))["success"]
    assert takes == [False]
    assert on_disk(path) == ["one", "by hand", "two"]


async def test_a_write_delivered_again_is_not_applied_again_by_a_first_commit(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its receipt is not read before a first commit, which finds it and records nothing:
    the usual way then answers the delivery as the first was answered."""
    a = Writer(layout, fake_redis)
    receipts = Receipts(fake_redis, KEYS)

    async def call(event_id: str, args: dict[str, Any]) -> dict[str, Any]:
        receipt = receipts.for_event("u1", event_id)
        result = (await a.tool.call(args, thread_id="t", receipt=receipt)).result
        await a.store.settled()
        return result

    added = await call("e1", {"action": "add", "target": "user", "content": "two"})
    assert added["success"]
    assert (await call("e2", {"action": "remove", "target": "user", "old_text": "two"}))["success"]
    takes = commits_of(a, monkeypatch)
    again = await call("e1", {"action": "add", "target": "user", "content": "two"})
    assert again["success"] and takes == [True]  # refused by the receipt; nothing else to do
    assert on_disk(a.store.path("user")) == []


@pytest.mark.parametrize("way", ["locked", "first"])
async def test_a_commit_sent_again_after_its_reply_was_lost_answers_as_it_did(
    way: str, layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py sends a command once more when the connection dropped before its reply:
    the commit ran, and its second run must neither refuse the write that counts nor
    leave a first commit waiting for the lease it took itself."""
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    await a.store.settled()
    if way == "locked":
        a.journal.known("user", "u1", "a1")  # as if another host wrote the file last
    batcher = a.journal._commands
    script = batcher.script

    async def sent_twice(sent: Any, keys: Any, args: Any, **kwargs: Any) -> Any:
        if sent is a.journal._commit:
            await script(sent, keys, args, **kwargs)  # its reply lost
        return await script(sent, keys, args, **kwargs)

    monkeypatch.setattr(batcher, "script", sent_twice)
    result = await asyncio.wait_for(a.add("two"), 3)  # within the lease: not its own wait
    assert result["success"], result
    assert on_disk(a.store.path("user")) == ["one", "two"]
    head = await a.journal.head("user", "u1", "a1")
    assert head is not None and head.version == 2 and not head.unconfirmed
    assert await fake_redis.get(KEYS.store_lock("user", "u1", "a1")) is None


async def test_a_first_commit_that_fails_once_its_script_ran_gives_the_lease_back(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    commit = a.journal.commit

    async def cut_short(*args: Any, **kwargs: Any) -> int:
        await commit(*args, **kwargs)
        raise RuntimeError("the shared pipeline was cut short")

    monkeypatch.setattr(a.journal, "commit", cut_short)
    with pytest.raises(RuntimeError):
        await a.store.write("user", [Op("add", "two")])
    assert await fake_redis.get(KEYS.store_lock("user", "u1", "a1")) is None


async def test_a_write_cancelled_during_its_commit_ends_under_its_lease(
    layout: DataLayout, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its replacement runs to its end before the cancellation goes on: a first commit that
    takes the lease after the cancellation, and whose confirmation then fails, still
    gives the lease back as it leaves the lock's block."""
    a = Writer(layout, fake_redis)
    assert (await a.add("one"))["success"]
    entered, go = asyncio.Event(), asyncio.Event()
    commit = a.journal.commit

    async def held(*args: Any, **kwargs: Any) -> int:
        entered.set()
        await go.wait()
        return await commit(*args, **kwargs)

    async def lost(*args: Any, **kwargs: Any) -> int:
        raise LockUnavailableError("cannot confirm to the file journal")

    monkeypatch.setattr(a.journal, "commit", held)
    monkeypatch.setattr(a.journal, "confirm", lost)
    writing = asyncio.create_task(a.store.write("user", [Op("add", "two")]))
    await entered.wait()
    runner = a.store._batches._runners[str(a.store.path("user"))]
    runner.cancel()
    go.set()
    (outcome,) = await asyncio.gather(writing, return_exceptions=True)
    assert not isinstance(outcome, BaseException), outcome  # committed: its answer came
    await asyncio.gather(runner, return_exceptions=True)
    assert on_disk(a.store.path("user")) == ["one", "two"]  # renamed: it ran to its end
    assert await fake_redis.get(KEYS.store_lock("user", "u1", "a1")) is None
