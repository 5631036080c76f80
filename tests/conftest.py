"""Shared fixtures: a data dir, fake and real Redis, a runtime."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path

import fakeredis
import pytest
from redis.asyncio import Redis

from memsvc.builtin.snapshot import RedisSnapshotCache
from memsvc.keys import Keys
from memsvc.paths import DataLayout
from memsvc.service.sessions import SessionState, TurnFailures
from memsvc.store.filestore import BuiltinStore, Limits
from memsvc.store.journal import FileJournal
from memsvc.store.locks import FileLocks, RedisLocks

REAL_REDIS_URL = os.environ.get("MEMSVC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


async def until(
    predicate: Callable[[], Awaitable[bool]], timeout: float = 60.0, every: float = 0.02
) -> None:
    """Poll ``predicate`` until it holds: publish-only events and background jobs, and work
    done by other processes, show up a moment later."""
    for _ in range(int(timeout / every)):
        if await predicate():
            return
        await asyncio.sleep(every)
    raise AssertionError(f"condition not reached within {timeout:g}s")


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` with its bytes: what "writes nothing" and "changes no byte"
    are checked on."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def turns(document_ids: Iterable[str]) -> list[str]:
    """Turn documents as ``thread:turn``, in order (their ids also carry a digest of the text)."""
    return [document_id.rsplit(":", 1)[0] for document_id in document_ids]


@pytest.fixture
def layout(tmp_path: Path) -> DataLayout:
    return DataLayout.at(tmp_path / "data")


@pytest.fixture
async def fake_redis() -> AsyncIterator[Redis]:
    client = fakeredis.aioredis.FakeRedis()
    yield client
    await client.aclose()


@pytest.fixture
def test_prefix() -> str:
    """A key prefix of this test alone, so tests never see each other's keys."""
    return f"memsvc-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def real_redis_url() -> str:
    return REAL_REDIS_URL


@pytest.fixture
async def real_redis(test_prefix: str) -> AsyncIterator[Redis]:
    """The machine's Redis; every key under this test's prefix is deleted afterwards."""
    client = Redis.from_url(REAL_REDIS_URL)
    try:
        await client.ping()
    except Exception as exc:  # a missing Redis is a failure, never a skip
        pytest.fail(f"integration tests need Redis at {REAL_REDIS_URL}: {exc}")
    yield client
    keys = [key async for key in client.scan_iter(match=f"{test_prefix}:*", count=500)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
def failures(fake_redis: Redis) -> TurnFailures:
    return SessionState(fake_redis, Keys("memsvc-test")).failures("u1", "a1")


@pytest.fixture
def snapshots(fake_redis: Redis) -> RedisSnapshotCache:
    return RedisSnapshotCache(fake_redis, Keys("memsvc-test"))


@pytest.fixture
def file_store(layout: DataLayout) -> BuiltinStore:
    return BuiltinStore(layout, FileLocks(layout), user_id="u1", agent_id="a1", limits=Limits())


@pytest.fixture
def redis_store(layout: DataLayout, fake_redis: Redis) -> BuiltinStore:
    keys = Keys("memsvc-test")
    locks = RedisLocks(fake_redis, keys, lease_seconds=2, wait_seconds=2)
    journal = FileJournal(fake_redis, keys)
    return BuiltinStore(
        layout, locks, user_id="u1", agent_id="a1", limits=Limits(), journal=journal
    )


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick): a test's own server, or a Redis
    that refuses connections; a fixed port such as 1 may be another process's."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
