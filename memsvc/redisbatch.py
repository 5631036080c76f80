"""Pipelines queued in the same turn of the event loop, sent to Redis as one.

A worker runs up to a hundred events at once, and they move in step: the events a
stream read returned all enter their threads in the same turn of the loop, and many
finish in the same turn. Each sending its own pipeline costs a send and a wake-up of
Redis apiece; on a busy two-core machine those sends were most of a worker's time.
A caller here hands over the commands it would have put in its pipeline; the ones
queued before the loop gets back to its selector leave in one pipeline, and each
caller gets its own results (or the first error among its own commands) back.

A connection lost after the pipeline was written is :class:`SentThenLost` to
every caller: its commands may have run.

Once queued, commands are sent even if their caller is cancelled: a reply, a log
record, an acknowledgement or a read may go out unheard. A caller whose commands
take something (a lock) says how to give it back (``abandoned``), and is handed
its results if it is gone when they arrive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError, DataError, NoScriptError

from memsvc.redisconn import SentThenLost, noting_sends
from memsvc.tasks import TaskSet

Queue = Callable[[Pipeline], object]  # what it returns is not used
Abandoned = Callable[[list[Any]], Awaitable[None]]


class CommandBatcher:
    """One pipeline for whatever its callers queued in one turn of the loop."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._pending: list[_Call] = []
        self._sending = TaskSet("shared pipelines")
        self._giving_back = TaskSet("abandoned results")
        self._loading: dict[str, asyncio.Future[Any]] = {}  # script loads under way, by digest

    async def execute(
        self, queue: Queue, *, abandoned: Abandoned | None = None, checked: int | None = None
    ) -> list[Any]:
        """Results of the commands ``queue`` adds to a pipeline, in their order.

        ``abandoned`` gets the results instead if this caller was cancelled meanwhile.
        ``checked``: only the first so many commands' errors are raised (the others' are
        results, for commands whose failure must not fail the call).
        """
        loop = asyncio.get_running_loop()
        result: asyncio.Future[list[Any]] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._send_pending)
        self._pending.append(_Call(queue, result, abandoned, checked))
        return await result

    async def script(
        self,
        script: AsyncScript,
        keys: Sequence[Any],
        args: Sequence[Any],
        *,
        beside: Queue | None = None,
    ) -> Any:
        """``script``'s answer, sent by its digest with the rest of the turn's commands
        (and ``beside``'s, whose answers and errors are not looked at).

        A server that lost its scripts (restarted, flushed) ran nothing: the script is
        loaded and sent once more.
        """

        def queue(pipe: Pipeline) -> None:
            pipe.evalsha(script.sha, len(keys), *keys, *args)
            if beside is not None:
                beside(pipe)

        try:
            answer, *_ = await self.execute(queue, checked=1)
        except NoScriptError:
            await asyncio.shield(self._load(script))  # one caller cancelled cancels no load
            answer, *_ = await self.execute(queue, checked=1)
        return answer

    def _load(self, script: AsyncScript) -> asyncio.Future[Any]:
        """One load of ``script`` for all the callers that found it missing: each sends again
        as the load ends, in the order they were sent first, so in one pipeline and in that
        order (one load apiece would end, and send them again, in any order)."""
        loading = self._loading.get(script.sha)
        if loading is None:
            loading = asyncio.ensure_future(self._redis.script_load(script.script))
            self._loading[script.sha] = loading
            loading.add_done_callback(lambda _: self._loading.pop(script.sha, None))
        return loading

    def _send_pending(self) -> None:
        batch, self._pending = self._pending, []
        self._sending.spawn(self._send(batch))

    async def _send(self, batch: list[_Call]) -> None:
        spans: list[tuple[int, int]] = []
        try:
            with noting_sends() as sends:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for call in batch:
                        start = len(pipe)
                        call.queue(pipe)
                        spans.append((start, len(pipe)))
                    results = await pipe.execute(raise_on_error=False)
        except BaseException as exc:  # the whole pipeline: every caller hears it
            if len(batch) > 1 and _unsendable(exc) and not sends.written:
                # a command that cannot be packed (a string with a lone surrogate): nothing
                # left, and each caller's commands go alone, in order, so that it fails only
                # its own caller
                for done, call in enumerate(batch):
                    try:
                        await self._send([call])
                    except BaseException as cut:  # cut short: the rest hear it too
                        for rest in batch[done + 1 :]:
                            if not rest.result.done():
                                rest.result.set_exception(_cut_short(cut))
                        raise
                return
            if sends.lost and isinstance(exc, ConnectionError):  # the commands may have run
                lost = SentThenLost(str(exc))
                lost.__cause__ = exc
                exc = lost
            for call in batch:
                if not call.result.done():
                    call.result.set_exception(
                        exc if isinstance(exc, Exception) else _cut_short(exc)
                    )
            if not isinstance(exc, Exception):
                raise
            return
        for (start, end), call in zip(spans, batch, strict=True):
            own = results[start:end]
            if call.result.done():  # its caller was cancelled
                if call.abandoned is not None:
                    self._giving_back.spawn(call.abandoned(own))
                continue
            error = _first_error(own if call.checked is None else own[: call.checked])
            if error is not None:
                call.result.set_exception(error)
            else:
                call.result.set_result(own)


@dataclass(frozen=True)
class _Call:
    queue: Queue
    result: asyncio.Future[list[Any]]
    abandoned: Abandoned | None
    checked: int | None = None


def _unsendable(exc: BaseException) -> bool:
    """An error of packing a command (its arguments), not of Redis or the connection."""
    return isinstance(exc, DataError | UnicodeError | TypeError)


def _first_error(results: list[Any]) -> Exception | None:
    """The first error among a caller's results, those of a transaction's commands included
    (EXEC answers with each command's, and Redis does not roll back the others)."""
    for item in results:
        if isinstance(item, Exception):
            return item
        if isinstance(item, list) and (inner := _first_error(item)) is not None:
            return inner
    return None


def _cut_short(exc: BaseException) -> Exception:
    return RuntimeError(f"the shared pipeline was cut short: {exc!r}")
