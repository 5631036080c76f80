"""An arq worker with one no-op job and memsvc's job-loop settings: the throughput baseline."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from arq.connections import RedisSettings

from memsvc.settings import ServiceSettings

SETTINGS = ServiceSettings()


async def noop(ctx: dict[str, Any]) -> None:
    return None


class NoopWorkerSettings:
    functions: ClassVar[list[Any]] = [noop]
    redis_settings = RedisSettings.from_dsn(SETTINGS.redis_url or "redis://127.0.0.1:6379/0")
    queue_name = os.environ["BENCH_NOOP_QUEUE"]
    max_jobs = SETTINGS.job_concurrency
    poll_delay = SETTINGS.job_poll_seconds
    keep_result = 60
    burst = True
