"""The memsvc worker process: arq settings, startup and shutdown, a resilient job loop.

One process runs both halves of the service: the event consumer (request-path
events, read from a Redis Stream without a poll interval) as a task started at
startup, and arq's job loop for background work (retains, mirrors). Settings
come from ``MEMSVC_*``; ``poll_delay`` is short because it bounds how soon a
background job starts, and jobs are short so that a killed job is re-run soon.

Redis may restart or fail over under a running worker: the consumer's read
loop waits it out, and so does the job loop here (:class:`ResilientWorker`),
where arq alone would end the process on the first ``ConnectionError``.

With ``memsvc worker --metrics-port`` the worker also serves its Prometheus
metrics (:mod:`memsvc.gateway.metrics`, the gateway extra).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import signal
from typing import Any, ClassVar

import structlog
from arq.connections import RedisSettings
from arq.worker import Worker, func, get_kwargs

from memsvc.config import ConfigError
from memsvc.errors import MemoryMisconfiguredError
from memsvc.heap import collect_in_full, tune_collector
from memsvc.jobs.functions import job_functions
from memsvc.jobs.queue import ArqJobs, RetryPolicy, deserialise_job, job_pool, serialise_job
from memsvc.keys import Keys
from memsvc.logs import configure_logging
from memsvc.redisconn import (
    REDIS_DOWN,
    Outage,
    cancel_and_wait,
    connect,
    connection_options,
    refuse_a_cluster,
    wait_for_redis,
)
from memsvc.service.consumer import Consumer
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings
from memsvc.store.filejobs import FILE_JOBS

log = structlog.get_logger(__name__)

SETTINGS = ServiceSettings()
POLICY = RetryPolicy.of(SETTINGS)
SHUTDOWN_GRACE_SECONDS = 10.0
# arq builds its pool from the class below at import; startup refuses to run without
# the URL, so a worker never serves a Redis nobody named
REDIS_URL = SETTINGS.redis_url or "redis://127.0.0.1:6379/0"


async def startup(ctx: dict[str, Any]) -> None:
    configure_logging(SETTINGS.log_level, json_lines=True)
    if SETTINGS.redis_url is None:
        raise ConfigError("a worker needs MEMSVC_REDIS_URL: the Redis its clients publish to")
    redis = connect(REDIS_URL, SETTINGS)
    runtime = Runtime(
        SETTINGS,
        redis,
        jobs=ArqJobs(
            ctx["redis"],
            Keys(SETTINGS.key_prefix).job_queue,
            expires_seconds=SETTINGS.job_max_age_seconds * 2,
        ),
    )
    FILE_JOBS.allow_inline(SETTINGS.worker_inline_file_jobs)
    await runtime.warm_up()  # before the first event: its prefetch must not pay for it
    if ctx.get("metrics") is not None:
        from memsvc.gateway.metrics import serve_for_worker

        host, port = ctx["metrics"]
        ctx["metrics_task"] = asyncio.create_task(serve_for_worker(runtime.bus, host, port))
    consumer = Consumer(runtime, exit_when_refused=True)
    consuming = asyncio.create_task(consumer.run())
    consuming.add_done_callback(_exit_when_consumer_ends)
    ctx.update(
        collector_task=asyncio.create_task(collect_in_full()),
        runtime=runtime,
        dead_letters=runtime.dead_letters,
        event_log=runtime.log,
        consumer=consumer,
        consumer_task=consuming,
    )


def _exit_when_consumer_ends(consuming: asyncio.Task[None]) -> None:
    """A consumer that ended on its own (Redis refuses this worker's user, or a fault) ends
    the process (SIGTERM: arq shuts down as for any stop), which ``run`` then reports: not
    a worker that runs jobs and reads no event."""
    if consuming.cancelled() or (ended := consuming.exception()) is None:
        return
    if isinstance(ended, MemoryMisconfiguredError):
        log.critical("worker_misconfigured", error=str(ended))
    else:
        log.critical("consumer_failed", error=repr(ended))
    os.kill(os.getpid(), signal.SIGTERM)


async def shutdown(ctx: dict[str, Any]) -> None:
    consumer: Consumer | None = ctx.get("consumer")
    if consumer is None:
        return
    await consumer.stop(SHUTDOWN_GRACE_SECONDS)
    task: asyncio.Task[None] = ctx["consumer_task"]
    await cancel_and_wait(task)
    for name in ("metrics_task", "collector_task"):
        if name in ctx:
            await cancel_and_wait(ctx[name])
    runtime: Runtime = ctx["runtime"]
    await runtime.aclose()
    await runtime.redis.aclose()


class WorkerSettings:
    """arq's settings for a memsvc worker (``arq workers.settings.WorkerSettings``)."""

    functions: ClassVar[list[Any]] = [
        func(function, name=name)  # type: ignore[arg-type]  # arq types coroutines loosely
        for name, function in job_functions(POLICY).items()
    ]
    # arq's own connections time out and retry like every other memsvc connection
    redis_settings = dataclasses.replace(
        RedisSettings.from_dsn(REDIS_URL),
        conn_timeout=math.ceil(SETTINGS.redis_connect_timeout_seconds),  # arq takes whole seconds
        **{k: v for k, v in connection_options(SETTINGS).items() if k.startswith("retry")},
    )
    queue_name = Keys(SETTINGS.key_prefix).job_queue
    on_startup = startup
    on_shutdown = shutdown
    max_jobs = SETTINGS.job_concurrency
    job_timeout = SETTINGS.job_timeout_seconds
    poll_delay = SETTINGS.job_poll_seconds
    max_tries = SETTINGS.job_max_tries + 1  # the policy parks a job before arq gives up on it
    keep_result = 3600  # a job id stays taken this long: redelivered events do not re-queue it
    health_check_interval = 15
    job_completion_wait = int(SHUTDOWN_GRACE_SECONDS)
    job_serializer = staticmethod(serialise_job)
    job_deserializer = staticmethod(deserialise_job)


class ResilientWorker(Worker):
    """arq's worker, whose job loop outlives a Redis outage.

    arq ends its poll loop, and with it the process and the event consumer, on the
    first ``ConnectionError``. Here a poll that cannot reach Redis backs off and polls
    again. A job that lost Redis mid-run is not lost: its result was never written,
    so it runs again once its in-progress key expires (job functions are idempotent).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._outage = Outage("job_poll_failed", cap=5.0)

    async def _poll_iteration(self) -> None:
        try:
            await super()._poll_iteration()
        except REDIS_DOWN as exc:
            await self._outage.wait(exc)
        else:
            self._outage.over()

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        for job_id in job_ids:
            try:
                await super().start_jobs([job_id])
            except REDIS_DOWN:
                # arq took a job slot before Redis failed; it would never be given back
                self.job_counter -= 1
                self.sem.release()
                raise


def run(*, burst: bool = False, metrics: tuple[str, int] | None = None) -> None:
    """Run one worker process until SIGTERM (or, with ``burst``, an empty job queue);
    ``metrics``: the (host, port) to serve its metrics on."""
    settings = get_kwargs(WorkerSettings)  # type: ignore[arg-type]
    loop = _event_loop()
    asyncio.set_event_loop(loop)  # the loop arq's worker takes as its own
    # arq gives up on a Redis that is not up after five tries a second apart; a burst run
    # (a cron job draining the queue) fails at once instead: its next run is the retry
    loop.run_until_complete(wait_for_redis(REDIS_URL, SETTINGS, patient=not burst))
    # before arq touches its keys: on a Cluster its first command fails with MOVED
    loop.run_until_complete(refuse_a_cluster(REDIS_URL, SETTINGS))
    worker = ResilientWorker(
        **{
            **settings,
            "burst": burst,
            "ctx": {"metrics": metrics},
            "redis_pool": job_pool(REDIS_URL, SETTINGS),
        }
    )
    tune_collector()
    worker.run()
    consuming: asyncio.Task[None] | None = worker.ctx.get("consumer_task")
    if consuming is not None and consuming.done() and not consuming.cancelled():
        refused = consuming.exception()
        if refused is not None:
            raise refused


def _event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (not on Windows): a worker spends about a tenth
    less CPU on a ``memory`` add on it (``bench.hermes_add``)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - a platform uvloop does not build for
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()
