"""arq ``WorkerSettings`` of the memsvc worker.

One process runs both halves of the service: the event consumer (request-path
events, read from a Redis Stream without a poll interval) as a task started at
startup, and arq's job loop for background work (retains, mirrors). Settings
come from ``MEMSVC_*``; ``poll_delay`` is short because it bounds how soon a
background job starts, and jobs are short so that a killed job is re-run soon.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, ClassVar

from arq.connections import RedisSettings
from arq.worker import func
from redis.asyncio import Redis

from memsvc.consumer import Consumer
from memsvc.jobs import ArqJobs, RetryPolicy, deserialise_job, serialise_job
from memsvc.keys import Keys
from memsvc.logs import configure_logging
from memsvc.runtime import Runtime
from memsvc.settings import ServiceSettings
from workers.jobs import job_functions

SETTINGS = ServiceSettings()
POLICY = RetryPolicy.of(SETTINGS)
SHUTDOWN_GRACE_SECONDS = 10.0


async def startup(ctx: dict[str, Any]) -> None:
    configure_logging(SETTINGS.log_level, json_lines=True)
    redis = Redis.from_url(SETTINGS.redis_url or "redis://127.0.0.1:6379/0")
    runtime = Runtime(
        SETTINGS,
        redis,
        jobs=ArqJobs(
            ctx["redis"],
            Keys(SETTINGS.key_prefix).job_queue,
            expires_seconds=SETTINGS.job_max_age_seconds * 2,
        ),
    )
    await runtime.warm_up()  # before the first event: its prefetch must not pay for it
    consumer = Consumer(runtime)
    ctx.update(
        runtime=runtime,
        dead_letters=runtime.dead_letters,
        event_log=runtime.log,
        consumer=consumer,
        consumer_task=asyncio.create_task(consumer.run()),
    )


async def shutdown(ctx: dict[str, Any]) -> None:
    consumer: Consumer | None = ctx.get("consumer")
    if consumer is None:
        return
    await consumer.stop(SHUTDOWN_GRACE_SECONDS)
    task: asyncio.Task[None] = ctx["consumer_task"]
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    runtime: Runtime = ctx["runtime"]
    await runtime.aclose()
    await runtime.redis.aclose()


class WorkerSettings:
    functions: ClassVar[list[Any]] = [
        func(function, name=name)  # type: ignore[arg-type]  # arq types coroutines loosely
        for name, function in job_functions(POLICY).items()
    ]
    redis_settings = RedisSettings.from_dsn(SETTINGS.redis_url or "redis://127.0.0.1:6379/0")
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
