"""The embedded service owns its worker and its in-memory Redis: started once, stopped once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memsvc.client import MemoryClient
from memsvc.errors import ClientStateError
from memsvc.service.embedded import EmbeddedService
from memsvc.settings import ServiceSettings


def _settings(tmp_path: Path) -> ServiceSettings:
    return ServiceSettings(redis_url=None, data_dir=tmp_path / "data")


async def test_it_serves_a_client_and_cannot_be_started_twice(tmp_path: Path) -> None:
    async with EmbeddedService(_settings(tmp_path)) as redis:
        async with MemoryClient(settings=_settings(tmp_path), redis=redis) as mem:
            args = {"action": "add", "target": "user", "content": "Name: Ada"}
            result = await mem.call_tool("u1", "a1", "t1", "memory", args)
        assert result["success"] is True
    service = EmbeddedService(_settings(tmp_path))
    await service.start()
    with pytest.raises(ClientStateError, match="opened"):
        await service.start()
    await service.stop()
    await service.stop()  # a second stop is a no-op
    with pytest.raises(ClientStateError, match="closed"):
        await service.start()


async def test_a_start_that_fails_stops_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = EmbeddedService(_settings(tmp_path))

    async def broken() -> None:
        raise RuntimeError("no group")

    monkeypatch.setattr(service.runtime.bus, "ensure_group", broken)
    before = asyncio.all_tasks()
    with pytest.raises(RuntimeError, match="no group"):
        await service.start()
    assert asyncio.all_tasks() <= before  # no consumer left running
    with pytest.raises(ClientStateError, match="closed"):
        await service.start()
