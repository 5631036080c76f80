"""The worker process: its job loop while Redis is down, and what its startup checks and sets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import fakeredis
import pytest
from arq.connections import ArqRedis
from redis.exceptions import OutOfMemoryError, ReadOnlyError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memsvc.service.worker import ResilientWorker, WorkerSettings
from memsvc.store import filejobs
from memsvc.store.filejobs import FileJobs


def _worker_on(pool: ArqRedis) -> ResilientWorker:
    return ResilientWorker(
        functions=WorkerSettings.functions,
        redis_pool=pool,
        queue_name="svc:jobs",
        handle_signals=False,
        poll_delay=0.01,
    )


async def test_a_job_poll_that_cannot_reach_redis_waits_and_polls_again() -> None:
    server = fakeredis.FakeServer()
    pool = ArqRedis(connection_pool=fakeredis.aioredis.FakeRedis(server=server).connection_pool)
    worker = _worker_on(pool)
    server.connected = False
    await worker._poll_iteration()  # arq alone raises ConnectionError here: the process ends
    assert worker._outage.failures == 1
    server.connected = True
    await worker._poll_iteration()
    assert worker._outage.failures == 0
    await pool.aclose()


@pytest.mark.parametrize(
    "refusal",
    [
        OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
        ReadOnlyError("You can't write against a read only replica."),
    ],
)
async def test_a_redis_that_refuses_the_health_check_write_is_waited_out_too(
    refusal: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over ``maxmemory`` or turned replica, Redis refuses the poll's health-check write:
    arq alone ended the process there, and it stayed down once Redis took writes again."""
    pool = ArqRedis(connection_pool=fakeredis.aioredis.FakeRedis().connection_pool)
    worker = _worker_on(pool)
    refusing = True

    async def psetex(*args: Any, **kwargs: Any) -> Any:
        if refusing:
            raise refusal
        return await ArqRedis.psetex(pool, *args, **kwargs)

    monkeypatch.setattr(pool, "psetex", psetex)
    await worker._poll_iteration()
    assert worker._outage.failures == 1
    refusing = False
    await worker._poll_iteration()
    assert worker._outage.failures == 0
    await pool.aclose()


async def test_the_job_loop_gives_up_on_a_redis_that_never_answers() -> None:
    """arq's own pool has no command timeout: a Redis that swallowed a request held the job
    loop, and every background job, for good."""
    from memsvc.jobs.queue import job_pool
    from memsvc.settings import ServiceSettings

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)  # the request, never answered
        await asyncio.sleep(3600)

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = ServiceSettings(key_prefix="svc", redis_timeout_seconds=1.5)
    pool = job_pool(f"redis://127.0.0.1:{port}/0", settings)
    try:
        with pytest.raises(RedisTimeoutError):
            # generous: the pool's own timeout (1.5 s) ends it long before
            async with asyncio.timeout(30):
                await pool.zrangebyscore("svc:arq", 0, 1)
        assert pool.default_queue_name == "svc:arq"  # the queue the workers poll
    finally:
        await pool.aclose()
        server.close()


@pytest.mark.usefixtures("restore_logging")  # startup configures the process's logging
async def test_a_worker_started_without_a_redis_url_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As ``arq workers.settings.WorkerSettings`` would start it, bypassing the CLI."""
    from memsvc.errors import InvalidInputError
    from memsvc.service import worker

    monkeypatch.setattr(worker, "SETTINGS", worker.SETTINGS.model_copy(update={"redis_url": None}))
    with pytest.raises(InvalidInputError, match="MEMSVC_REDIS_URL"):
        await worker.startup({})


@pytest.mark.usefixtures("restore_logging")
@pytest.mark.parametrize("inline", [True, False])
async def test_a_worker_runs_file_jobs_on_its_loop_unless_the_setting_says_no(
    inline: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``MEMSVC_WORKER_INLINE_FILE_JOBS``: off is the answer for a disk that may hang."""
    from memsvc.service import worker

    settings = worker.SETTINGS.model_copy(
        update={
            "redis_url": "redis://127.0.0.1:6379/0",
            "data_dir": tmp_path,
            "worker_inline_file_jobs": inline,
        }
    )
    server = fakeredis.FakeServer()
    assert worker.FILE_JOBS is filejobs.FILE_JOBS  # the one the store's jobs go through
    monkeypatch.setattr(worker, "SETTINGS", settings)
    monkeypatch.setattr(worker, "connect", lambda *_: fakeredis.FakeAsyncRedis(server=server))
    jobs = FileJobs()
    monkeypatch.setattr(worker, "FILE_JOBS", jobs)
    pool = ArqRedis(connection_pool=fakeredis.aioredis.FakeRedis(server=server).connection_pool)
    ctx: dict[str, Any] = {"redis": pool}
    assert not jobs.inline  # what every other process keeps
    await worker.startup(ctx)
    try:
        assert jobs.inline is inline
    finally:
        await worker.shutdown(ctx)
        await pool.aclose()
