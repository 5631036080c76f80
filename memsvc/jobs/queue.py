"""Background jobs: how they are queued, retried and, when they give up, parked.

Jobs are plain async functions ``job(ctx, payload)`` in the arq style. A worker
runs them through arq (``ArqJobs``); the embedded mode of the command line runs
the very same functions as tasks of its own process (``InlineJobs``). Either
way a failing job is retried with exponential backoff and jitter, bounded by a
number of tries and an age, and then parked in a dead-letter list with its
payload and last error, where an operator can inspect and re-drive it: a job is
never dropped.

A memsvc error tells the policy what it knows (:mod:`memsvc.errors`): ``retryable = False``
(a request the server refused as it is) parks the job at once instead of
repeating it, and ``retry_after`` (seconds, the server's own advice) is the
least a retry waits.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from arq.connections import ArqRedis
from arq.worker import Retry
from redis.asyncio import Redis
from redis.backoff import EqualJitterBackoff

from memsvc.errors import InvalidInputError, MemsvcError, is_retryable
from memsvc.jobs.payloads import JOBS, Job
from memsvc.keys import Keys
from memsvc.redisconn import connection_pool
from memsvc.service.bus import Redrive, parked_record
from memsvc.service.eventlog import EventLog, LogRecord
from memsvc.settings import ServiceSettings, default
from memsvc.tasks import TaskSet

log = structlog.get_logger(__name__)

_LOGGED_IDS = ("event_id", "user_id", "agent_id", "thread_id")
# how long a re-drive holds a parked job it is queueing again: one that died meanwhile
# leaves the record in the list, for the next re-drive after this long
REDRIVE_CLAIM_SECONDS = 300

JobFunction = Callable[[dict[str, Any], dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class JobTry:
    """The job running in this task: its id (the same on every try), and whether a failure
    of this try parks it rather than retrying it."""

    job_id: str
    last: bool


current_job: contextvars.ContextVar[JobTry | None] = contextvars.ContextVar(
    "current_job", default=None
)


@dataclass(frozen=True)
class RetryPolicy:
    """With the defaults a job keeps trying for at least ~29 minutes (at most ~58)
    before it is parked: an outage of that length drains by itself."""

    max_tries: int = default("job_max_tries")
    max_age_seconds: float = default("job_max_age_seconds")
    base_seconds: float = default("job_backoff_base_seconds")
    cap_seconds: float = default("job_backoff_cap_seconds")
    # one try's time limit, below arq's job_timeout: arq treats its own timeout as the
    # job's end (no retry, no dead letter), so a try that runs long must end here first
    try_seconds: float | None = None

    @classmethod
    def of(cls, settings: ServiceSettings) -> RetryPolicy:
        return cls(
            max_tries=settings.job_max_tries,
            max_age_seconds=settings.job_max_age_seconds,
            base_seconds=settings.job_backoff_base_seconds,
            cap_seconds=settings.job_backoff_cap_seconds,
            try_seconds=settings.job_timeout_seconds * 0.8,
        )

    def backoff(self, job_try: int, *, at_least: float = 0.0) -> float:
        """Equal jitter: uniform in [c/2, c] with c = min(cap, base * 2**(try-1)).

        The guaranteed half spreads the tries over a long outage; the random half
        keeps the workers that failed together from retrying together. The same
        curve as the reconnects to Redis (redis-py's ``EqualJitterBackoff``).
        """
        jitter = EqualJitterBackoff(cap=self.cap_seconds, base=self.base_seconds)
        return max(min(at_least, self.cap_seconds), jitter.compute(max(0, job_try - 1)))


class JobQueue(Protocol):
    """Where jobs are queued: arq in a worker, tasks of its own in the embedded mode."""

    async def enqueue(self, job: Job, *, job_id: str) -> None:
        """Queue ``job`` once per ``job_id`` (a second enqueue is a no-op)."""


def serialise_job(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def deserialise_job(raw: bytes) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(raw)
    return data


def job_pool(url: str, settings: ServiceSettings) -> ArqRedis:
    """arq's connections to the job queue, with memsvc's command timeout and serialiser.

    arq's own pool (``create_pool``) sets no command timeout: a Redis that took a request
    and never answered (a partition, a stalled proxy) held the job loop, and every
    background job, for good. arq polls and issues no blocking command, so any reply is
    due within the timeout. A job queued with arq's default (pickle) would never run.
    """
    pool = ArqRedis(connection_pool(url, settings))
    pool.auto_close_connection_pool = True  # its own pool: aclose() closes the connections
    pool.job_serializer = serialise_job
    pool.job_deserializer = deserialise_job
    pool.default_queue_name = Keys(settings.key_prefix).job_queue
    return pool


class ArqJobs:
    """Jobs on arq's queue, stamped with their enqueue time (their age bounds their retries)."""

    def __init__(self, pool: ArqRedis, queue_name: str, *, expires_seconds: float) -> None:
        self._pool = pool
        self._queue = queue_name
        self._expires = expires_seconds  # beyond the policy's max age: arq must not drop it first

    async def enqueue(self, job: Job, *, job_id: str) -> None:
        await self._pool.enqueue_job(
            job.name, job.queued(), _job_id=job_id, _queue_name=self._queue, _expires=self._expires
        )


class DeadLetters:
    """Jobs that gave up, with their payload and last error, until an operator re-drives them."""

    def __init__(self, redis: Redis, keys: Keys, event_log: EventLog | None = None) -> None:
        self._redis = redis
        self._key = keys.dead_jobs
        self._log = event_log

    async def park(
        self,
        function: str,
        payload: dict[str, Any],
        error: str,
        tries: int,
        *,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Keep the job for a re-drive, and log it ``dead`` (``detail`` added to the record):
        a job given up on, and work a job sets aside as it goes (a turn Hindsight
        refuses, parked under the job that puts it back), both show in the event log."""
        record = {
            "function": function,
            "payload": payload,
            "error": error,
            "tries": tries,
            "parked_at": time.time(),
        }
        await self._redis.rpush(self._key, json.dumps(record, ensure_ascii=False))  # type: ignore[misc]
        said = (detail or {}).get("error", error)  # a shorter form, if the caller gave one
        log.error("job_dead_lettered", function=function, tries=tries, error=said)
        if self._log is not None:
            await self._log.append(
                _job_record(function, payload, "dead", {"error": error, **(detail or {})})
            )

    async def records(self) -> list[dict[str, Any]]:
        """The parked jobs, oldest first (see :func:`~memsvc.service.bus.parked_record`)."""
        return [parked_record(raw) for raw in await self._redis.lrange(self._key, 0, -1)]  # type: ignore[misc]

    async def redrive(
        self, queue: JobQueue, *, function: str | None = None, limit: int | None = None
    ) -> Redrive:
        """Queue parked jobs again (oldest first) with a fresh age and tries.

        A record leaves the list only after its job is queued, so a failure here
        loses nothing (at worst a job runs twice, and jobs are idempotent). Each is
        claimed first (:data:`REDRIVE_CLAIM_SECONDS`), so two re-drives at once queue
        it once between them. A record that no longer fits its job's payload model,
        or is none memsvc parked, stays in the list, logged and listed as left.
        """
        sent: list[dict[str, Any]] = []
        left: list[dict[str, Any]] = []
        for position, raw in enumerate(await self._redis.lrange(self._key, 0, -1)):  # type: ignore[misc]
            if limit is not None and len(sent) >= limit:
                break
            record = parked_record(raw)
            named = record.get("function") if isinstance(record.get("function"), str) else None
            if function is not None and named != function:
                continue
            if named is None:
                why = "not a job memsvc parked"
            elif named not in JOBS:
                why = f"no job of this release is called {named!r}"
            else:
                try:
                    payload = {k: v for k, v in record["payload"].items() if k != "enqueued_at"}
                    job = JOBS[named].parse(payload)
                except (InvalidInputError, KeyError, AttributeError, TypeError) as exc:
                    # not the error's text: the payload holds what the jobs carry (turn text)
                    why = f"its payload no longer fits the job ({type(exc).__name__})"
                else:
                    if await self._requeue(queue, job, raw):
                        sent.append(record)
                    continue
            log.warning("job_not_redriven", function=named, why=why)
            # where it is once the run is done: each sent before it left the list
            left.append({"position": position - len(sent), "function": named, "why": why})
        log.info("jobs_redriven", count=len(sent), left=len(left), function=function)
        return Redrive(sent, left)

    async def _requeue(self, queue: JobQueue, job: Job, raw: bytes) -> bool:
        """Queue ``raw``'s job and take it off the list, unless another re-drive has it."""
        claim = f"{self._key}:redriving:{hashlib.sha256(raw).hexdigest()[:32]}"
        if not await self._redis.set(claim, 1, nx=True, ex=REDRIVE_CLAIM_SECONDS):
            return False
        try:
            if await self._redis.lpos(self._key, raw) is None:  # type: ignore[misc,arg-type]
                return False  # another re-drive queued it and took it off meanwhile
            await queue.enqueue(job, job_id=f"{self._key}:redrive:{uuid.uuid4().hex}")
            await self._redis.lrem(self._key, 1, raw)  # type: ignore[misc,arg-type]
        finally:
            await self._redis.delete(claim)
        return True


def durable(function: JobFunction, policy: RetryPolicy, *, name: str | None = None) -> JobFunction:
    """Wrap a job: retry what fails with backoff, park what is out of tries or too old.

    Only ``Retry`` makes arq run a job again; any other exception would end it for
    good, so every failure is turned into one or the other here. ``name`` (the
    function's own by default) is what a parked job is re-driven under.
    """

    name = name or function.__name__

    def tried(ctx: dict[str, Any]) -> dict[str, Any]:
        return {"job_id": ctx.get("job_id"), "job_try": ctx.get("job_try", 1)}

    async def record(
        ctx: dict[str, Any], payload: dict[str, Any], outcome: str, detail: dict[str, Any]
    ) -> None:
        event_log: EventLog | None = ctx.get("event_log")
        if event_log is not None:
            await event_log.append(_job_record(name, payload, outcome, {**tried(ctx), **detail}))

    async def run(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        job_try = int(ctx.get("job_try", 1))
        started = time.perf_counter()
        age = time.time() - float(payload.get("enqueued_at", time.time()))
        last = (
            job_try >= policy.max_tries or age + (policy.try_seconds or 0) >= policy.max_age_seconds
        )
        current_job.set(JobTry(job_id=str(ctx.get("job_id") or ""), last=last))
        # every line this try logs names the job and whose it is (each job runs in its own task)
        structlog.contextvars.bind_contextvars(
            job=name,
            job_id=str(ctx.get("job_id") or ""),
            job_try=job_try,
            **{k: str(payload[k]) for k in _LOGGED_IDS if payload.get(k)},
        )
        try:
            async with asyncio.timeout(policy.try_seconds) as bounded:
                await function(ctx, payload)
        except Exception as exc:
            age = time.time() - float(payload.get("enqueued_at", time.time()))
            error = f"{type(exc).__name__}: {exc}"
            # logs and the event log keep no words a server sent back (they may echo a turn);
            # the parked record, which holds the payload anyway, keeps them for an operator
            said = (
                f"{type(exc).__name__}: {exc.logged()}" if isinstance(exc, MemsvcError) else error
            )
            if bounded.expired():  # not a timeout of the job's own (a lock it waited for)
                error = said = f"TimeoutError: the try took over {policy.try_seconds:g}s"
            if is_retryable(exc) and job_try < policy.max_tries and age < policy.max_age_seconds:
                delay = policy.backoff(job_try, at_least=getattr(exc, "retry_after", None) or 0.0)
                log.warning(
                    "job_retry", function=name, job_try=job_try, delay=round(delay, 3), error=said
                )
                await record(ctx, payload, "error", {"error": said, "retry_in": delay})
                raise Retry(defer=delay) from exc
            await ctx["dead_letters"].park(
                name, payload, error, job_try, detail={**tried(ctx), "error": said}
            )
            return
        await record(ctx, payload, "ok", {"ms": round((time.perf_counter() - started) * 1000, 3)})

    run.__name__ = name
    run.__qualname__ = function.__qualname__
    return run


def _job_record(
    name: str, payload: dict[str, Any], outcome: str, detail: dict[str, Any]
) -> LogRecord:
    """A try of job ``name`` (or its parking), as the event log keeps it."""
    return LogRecord(
        outcome=outcome,
        type=f"job:{name}",
        event_id=str(payload.get("event_id", "")),
        user_id=str(payload.get("user_id", "")),
        agent_id=str(payload.get("agent_id", "")),
        thread_id=str(payload.get("thread_id", "")),
        detail=detail,
    )


_INLINE_SEEN = 10_000  # job ids an embedded process remembers for de-duplication


class InlineJobs:
    """Runs jobs as tasks of this process, with the same retry semantics as arq."""

    def __init__(self, functions: dict[str, JobFunction], ctx: dict[str, Any]) -> None:
        self._functions = functions
        self._ctx = ctx
        self._seen: OrderedDict[str, None] = OrderedDict()  # recent job ids, like arq's results
        self._tasks = TaskSet("inline jobs")

    async def enqueue(self, job: Job, *, job_id: str) -> None:
        if job_id in self._seen:
            return
        self._seen[job_id] = None
        if len(self._seen) > _INLINE_SEEN:
            self._seen.popitem(last=False)
        self._tasks.spawn(self._run(job.name, job.queued(), job_id))

    async def _run(self, function: str, payload: dict[str, Any], job_id: str) -> None:
        job_try = 1
        while True:
            try:
                ctx = {**self._ctx, "job_id": job_id, "job_try": job_try}
                await self._functions[function](ctx, payload)
                return
            except Retry as retry:
                await asyncio.sleep((retry.defer_score or 0) / 1000)
                job_try += 1

    async def drain(self, within_seconds: float = 10.0) -> None:
        await self._tasks.wait(within_seconds)
