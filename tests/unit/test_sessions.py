"""Session state in Redis: thread tracking, the turn ledger, per-turn failure counts."""

from __future__ import annotations

from redis.asyncio import Redis

from memsvc.events import SyncTurnEvent, SyncTurnPayload, stamp
from memsvc.keys import Keys
from memsvc.service.bus import EventBus
from memsvc.service.eventlog import EventLog
from memsvc.service.sessions import FAILURES_TTL_SECONDS, SessionState


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


async def test_turns_are_numbered_in_publish_order_whoever_processes_them_first(
    fake_redis: Redis,
) -> None:
    keys = Keys("t")
    state = SessionState(fake_redis, keys)
    bus = EventBus(fake_redis, keys, EventLog(fake_redis, keys))
    events = [
        SyncTurnEvent(
            **stamp(),
            user_id="u",
            agent_id="a",
            thread_id="t1",
            payload=SyncTurnPayload(user_content=f"q{n}", assistant_content="a"),
        )
        for n in range(1, 5)
    ]
    for event in events:
        await bus.publish(event, order=keys.turn_queue("u", "a", "t1"))
    # workers pick them up out of order, and one is delivered twice
    order = [events[2], events[0], events[3], events[2], events[1]]
    got = {e.id: await state.turn_index("u", "a", "t1", e.id) for e in order}
    assert [got[e.id] for e in events] == [1, 2, 3, 4]
    assert await fake_redis.llen(keys.turn_queue("u", "a", "t1")) == 0  # type: ignore[misc]


async def test_an_agents_own_turn_numbers_are_kept(fake_redis: Redis) -> None:
    state = SessionState(fake_redis, Keys("t"))
    assert await state.turn_index("u", "a", "t", "e5", given=5) == 5
    assert await state.turn_index("u", "a", "t", "e4", given=4) == 4
    assert await state.turn_index("u", "a", "t", "e5", given=7) == 5  # first answer sticks
    assert await state.turn_index("u", "a", "t", "e-next") == 6  # numbering continues


async def test_failure_counts_are_per_thread_expire_and_reset(fake_redis: Redis) -> None:
    keys = Keys("t")
    failures = SessionState(fake_redis, keys).failures("u", "a")
    assert [await failures.record("t1", f"e{n}") for n in range(3)] == [1, 2, 3]
    assert await failures.record("t2", "e0") == 1
    assert 0 < await fake_redis.ttl(keys.failures("u", "a", "t1")) <= FAILURES_TTL_SECONDS
    await failures.reset("t1")
    assert await failures.record("t1", "e9") == 1


async def test_an_event_refused_twice_counts_once(fake_redis: Redis) -> None:
    """A refused write run again (redelivered, or by a stalled worker and the one that took it
    over) is one failure of the turn, not two."""
    failures = SessionState(fake_redis, Keys("t")).failures("u", "a")
    assert await failures.record("t1", "e1") == 1
    assert await failures.record("t1", "e1") == 1
    assert await failures.record("t1", "e2") == 2


async def test_the_turn_ledger_remembers_only_the_newest_turns(fake_redis: Redis) -> None:
    """A long thread's ledger stays bounded; recent redeliveries keep their numbers."""
    keys = Keys("t")
    state = SessionState(fake_redis, keys, ledger_size=5)
    ids = [f"e{n}" for n in range(1, 23)]
    assert [await state.turn_index("u", "a", "t1", e) for e in ids] == list(range(1, 23))
    held: set[str] = set()
    for key in (keys.turns("u", "a", "t1"), keys.earlier_turns("u", "a", "t1")):
        held |= {k.decode() for k in await fake_redis.hkeys(key)} - {"_next"}  # type: ignore[misc]
    assert set(ids[-5:]) <= held and len(held) < 2 * 5  # the newest, and never twice as many
    assert [await state.turn_index("u", "a", "t1", e) for e in ids[-5:]] == list(range(18, 23))
    assert await state.turn_count("u", "a", "t1") == 22  # the count is not forgotten
    # a turn older than the ledger, delivered again, is numbered as a new turn
    assert await state.turn_index("u", "a", "t1", "e1") == 23
