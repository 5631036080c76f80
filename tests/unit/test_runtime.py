"""The runtime: one bounded cache of managers per worker process."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis

from memsvc.builtin.provider import BuiltinProvider
from memsvc.builtin.snapshot import OMITTED_PREFIX
from memsvc.errors import ClientStateError
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings
from memsvc.store.memfile import serialise


async def test_the_manager_cache_keeps_the_most_recently_used(
    tmp_path: Path, fake_redis: Redis
) -> None:
    settings = ServiceSettings(data_dir=tmp_path, manager_cache_size=2)
    runtime = Runtime(settings, fake_redis)
    a1 = (await runtime.memory("u", "a1")).manager
    a2 = (await runtime.memory("u", "a2")).manager
    assert (await runtime.memory("u", "a1")).manager is a1  # a1 is now the most recent
    await runtime.memory("u", "a3")  # over the bound: a2, the least recent, goes
    assert (await runtime.memory("u", "a1")).manager is a1
    assert (await runtime.memory("u", "a2")).manager is not a2
    await runtime.aclose()


async def test_a_closed_runtime_refuses_to_build_managers(
    tmp_path: Path, fake_redis: Redis
) -> None:
    """A late event after shutdown must not open a manager nobody will flush or close."""
    async with Runtime(ServiceSettings(data_dir=tmp_path), fake_redis) as runtime:
        await runtime.memory("u", "a1")
    with pytest.raises(ClientStateError, match="closed"):
        await runtime.memory("u", "a1")
    assert await fake_redis.ping()  # the connection stays its owner's


async def test_a_per_user_token_budget_reaches_a_manager_already_built(
    tmp_path: Path, fake_redis: Redis
) -> None:
    """A PATCH of ``injection.max_tokens`` applies to the next snapshot, not the next restart."""
    async with Runtime(ServiceSettings(data_dir=tmp_path), fake_redis) as runtime:
        builtin = (await runtime.memory("u", "a1")).manager.builtin
        assert isinstance(builtin, BuiltinProvider)
        path = builtin.store.path("user")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(serialise([f"fact {n} " + "z" * 90 for n in range(12)]))
        assert OMITTED_PREFIX not in (await builtin.take_snapshot()).user_block

        await runtime.configs.update_user("u", {"injection": {"max_tokens": 100}})
        again = (await runtime.memory("u", "a1")).manager.builtin
        assert again is builtin
        assert OMITTED_PREFIX in (await builtin.take_snapshot()).user_block
