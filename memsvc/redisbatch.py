"""Pipelines queued in the same turn of the event loop, sent to Redis as one.

A worker runs up to a hundred events at once, and they move in step: the events a
stream read returned all enter their threads in the same turn of the loop, and many
finish in the same turn. Each sending its own pipeline costs a send and a wake-up of
Redis apiece; on a busy two-core machine those sends were most of a worker's time.
A caller here hands over the commands it would have put in its pipeline; the ones
queued before the loop gets back to its selector leave in one pipeline, and each
caller gets its own results (or the first error among its own commands) back.

Only commands whose sending matters more than their caller's patience belong here:
once queued they are sent even if the caller is cancelled (a reply, a log record,
an acknowledgement, reads), never the acquiring of a lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

Queue = Callable[[Pipeline], None]


class CommandBatcher:
    """One pipeline for whatever its callers queued in one turn of the loop."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._pending: list[tuple[Queue, asyncio.Future[list[Any]]]] = []
        self._sending: set[asyncio.Task[None]] = set()

    async def execute(self, queue: Queue) -> list[Any]:
        """Results of the commands ``queue`` adds to a pipeline, in their order."""
        loop = asyncio.get_running_loop()
        result: asyncio.Future[list[Any]] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._send_pending)
        self._pending.append((queue, result))
        return await result

    def _send_pending(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.get_running_loop().create_task(self._send(batch))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, batch: list[tuple[Queue, asyncio.Future[list[Any]]]]) -> None:
        spans: list[tuple[int, int]] = []
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for queue, _ in batch:
                    start = len(pipe)
                    queue(pipe)
                    spans.append((start, len(pipe)))
                results = await pipe.execute(raise_on_error=False)
        except BaseException as exc:  # the whole pipeline: every caller hears it
            for _, result in batch:
                if not result.done():
                    result.set_exception(exc if isinstance(exc, Exception) else _cut_short(exc))
            if not isinstance(exc, Exception):
                raise
            return
        for (start, end), (_, result) in zip(spans, batch, strict=True):
            if result.done():  # its caller was cancelled
                continue
            own = results[start:end]
            error = next((item for item in own if isinstance(item, Exception)), None)
            if error is not None:
                result.set_exception(error)
            else:
                result.set_result(own)


def _cut_short(exc: BaseException) -> Exception:
    return RuntimeError(f"the shared pipeline was cut short: {exc!r}")
