"""Writes waiting for one file, taken together: group commit within one process.

Fifty agents writing one ``USER.md`` would otherwise take its lock fifty times in a
row, each time for a read, a commit, an fsync pair and a rename. Queued here instead,
the writes that arrive while one batch is being written are the next batch: one lock,
one read-modify-write, one rename, however many writes it holds. Each write keeps its
own outcome (a result, or the error that refused it alone).

One runner task per file drains its queue, so a caller that is cancelled (an event
another worker took over) leaves the batch it was part of to finish for the others;
a write still queued when its caller gave up is dropped.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

T = TypeVar("T")
R = TypeVar("R")

MAX_BATCH = 64  # bounds one commit's size and how long the first write of a batch waits


@dataclass(eq=False)
class Queued(Generic[T, R]):
    """One write in a queue: what to do, where its outcome goes, and its caller's context
    (a batch runs in its first write's: its log lines and file jobs are that caller's)."""

    item: T
    outcome: asyncio.Future[R] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    context: contextvars.Context = field(default_factory=contextvars.copy_context)

    @property
    def wanted(self) -> bool:
        return not self.outcome.done()


Runner = Callable[[list[Queued[T, R]]], Coroutine[Any, Any, None]]


class WriteBatches(Generic[T, R]):
    """Per key (a file), the writes queued in this process and the task writing them."""

    def __init__(self, *, max_batch: int = MAX_BATCH) -> None:
        self._max = max_batch
        self._queues: dict[str, list[Queued[T, R]]] = {}
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._stepping_aside: dict[str, asyncio.Future[None]] = {}  # see until_queued

    async def submit(self, key: str, item: T, run: Runner[T, R]) -> R:
        """Queue ``item`` for ``key``; ``run`` writes a batch and settles each outcome."""
        queued: Queued[T, R] = Queued(item)
        self._queues.setdefault(key, []).append(queued)
        aside = self._stepping_aside.get(key)
        if aside is not None and not aside.done():
            aside.set_result(None)
        if key not in self._runners:
            self._runners[key] = asyncio.get_running_loop().create_task(self._drain(key, run))
        return await queued.outcome

    async def until_queued(self, key: str, wait: Callable[[], Awaitable[None]]) -> None:
        """``wait()``, cut short when a write for ``key`` is queued: a batch that waits
        (for its answers to leave) holds no write behind it, which may be one its own
        caller makes next."""
        if self._queues.get(key):
            return
        aside = self._stepping_aside[key] = asyncio.get_running_loop().create_future()
        waiting = asyncio.ensure_future(wait())
        try:
            await asyncio.wait((waiting, aside), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            if self._stepping_aside.get(key) is aside:
                del self._stepping_aside[key]

    async def settled(self, *keys: str) -> None:
        """Wait until the writes queued for ``keys`` (every key if none) are done, the
        steps they take after their callers were answered included."""
        while runners := [
            runner for key, runner in self._runners.items() if not keys or key in keys
        ]:
            await asyncio.wait(runners)

    async def _drain(self, key: str, run: Runner[T, R]) -> None:
        try:
            while queue := self._queues.get(key):
                batch = [queued for queued in queue[: self._max] if queued.wanted]
                del queue[: self._max]
                if not batch:
                    continue
                # as its first write's caller, not as the caller that started this task
                writing = asyncio.get_running_loop().create_task(
                    run(batch), context=batch[0].context
                )
                try:
                    await writing
                except asyncio.CancelledError:
                    failed = (
                        writing.exception() if writing.done() and not writing.cancelled() else None
                    )
                    for queued in batch:  # a failure that ended the batch first is its answer
                        if queued.wanted:
                            if failed is None:
                                queued.outcome.cancel()
                            else:
                                queued.outcome.set_exception(failed)
                    raise
                except Exception as exc:  # the batch failed as a whole: each write hears why
                    waiting = [queued for queued in batch if queued.wanted]
                    for queued in waiting:
                        queued.outcome.set_exception(exc)
                    if not waiting:  # it failed after its writes had their outcomes
                        batch[0].context.run(
                            log.warning, "write_batch_failed_late", key=key, error=repr(exc)
                        )
        finally:
            self._runners.pop(key, None)
            if not self._queues.get(key):
                self._queues.pop(key, None)
            elif not asyncio.get_running_loop().is_closed():  # cancelled with writes queued
                for queued in self._queues.pop(key):
                    if queued.wanted:
                        queued.outcome.cancel()
