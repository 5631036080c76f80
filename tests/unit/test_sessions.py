"""Session state in Redis: thread tracking, the turn ledger, per-turn failure counts."""

from __future__ import annotations

from redis.asyncio import Redis

from memsvc.keys import Keys
from memsvc.sessions import FAILURES_TTL_SECONDS, SessionState


async def test_entering_a_thread_returns_the_previous_one(fake_redis: Redis) -> None:
    state = SessionState(fake_redis, Keys("t"))
    assert await state.enter_thread("u", "a", "t1") is None
    assert await state.enter_thread("u", "a", "t1") == "t1"
    assert await state.enter_thread("u", "a", "t2") == "t1"
    assert await state.enter_thread("u", "other-agent", "t9") is None


async def test_turn_indices_are_dense_and_stable_per_event(fake_redis: Redis) -> None:
    state = SessionState(fake_redis, Keys("t"))
    assert [await state.turn_index("u", "a", "t1", e) for e in ("e1", "e2", "e1", "e3")] == [
        1,
        2,
        1,
        3,
    ]
    assert await state.turn_index("u", "a", "t2", "e9") == 1  # per thread
    assert await state.turn_count("u", "a", "t1") == 3


async def test_an_agents_own_turn_numbers_are_kept(fake_redis: Redis) -> None:
    state = SessionState(fake_redis, Keys("t"))
    assert await state.turn_index("u", "a", "t", "e5", given=5) == 5
    assert await state.turn_index("u", "a", "t", "e4", given=4) == 4
    assert await state.turn_index("u", "a", "t", "e5", given=7) == 5  # first answer sticks
    assert await state.turn_index("u", "a", "t", "e-next") == 6  # numbering continues


async def test_failure_counts_are_per_thread_expire_and_reset(fake_redis: Redis) -> None:
    keys = Keys("t")
    failures = SessionState(fake_redis, keys).failures("u", "a")
    assert [await failures.record("t1") for _ in range(3)] == [1, 2, 3]
    assert await failures.record("t2") == 1
    assert 0 < await fake_redis.ttl(keys.failures("u", "a", "t1")) <= FAILURES_TTL_SECONDS
    await failures.reset("t1")
    assert await failures.record("t1") == 1
