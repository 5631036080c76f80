"""A whole service on fakeredis: runtime, one consumer (more on request), a client."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import structlog
from redis.asyncio import Redis

from memsvc.client import MemoryClient
from memsvc.hindsight.client import HindsightClient
from memsvc.hindsight.fake import FakeHindsight
from memsvc.jobs.functions import job_functions
from memsvc.jobs.queue import InlineJobs, RetryPolicy
from memsvc.redisconn import cancel_and_wait
from memsvc.service.consumer import Consumer
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings
from memsvc.store import filejobs
from memsvc.store.filejobs import FileJobs


@dataclass
class Service:
    settings: ServiceSettings
    redis: Redis
    runtime: Runtime
    client: MemoryClient
    jobs: InlineJobs
    consumers: list[tuple[Consumer, asyncio.Task[None]]] = field(default_factory=list)
    runtimes: list[Runtime] = field(default_factory=list)  # of the consumers started

    def start_consumer(self, name: str | None = None, runtime: Runtime | None = None) -> Consumer:
        consumer = Consumer(runtime or self.runtime, name=name)
        self.consumers.append((consumer, asyncio.create_task(consumer.run())))
        self.runtimes.append(runtime or self.runtime)
        return consumer

    async def stop_consumers(self, grace: float = 1.0) -> None:
        for consumer, task in self.consumers:
            await consumer.stop(grace)
            await cancel_and_wait(task)
        self.consumers.clear()

    async def settled(self) -> None:
        """Wait until the files written are renamed (a write is answered once committed),
        by this runtime and every consumer's."""
        for runtime in {id(r): r for r in [self.runtime, *self.runtimes]}.values():
            await runtime.write_batches.settled()

    def worker_runtime(self) -> Runtime:
        """Another worker process's runtime: same Redis and data dir, its own caches."""
        return Runtime(self.settings, self.redis, jobs=self.jobs)

    async def log(self) -> list[Any]:
        return [entry async for entry in self.runtime.log.entries()]


@pytest.fixture
def service_settings(tmp_path: Path) -> ServiceSettings:
    return ServiceSettings(
        data_dir=tmp_path / "data",
        key_prefix="svc",
        redis_url=None,
        claim_idle_seconds=0.3,
        prefetch_deadline_seconds=2.0,
        tool_deadline_seconds=5.0,
        prefetch_timeout_seconds=0.5,
        hindsight_recall_timeout_seconds=0.4,
        hindsight_reflect_timeout_seconds=4.0,
        lock_wait_seconds=5.0,
        lock_lease_seconds=5.0,
    )


@pytest.fixture
def hindsight_client() -> HindsightClient | None:
    """The runtime's Hindsight client; modules that configure Hindsight override this with
    ``fake_hindsight_client`` and their ``service_settings`` with :func:`with_hindsight`."""
    return None


@pytest.fixture
def fake() -> FakeHindsight:
    return FakeHindsight()


@pytest.fixture
async def fake_hindsight_client(fake: FakeHindsight) -> AsyncIterator[HindsightClient]:
    client = HindsightClient("http://hindsight", transport=fake.transport())
    yield client
    await client.aclose()


def with_hindsight(
    settings: ServiceSettings, config_dir: Path, *, retain_every_n_turns: int = 1
) -> ServiceSettings:
    """``settings`` with Hindsight configured at the address ``fake_hindsight_client`` uses."""
    config = config_dir / "config.yaml"
    config.write_text(
        "memory:\n"
        "  provider: hindsight\n"
        "  hindsight:\n"
        "    api_url: http://hindsight\n"
        f"    retain_every_n_turns: {retain_every_n_turns}\n"
    )
    return settings.model_copy(update={"config": config})


@pytest.fixture
async def service(
    service_settings: ServiceSettings, fake_redis: Redis, hindsight_client: HindsightClient | None
) -> AsyncIterator[Service]:
    ctx: dict[str, Any] = {}
    jobs = InlineJobs(job_functions(RetryPolicy(base_seconds=0.01, max_tries=3)), ctx)
    runtime = Runtime(service_settings, fake_redis, jobs=jobs, hindsight=hindsight_client)
    ctx.update(runtime=runtime, dead_letters=runtime.dead_letters, event_log=runtime.log)
    await runtime.bus.ensure_group()
    client = MemoryClient(settings=service_settings, redis=fake_redis)
    await client.__aenter__()
    svc = Service(service_settings, fake_redis, runtime, client, jobs)
    svc.start_consumer("w1")
    yield svc
    await svc.stop_consumers()
    await client.aclose()
    await jobs.drain()
    await runtime.aclose()


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """For a test of a command or a process start: it configures logging for its process."""
    yield
    structlog.reset_defaults()


@pytest.fixture(params=["inline", "threads"])
def file_jobs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> FileJobs:
    """The store's file jobs pinned to the event loop or to threads for the whole test, so
    that both ways a write can run are exercised whatever the machine's disk does."""
    jobs = FileJobs(inline=request.param == "inline", limit=math.inf)
    monkeypatch.setattr(filejobs, "FILE_JOBS", jobs)
    return jobs
