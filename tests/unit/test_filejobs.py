"""File jobs run on the event loop while the disk is quick, in threads while it is slow."""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from memsvc.paths import DataLayout
from memsvc.store import atomicfile, filejobs, locks
from memsvc.store.edits import Op
from memsvc.store.filejobs import FileJobs
from memsvc.store.filestore import BuiltinStore
from memsvc.store.locks import FileLocks

T = TypeVar("T")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def where() -> int:
    return threading.get_ident()


class HeldDisk:
    """Blocking calls held in their thread until the test lets them go, as by a stalled disk.

    A call never let go raises rather than goes on: held on the event loop, it would
    hold the test too, and a test that lost track of it fails instead of passing late.
    """

    def __init__(self) -> None:
        self.entered, self.finished = threading.Event(), threading.Event()
        self._released = threading.Event()

    def holding(self, call: Callable[..., T]) -> Callable[..., T]:
        def held(*args: Any) -> T:
            self.entered.set()
            if not self._released.wait(10):
                raise OSError("the disk was never let go")
            result = call(*args)
            self.finished.set()  # only once the call got through
            return result

        return held

    async def reached(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, 30)

    def release(self) -> None:
        self._released.set()

    async def done(self) -> None:
        assert await asyncio.to_thread(self.finished.wait, 30)


async def test_a_quick_job_runs_on_the_event_loop_and_returns_its_result() -> None:
    assert await FileJobs(inline=True).run(where) == threading.get_ident()


def taking(clock: Clock, seconds: float) -> Callable[[], int]:
    def job() -> int:
        clock.now += seconds
        return where()

    return job


async def test_outside_a_worker_jobs_run_in_threads() -> None:
    assert await FileJobs().run(where) != threading.get_ident()


async def test_a_disk_that_stays_slow_costs_the_loop_one_job_per_period() -> None:
    clock, loop_thread = Clock(), threading.get_ident()
    jobs = FileJobs(inline=True, limit=0.002, threads_for=30, clock=clock)
    ran = [await jobs.run(taking(clock, 0.003)) for _ in range(11)]
    assert ran == [loop_thread] * 11  # the mean of the 3 ms jobs passed 2 ms at the 11th
    assert not jobs.inline
    assert await jobs.run(where) != loop_thread
    clock.now += 29.9
    assert await jobs.run(taking(clock, 0.003)) != loop_thread
    clock.now += 0.2
    assert await jobs.run(taking(clock, 0.003)) == loop_thread  # the period's one try
    assert not jobs.inline


async def test_jobs_come_back_to_the_loop_once_the_disk_is_quick_again() -> None:
    clock, loop_thread = Clock(), threading.get_ident()
    jobs = FileJobs(inline=True, limit=0.002, threads_for=30, clock=clock)
    for _ in range(11):
        await jobs.run(taking(clock, 0.003))
    clock.now += 30.1
    assert await jobs.run(taking(clock, 0.0003)) == loop_thread
    assert jobs.inline
    assert await jobs.run(where) == loop_thread


async def test_one_slow_fsync_among_quick_jobs_keeps_jobs_inline() -> None:
    clock = Clock()
    jobs = FileJobs(inline=True, limit=0.002, threads_for=30, clock=clock)
    for seconds in (0.0003, 0.0003, 0.008, 0.0003, 0.0003):
        await jobs.run(taking(clock, seconds))
    assert jobs.inline


async def test_one_job_that_held_the_loop_for_long_sends_the_next_to_threads() -> None:
    clock = Clock()
    jobs = FileJobs(inline=True, limit=0.002, threads_for=30, clock=clock)
    await jobs.run(taking(clock, 0.05))
    assert not jobs.inline


async def test_a_slow_job_that_fails_raises_its_error_and_still_counts() -> None:
    clock = Clock()
    jobs = FileJobs(inline=True, limit=0.002, threads_for=30, clock=clock)

    def slow_failure() -> None:
        clock.now += 0.05
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        await jobs.run(slow_failure)
    assert await jobs.run(where) != threading.get_ident()


def started(jobs: FileJobs, run: Callable[[], Coroutine[Any, Any, T]]) -> asyncio.Task[T]:
    """``run()`` as an event of the process, as the consumer starts one."""
    context, ended = jobs.event_started()
    task = asyncio.create_task(run(), context=context)
    task.add_done_callback(lambda _: ended())
    return task


async def test_jobs_run_inline_only_for_the_one_event_the_process_runs() -> None:
    jobs, loop_thread = FileJobs(inline=True, limit=math.inf), threading.get_ident()
    assert await jobs.run(where) == loop_thread  # no event at all
    its_end, second_may_end = asyncio.Event(), asyncio.Event()

    async def outliving_its_event() -> int:
        await its_end.wait()
        return await jobs.run(where)

    async def second() -> int:
        await second_may_end.wait()
        return await jobs.run(where)

    async def first() -> tuple[int, int, asyncio.Task[int], asyncio.Task[int]]:
        alone = await jobs.run(where)
        late = asyncio.create_task(outliving_its_event())  # a task of this event
        other = started(jobs, second)
        beside = await jobs.run(where)  # the other counts before its first step
        return alone, beside, late, other

    alone, beside, late, other = await started(jobs, first)
    assert alone == loop_thread and beside != loop_thread
    assert await jobs.run(where) != loop_thread  # no event of its own, one running
    its_end.set()
    assert await late != loop_thread  # its event ended, another runs
    second_may_end.set()
    assert await other == loop_thread  # the one event left
    assert await jobs.run(where) == loop_thread
    assert jobs.inline


async def test_errors_of_a_job_in_a_thread_reach_the_caller() -> None:
    jobs = FileJobs()
    jobs.use_threads()

    def failure() -> None:
        raise PermissionError("refused")

    with pytest.raises(PermissionError, match="refused"):
        await jobs.run(failure)


async def test_a_job_in_a_thread_leaves_the_loop_free_for_other_events() -> None:
    jobs, disk = FileJobs(), HeldDisk()
    jobs.use_threads()
    job = asyncio.ensure_future(jobs.run(disk.holding(lambda: "written")))
    await disk.reached()
    ticks = 0
    while ticks < 5:  # the loop goes on while the job waits on its "disk"
        await asyncio.sleep(0.001)
        ticks += 1
    assert not job.done()
    disk.release()
    assert await job == "written"


async def test_a_write_stuck_on_a_slow_disk_in_a_thread_holds_no_other_user(
    layout: DataLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = FileJobs()
    jobs.use_threads()
    monkeypatch.setattr(filejobs, "FILE_JOBS", jobs)
    disk = HeldDisk()
    monkeypatch.setattr(atomicfile, "write_all", disk.holding(atomicfile.write_all))
    locks = FileLocks(layout)
    alice = BuiltinStore(layout, locks, user_id="alice", agent_id="a")
    bob = BuiltinStore(layout, locks, user_id="bob", agent_id="a")
    (bob.path("user").parent).mkdir(parents=True)
    bob.path("user").write_bytes(b"bob's fact")

    stuck = asyncio.ensure_future(alice.write("user", [Op("add", "alice's fact")]))
    await disk.reached()
    assert await bob.read("user") == ["bob's fact"]  # served while alice's write waits
    assert not stuck.done()
    disk.release()
    await stuck
    assert await alice.read("user") == ["alice's fact"]


async def test_a_caller_cancelled_meanwhile_waits_for_its_job_and_discards_what_it_made() -> None:
    jobs, disk = FileJobs(), HeldDisk()
    discarded: list[str] = []
    call = asyncio.ensure_future(
        jobs.run(disk.holding(lambda: "a descriptor"), discard=discarded.append)
    )
    await disk.reached()
    call.cancel()
    await asyncio.sleep(0.05)
    assert not call.done()  # the job still runs: nothing it uses may be closed yet
    call.cancel()  # a second cancellation changes nothing
    disk.release()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert disk.finished.is_set() and discarded == ["a descriptor"]


@pytest.mark.parametrize("step", ["stage", "rename"])
async def test_a_write_cancelled_in_a_thread_leaves_no_temp_file_and_no_descriptor(
    step: str, layout: DataLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filejobs, "FILE_JOBS", FileJobs())
    path = layout.user_config("u1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"old")
    disk, held = HeldDisk(), "write_all" if step == "stage" else "_rename"
    monkeypatch.setattr(atomicfile, held, disk.holding(getattr(atomicfile, held)))
    descriptors = len(os.listdir("/proc/self/fd"))
    write = asyncio.ensure_future(atomicfile.write_atomic(layout.anchored(path), b"new"))
    await disk.reached()
    write.cancel()
    await asyncio.sleep(0.05)
    disk.release()
    with pytest.raises(asyncio.CancelledError):
        await write
    await disk.done()  # whatever the thread still did
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert len(os.listdir("/proc/self/fd")) == descriptors
    assert path.read_bytes() == (b"old" if step == "stage" else b"new")  # the rename ran


async def test_a_lock_wait_cancelled_in_a_thread_leaves_no_descriptor(
    layout: DataLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filejobs, "FILE_JOBS", FileJobs())
    disk = HeldDisk()
    monkeypatch.setattr(locks, "open_lock_file", disk.holding(locks.open_lock_file))
    descriptors = len(os.listdir("/proc/self/fd"))

    async def hold() -> None:
        async with FileLocks(layout).hold("user", "u1", "a1"):
            raise AssertionError("a cancelled wait never holds the lock")

    waiting = asyncio.ensure_future(hold())
    await disk.reached()
    waiting.cancel()
    disk.release()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await disk.done()
    assert len(os.listdir("/proc/self/fd")) == descriptors


async def test_a_job_in_a_thread_is_waited_for_even_when_every_task_is_cancelled() -> None:
    jobs, disk = FileJobs(), HeldDisk()  # a loop shutting down cancels every task it has
    discarded: list[str] = []
    call = asyncio.ensure_future(
        jobs.run(disk.holding(lambda: "a descriptor"), discard=discarded.append)
    )
    await disk.reached()
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task():
            task.cancel()
    await asyncio.sleep(0.05)
    assert not call.done()
    disk.release()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert discarded == ["a descriptor"]
