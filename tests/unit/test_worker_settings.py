"""The worker's job loop while Redis is down."""

from __future__ import annotations

import fakeredis
import pytest
from arq.connections import ArqRedis

from memsvc.service.worker import ResilientWorker, WorkerSettings


async def test_a_job_poll_that_cannot_reach_redis_waits_and_polls_again() -> None:
    server = fakeredis.FakeServer()
    pool = ArqRedis(connection_pool=fakeredis.aioredis.FakeRedis(server=server).connection_pool)
    worker = ResilientWorker(
        functions=WorkerSettings.functions,
        redis_pool=pool,
        queue_name="svc:jobs",
        handle_signals=False,
        poll_delay=0.01,
    )
    server.connected = False
    await worker._poll_iteration()  # arq alone raises ConnectionError here: the process ends
    assert worker._outage.failures == 1
    server.connected = True
    await worker._poll_iteration()
    assert worker._outage.failures == 0
    await pool.aclose()


async def test_a_worker_started_without_a_redis_url_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As ``arq workers.settings.WorkerSettings`` would start it, bypassing the CLI."""
    from memsvc.errors import InvalidInputError
    from memsvc.service import worker

    monkeypatch.setattr(worker, "SETTINGS", worker.SETTINGS.model_copy(update={"redis_url": None}))
    with pytest.raises(InvalidInputError, match="MEMSVC_REDIS_URL"):
        await worker.startup({})
