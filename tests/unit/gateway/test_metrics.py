"""Prometheus metrics: what the service counts as it runs, and a worker's metrics server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client import REGISTRY

from memsvc import telemetry
from memsvc.gateway import metrics
from memsvc.hindsight.client import HindsightClient, HindsightError
from memsvc.hindsight.fake import FakeHindsight
from memsvc.redisconn import cancel_and_wait
from tests.conftest import free_port, until
from tests.unit.conftest import Service


@pytest.fixture(autouse=True)
def exported() -> Iterator[None]:
    metrics.install()
    yield
    telemetry.install(telemetry.Telemetry())


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_events_and_lock_waits_are_counted(service: Service) -> None:
    events = sample("memsvc_events_total", type="memory_write", outcome="ok")
    waits = sample("memsvc_lock_wait_seconds_count", kind="redis")
    handled = sample("memsvc_event_seconds_count", type="memory_write")
    args = {"action": "add", "target": "user", "content": "counted"}
    assert (await service.client.call_tool("u1", "a1", "t1", "memory", args))["success"]

    async def counted() -> bool:  # the count follows the reply
        return sample("memsvc_events_total", type="memory_write", outcome="ok") == events + 1

    await until(counted)
    assert sample("memsvc_lock_wait_seconds_count", kind="redis") == waits + 1
    assert sample("memsvc_event_seconds_count", type="memory_write") == handled + 1


async def test_hindsight_errors_are_counted_by_kind(fake: FakeHindsight) -> None:
    before = sample("memsvc_hindsight_errors_total", method="POST", kind="unavailable")
    fake.fail("recall", status=503)
    async with HindsightClient("http://hindsight", transport=fake.transport()) as client:
        with pytest.raises(HindsightError):
            await client.recall("bank", "query")
    after = sample("memsvc_hindsight_errors_total", method="POST", kind="unavailable")
    assert after == before + 1


async def test_a_worker_serves_its_metrics_with_fresh_gauges(service: Service) -> None:
    port = free_port()
    await service.redis.rpush(service.runtime.keys.dead_jobs, b"{}")  # type: ignore[misc]
    serving = asyncio.create_task(
        metrics.serve_for_worker(service.runtime.bus, "127.0.0.1", port, every=0.05)
    )
    async with httpx.AsyncClient() as http:

        async def served() -> bool:
            try:
                page = await http.get(f"http://127.0.0.1:{port}/metrics")
            except httpx.HTTPError:
                return False
            return 'memsvc_dead_letters{kind="jobs"} 1.0' in page.text

        await until(served)
        await cancel_and_wait(serving)
        with pytest.raises(httpx.HTTPError):
            await http.get(f"http://127.0.0.1:{port}/metrics")
