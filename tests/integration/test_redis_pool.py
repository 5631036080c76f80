"""Connections of a busy process are handed out at once, not one per loop turn."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import ConnectionPool, Redis

from memsvc.redisconn import UnqueuedPool, connect
from memsvc.settings import ServiceSettings

pytestmark = pytest.mark.integration

URL = "redis://127.0.0.1:6379/0"
CALLERS = 30


async def _loop_turns_for_checkouts(pool: ConnectionPool) -> int:
    """Turns of the event loop until ``CALLERS`` tasks, arriving together, all hold a
    connection (every connection made and checked beforehand)."""
    warm = await asyncio.gather(*(pool.get_connection() for _ in range(CALLERS)))
    await asyncio.gather(*(pool.release(connection) for connection in warm))
    turns = 0
    taking = asyncio.gather(*(pool.get_connection() for _ in range(CALLERS)))
    while not taking.done():
        turns += 1
        await asyncio.sleep(0)
    await asyncio.gather(*(pool.release(connection) for connection in taking.result()))
    await pool.disconnect()
    return turns


async def test_checkouts_do_not_queue_behind_each_others_checks() -> None:
    stock = await _loop_turns_for_checkouts(ConnectionPool.from_url(URL))
    ours = await _loop_turns_for_checkouts(UnqueuedPool.from_url(URL))
    # the stock pool checks one connection per turn under its lock; ours checks all at once
    assert stock >= CALLERS
    assert ours <= 5


async def test_connect_serves_commands_through_the_unqueued_pool() -> None:
    redis: Redis = connect(URL, ServiceSettings(redis_url=URL))
    try:
        assert isinstance(redis.connection_pool, UnqueuedPool)
        assert await asyncio.gather(*(redis.ping() for _ in range(CALLERS))) == [True] * CALLERS
    finally:
        await redis.aclose()
