"""The embedded service: a worker inside this process, on an in-memory Redis.

With no ``MEMSVC_REDIS_URL`` the command line (and a ``MemoryClient`` built
without a URL) runs here: the same consumer, handlers and job functions as a
real worker, on fakeredis instead of a Redis server, and ``flock`` instead of
Redis leases for the files. Nothing in Redis outlives the process (snapshots,
the event log); the files under the data dir do.
"""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
from redis.asyncio import Redis

from memsvc.client import ClientState
from memsvc.errors import ClientStateError
from memsvc.jobs.functions import job_functions
from memsvc.jobs.queue import InlineJobs, RetryPolicy
from memsvc.redisconn import cancel_and_wait
from memsvc.service.consumer import Consumer
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings


class EmbeddedService:
    """One worker and its in-memory Redis, owned by this object: started once, stopped once.

    ``async with EmbeddedService(settings) as redis`` or ``start()`` / ``stop()``; a
    start that fails stops what it started, and a second start raises
    :class:`ClientStateError`. The Redis it returns is closed by ``stop()``.
    """

    def __init__(self, settings: ServiceSettings) -> None:
        self._settings = settings
        self._server = fakeredis.FakeServer()
        self.redis: Redis = fakeredis.aioredis.FakeRedis(server=self._server)
        ctx: dict[str, Any] = {}
        self._jobs = InlineJobs(job_functions(RetryPolicy.of(settings)), ctx)
        self.runtime = Runtime(settings, self.redis, shared_redis=False, jobs=self._jobs)
        ctx.update(
            runtime=self.runtime, dead_letters=self.runtime.dead_letters, event_log=self.runtime.log
        )
        self._consumer = Consumer(self.runtime, name="embedded")
        self._task: asyncio.Task[None] | None = None
        self._state = ClientState.UNOPENED

    async def __aenter__(self) -> Redis:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> Redis:
        if self._state is not ClientState.UNOPENED:
            raise ClientStateError(f"this embedded service is {self._state.value}")
        self._state = ClientState.OPENED
        try:
            await self.runtime.bus.ensure_group()
            self._task = asyncio.create_task(self._consumer.run())
        except BaseException:
            await self.stop()
            raise
        return self.redis

    async def stop(self) -> None:
        if self._state is ClientState.CLOSED:
            return
        self._state = ClientState.CLOSED
        await self._consumer.stop(grace_seconds=5.0)
        if self._task is not None:
            await cancel_and_wait(self._task)
        await self._jobs.drain()
        await self.runtime.aclose()
        await self.redis.aclose()
