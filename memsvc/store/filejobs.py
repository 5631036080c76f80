"""Where the store's blocking file work runs: in a thread, or in a worker on its event
loop for an event that runs alone while the disk is quick.

A file job (a read; a staged write with its fsync; a rename with the folder's fsync)
takes a few tenths of a millisecond on a local disk. Handed to a thread, it costs the
hand-off on top: on a small VM a no-op hand-off takes about 50 µs of CPU, and a write
makes two. In a worker process (:meth:`FileJobs.allow_inline`, turned off with
``MEMSVC_WORKER_INLINE_FILE_JOBS=false``) a job runs inline when the event it serves
is the only one the worker runs, or when none runs, so that it holds no other event:
a memory add through an idle worker then takes a few percent less time
(``bench.hermes_add``). Beside another event, or in any other process (a gateway or a
command line with their embedded worker, an application's own loop), jobs go to
threads, so that one write's fsyncs hold nothing else and several files' overlap.

The consumer marks each event it runs (:meth:`FileJobs.event_started`); a task an
event starts (a write batch, a repair) is that event's, and work outside any event
(a background job) is no event's. When the running mean of inline jobs (about the
last ten) passes :data:`INLINE_LIMIT_SECONDS` (a network or saturated disk, huge
hand-edited files), jobs go to threads for :data:`THREADS_SECONDS`; the mean is
kept, so a disk that stays slow costs the loop one job per period. One slow job
among quick ones trips it only near ten times the limit.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

import structlog

from memsvc.tasks import to_its_end

log = structlog.get_logger(__name__)

T = TypeVar("T")

INLINE_LIMIT_SECONDS = 0.002
THREADS_SECONDS = 30.0
_WEIGHT = 0.1  # of the newest job in the running mean

# the event the current task serves (tasks it starts inherit it, and may outlive it)
_EVENT: contextvars.ContextVar[object | None] = contextvars.ContextVar("file_jobs_event")


class FileJobs:
    """Runs file jobs in threads, or inline where :meth:`inline` allows."""

    def __init__(
        self,
        *,
        inline: bool = False,
        limit: float = INLINE_LIMIT_SECONDS,
        threads_for: float = THREADS_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._allowed = inline
        self._limit = limit
        self._threads_for = threads_for
        self._clock = clock
        self._threads_until = -math.inf
        self._mean = 0.0  # of the inline jobs
        # the events this process runs now, each with the future its end resolves
        self._events: dict[object, asyncio.Future[None]] = {}

    def allow_inline(self, allowed: bool = True) -> None:
        """Let jobs run inline (a worker process), or never (``allowed=False``)."""
        self._allowed = allowed

    @property
    def inline(self) -> bool:
        """Whether a job started now, by this task, runs on the event loop."""
        events = self._events
        alone = not events or (len(events) == 1 and _EVENT.get(None) in events)
        return self._allowed and alone and self._clock() >= self._threads_until

    def event_started(self) -> tuple[contextvars.Context, Callable[[], None]]:
        """A context to run an event this process starts now in, and the call that ends it.

        The event counts from now, not from its task's first step: an event already
        running never takes the loop while this one waits to start. Tasks started in
        the context (a write batch, a repair) are this event's too.
        """
        event = object()
        ended = self._events[event] = asyncio.get_running_loop().create_future()

        def end() -> None:
            self._events.pop(event, None)
            if not ended.done():
                ended.set_result(None)

        context = contextvars.copy_context()
        context.run(_EVENT.set, event)
        return context, end

    async def ended(self, events: Iterable[object | None]) -> None:
        """Wait until ``events`` (of :func:`current_event`) have ended: what their callers
        wait for has left by then. ``None``, work outside any event, has no end to wait for."""
        running = [self._events[event] for event in events if event in self._events]
        if running:
            await asyncio.wait(running)

    def use_threads(self) -> None:
        """Send jobs to threads for the next period, as slow jobs do."""
        self._threads_until = self._clock() + self._threads_for

    async def run(self, job: Callable[[], T], *, discard: Callable[[T], object] | None = None) -> T:
        """``job()``'s result, run inline or in a thread (see :meth:`inline`).

        A job runs to its end either way. A caller cancelled while its job runs in a
        thread waits for the job before the cancellation reaches it, and what the job
        made goes to ``discard`` (a temp file, a descriptor): nothing the caller would
        clean up is still in use, and nothing is left behind.
        """
        if not self.inline:
            return await _in_thread(job, discard)
        started = self._clock()
        try:
            return job()
        finally:
            self._mean += _WEIGHT * (self._clock() - started - self._mean)
            if self._mean > self._limit:
                mean = round(self._mean, 4)
                log.info("file_jobs_in_threads", mean=mean, seconds=self._threads_for)
                self.use_threads()


async def _in_thread(job: Callable[[], T], discard: Callable[[T], object] | None) -> T:
    # a plain future, not a task: a loop shutting down cancels every task, and would
    # let the caller go on while the thread still works
    loop = asyncio.get_running_loop()
    running = loop.run_in_executor(None, contextvars.copy_context().run, job)
    try:
        return await to_its_end(running)
    except asyncio.CancelledError:
        if discard is not None and not running.cancelled() and running.exception() is None:
            try:
                discard(running.result())
            except Exception as exc:  # the cancellation goes on all the same
                log.warning("file_job_discard_failed", error=repr(exc))
        raise


FILE_JOBS = FileJobs()  # one per process: the loop every event shares, the disk it writes to


async def file_job(job: Callable[[], T], *, discard: Callable[[T], object] | None = None) -> T:
    """``job()`` run by the process's :data:`FILE_JOBS` (see :meth:`FileJobs.run`)."""
    return await FILE_JOBS.run(job, discard=discard)


async def events_ended(events: Iterable[object | None]) -> None:
    """:meth:`FileJobs.ended` of the process's :data:`FILE_JOBS`."""
    await FILE_JOBS.ended(events)


def current_event() -> object | None:
    """The event the current task serves (``None``: none, as in a background job)."""
    return _EVENT.get(None)


def outside_events() -> contextvars.Context:
    """A context to start a task in that serves no event (a repair a read asks for)."""
    context = contextvars.copy_context()
    context.run(_EVENT.set, None)
    return context


def event_started() -> tuple[contextvars.Context, Callable[[], None]]:
    """:meth:`FileJobs.event_started` of the process's :data:`FILE_JOBS`."""
    return FILE_JOBS.event_started()
