"""Background tasks are held until they end, and a failure is logged rather than lost."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from memsvc.tasks import TaskSet


async def test_a_spawned_task_is_held_until_it_ends_and_waited_for() -> None:
    tasks = TaskSet("test")
    release = asyncio.Event()
    done: list[str] = []

    async def work() -> None:
        await release.wait()
        done.append("work")

    tasks.spawn(work())
    assert len(tasks) == 1
    release.set()
    await tasks.wait(within_seconds=30)
    assert done == ["work"] and len(tasks) == 0


async def test_a_failing_task_is_logged_with_its_error() -> None:
    tasks = TaskSet("mirrors")

    async def broken() -> None:
        raise ConnectionError("hindsight down")

    with capture_logs() as logs:
        tasks.spawn(broken())
        await tasks.wait(within_seconds=30)
        await asyncio.sleep(0)  # done callbacks run on the next loop iteration
    failed = [e for e in logs if e["event"] == "background_task_failed"]
    assert failed and failed[0]["tasks"] == "mirrors" and "hindsight down" in failed[0]["error"]
