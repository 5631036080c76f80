"""Tasks started and not awaited: referenced until they end, waited for at shutdown.

The event loop keeps only weak references to tasks, so a task nobody holds can be
collected mid-flight; and a task that fails unobserved only shows up as "exception
was never retrieved" at exit. A :class:`TaskSet` holds its tasks until each ends,
logs the ones that fail, and lets its owner wait for the rest when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

import structlog

log = structlog.get_logger(__name__)

T = TypeVar("T")


async def to_its_end(work: Awaitable[T]) -> T:
    """``work``'s result, ``work`` run to its end even if the caller is cancelled meanwhile:
    the caller then waits for it (cancelled again, still waits) before its cancellation
    goes on, so that nothing ``work`` holds or makes is let go under it."""
    running = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        while not running.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait((running,))
        raise


class TaskSet:
    """The background tasks of one owner, named in the log line of a task that fails."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._tasks: set[asyncio.Future[Any]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("background_task_failed", tasks=self._name, error=repr(exc))

    async def wait(self, within_seconds: float | None = None) -> None:
        """Until every task has ended, or ``within_seconds``; their failures are logged."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=within_seconds)
