"""The event log: bounded, filterable, followable."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from memsvc.errors import InvalidInputError
from memsvc.keys import Keys
from memsvc.service.eventlog import (
    MAX_RECORD_CHARS,
    PAGE_TOKEN,
    PAGE_TOKEN_SECONDS,
    EventLog,
    LogRecord,
    stream_position,
)


def record(n: int, user: str = "u1", type_: str = "prefetch") -> LogRecord:
    return LogRecord(
        outcome="ok",
        type=type_,
        event_id=f"e{n}",
        user_id=user,
        agent_id="a",
        thread_id="t",
        event={"n": n},
        detail={"ms": 1.5},
    )


async def test_entries_come_back_oldest_first_with_their_fields(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"))
    for n in range(3):
        await log.append(record(n, user=f"u{n}"))
    entries = [e async for e in log.entries(batch=2)]
    assert [e.event_id for e in entries] == ["e0", "e1", "e2"]
    assert entries[1].user_id == "u1" and entries[1].event == {"n": 1}
    assert entries[1].detail == {"ms": 1.5}
    assert [e.event_id for e in await log.tail(2)] == ["e1", "e2"]


async def test_tail_finds_the_newest_matches_reading_back_page_by_page(
    fake_redis: Redis,
) -> None:
    log = EventLog(fake_redis, Keys("t"))
    for n in range(25):
        await log.append(record(n, user="alice" if n % 5 == 0 else "bob"))
    newest = await log.tail(3, lambda e: e.user_id == "alice", batch=4)
    assert [e.event_id for e in newest] == ["e10", "e15", "e20"]
    assert [e.event_id for e in await log.tail(9, lambda e: e.user_id == "alice")] == [
        "e0",
        "e5",
        "e10",
        "e15",
        "e20",
    ]


async def test_the_log_is_bounded_by_count(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"), max_entries=10)
    for n in range(500):
        await log.append(record(n))
    assert await fake_redis.xlen(Keys("t").log) < 500


async def test_the_log_is_trimmed_by_age(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"), retention_seconds=0.001)
    await log.append(record(1))
    await asyncio.sleep(0.01)
    await log.trim_by_age()
    assert await fake_redis.xlen(Keys("t").log) == 0


async def test_a_huge_record_is_truncated_not_refused(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"))
    big = LogRecord(
        outcome="ok",
        type="sync_turn",
        event_id="e",
        event={"x": "y" * 200_000},
        detail={"result": "z" * 200_000, "ms": 3},
    )
    await log.append(big)
    (entry,) = await log.tail(1)
    assert entry.event_id == "e" and entry.type == "sync_turn"
    fields = await fake_redis.xrange(Keys("t").log)
    assert len(fields[0][1][b"body"]) <= MAX_RECORD_CHARS * 4


async def test_follow_yields_new_entries_as_they_come(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"))
    assert await log.newest() == "0-0"
    await log.append(record(0))
    newest = await log.newest()
    seen: list[str] = []

    async def follow() -> None:
        async for entry in log.follow(newest, block_ms=50):
            seen.append(entry.event_id)
            if len(seen) == 2:
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.05)
    await log.append(record(1))
    await log.append(record(2))
    await asyncio.wait_for(task, 5)
    assert seen == ["e1", "e2"]


async def test_a_tail_hands_over_to_a_follow_without_losing_what_came_between(
    fake_redis: Redis,
) -> None:
    """``log tail --follow``: a record appended while the tail was read (or printed) came
    neither in the tail nor in the follow that started after the newest record then."""
    log = EventLog(fake_redis, Keys("t"))
    for n in range(3):
        await log.append(record(n))
    newest = await log.newest()
    await log.append(record(3))  # while the tail is read
    assert [e.event_id for e in await log.tail(10, until=newest)] == ["e0", "e1", "e2"]
    await log.append(record(4))  # while it is printed
    seen: list[str] = []
    async for entry in log.follow(newest, block_ms=50):
        seen.append(entry.event_id)
        if len(seen) == 2:
            break
    assert seen == ["e3", "e4"]


async def test_an_oversized_record_stays_valid_json_and_a_write_stays_replayable(
    fake_redis: Redis,
) -> None:
    log = EventLog(fake_redis, Keys("t"))
    args = {"action": "add", "target": "user", "content": "é" * 60_000}  # the tool's cap
    write = {"id": "w", "type": "memory_write", "payload": {"args": args}}
    await log.append(
        LogRecord(
            outcome="ok",
            type="memory_write",
            event_id="w",
            event=write,
            detail={"result": {"entries": ["x" * 250_000]}, "ms": 2.0},
        )
    )
    turn = {"id": "s", "type": "sync_turn", "payload": {"user_content": "q" * 900_000}}
    await log.append(LogRecord(outcome="ok", type="sync_turn", event_id="s", event=turn))
    rows = await fake_redis.xrange(Keys("t").log)
    assert all(len(fields[b"body"].decode()) <= MAX_RECORD_CHARS for _, fields in rows)
    kept, cut = [e async for e in log.entries()]
    assert kept.event == write  # what replay re-applies is whole
    assert kept.detail == {"truncated": True, "ms": 2.0}
    assert cut.event is not None and cut.event["payload"] == {"truncated": True, "chars": 900_020}
    assert cut.event["id"] == "s" and cut.detail == {"truncated": True}


async def test_a_users_page_cursor_never_names_another_users_record(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"))
    for n in range(12):  # alice's records at 0 and 11, bob's between
        await log.append(record(n, user="alice" if n in (0, 11) else "bob"))
    bobs = {e.stream_id for e in [e async for e in log.entries()] if e.user_id == "bob"}

    first, cursor = await log.user_page("alice", limit=5, scan=4)
    assert [e.event_id for e in first] == ["e11"]
    assert cursor is not None and cursor not in bobs and PAGE_TOKEN.fullmatch(cursor)
    pages, seen = 0, []
    while cursor is not None:  # the tokens lead on through bob's records to alice's first
        page, cursor = await log.user_page("alice", before=cursor, limit=5, scan=4)
        seen += [e.event_id for e in page]
        assert cursor is None or cursor not in bobs
        pages += 1
    assert seen == ["e0"] and pages == 3

    full, at_own = await log.user_page("alice", limit=1, scan=4)
    assert at_own == full[0].stream_id  # a cursor at her own record is its id


async def test_a_page_token_is_only_its_users_and_only_for_a_while(fake_redis: Redis) -> None:
    log = EventLog(fake_redis, Keys("t"))
    for n in range(6):
        await log.append(record(n, user="bob"))
    _, token = await log.user_page("alice", limit=5, scan=2)
    assert token is not None
    with pytest.raises(InvalidInputError, match="expired or is not yours"):
        await log.user_page("bob", before=token, limit=5, scan=2)
    assert 0 < await fake_redis.ttl(Keys("t").log_pages("alice")) <= PAGE_TOKEN_SECONDS
    _, again = await log.user_page("alice", limit=5, scan=2)
    await fake_redis.expire(Keys("t").log_pages("alice"), 5)
    _, newest = await log.user_page("alice", limit=5, scan=2)  # each token renews them all
    assert await fake_redis.ttl(Keys("t").log_pages("alice")) > 5 and again != newest
    await fake_redis.delete(Keys("t").log_pages("alice"))
    with pytest.raises(InvalidInputError, match="start again"):
        await log.user_page("alice", before=token, limit=5, scan=2)


async def test_before_is_a_token_or_one_of_the_users_own_records(fake_redis: Redis) -> None:
    """Another id would let a user bisect the log by which of their own records a scan
    still reaches, and learn when another user's events happened."""
    log = EventLog(fake_redis, Keys("t"))
    for n in range(4):
        await log.append(record(n, user="alice" if n % 2 == 0 else "bob"))
    ids = {e.event_id: e.stream_id async for e in log.entries()}
    page, _ = await log.user_page("alice", before=ids["e2"], limit=5, scan=10)
    assert [e.event_id for e in page] == ["e0"]
    for before in (ids["e1"], ids["e3"], "1-0", "0-0", "99999999999999-0"):
        with pytest.raises(InvalidInputError, match="one of your records"):
            await log.user_page("alice", before=before, limit=5, scan=10)


async def test_page_tokens_are_new_each_time_and_bounded(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token the same for the same cursor would change only when another user's record
    arrives: polling a page would tell when others act."""
    monkeypatch.setattr("memsvc.service.eventlog.PAGE_TOKENS", 2)
    log = EventLog(fake_redis, Keys("t"))
    for n in range(12):
        await log.append(record(n, user="bob"))
    tokens = [(await log.user_page("alice", limit=5, scan=2))[1] for _ in range(5)]
    assert len(set(tokens)) == 5
    pages = Keys("t").log_pages("alice")
    assert await fake_redis.hlen(pages) + await fake_redis.hlen(f"{pages}:previous") <= 2 * 2
    for kept in tokens[-2:]:  # a token outlives at least PAGE_TOKENS newer ones
        page, _ = await log.user_page("alice", before=kept, limit=5, scan=2)
        assert page == []
    with pytest.raises(InvalidInputError, match="start again"):  # older ones are dropped
        await log.user_page("alice", before=tokens[0], limit=5, scan=2)


@pytest.mark.parametrize(
    "fields",
    [
        {"at": "notafloat", "body": "{}"},
        {"at": "nan", "body": "{}"},
        {"at": "1.0", "body": "[1, 2]"},
        {"at": "1.0", "body": '{"event": "a string", "detail": {}}'},
        {"at": "1.0", "body": '{"event": null, "detail": [1]}'},
        {"at": "1.0", "body": "{not json"},
        {"at": "1.0", "body": "{}", "user": b"al\xffice"},
    ],
    ids=["at", "at-nan", "body-array", "event-string", "detail-list", "body-text", "not-utf8"],
)
async def test_a_record_not_in_the_shape_memsvc_writes_is_read_as_unreadable(
    fake_redis: Redis, fields: dict[str, str | bytes]
) -> None:
    """Another release's record, one added by hand or damaged bytes: every reader of the
    log (``log tail``, replay, explain) carries on past it."""
    log = EventLog(fake_redis, Keys("t"))
    await log.append(record(0))
    raw = {"outcome": "ok", "type": "memory_write", "event_id": "x1", "user": "alice"} | fields
    await fake_redis.xadd(Keys("t").log, raw)  # type: ignore[arg-type]
    await log.append(record(2))
    entries = [e async for e in log.entries()]
    assert [e.event_id for e in entries] == ["e0", "x1", "e2"]
    odd = entries[1]
    assert odd.event is None and "unreadable" in odd.detail
    assert odd.at == stream_position(odd.stream_id)[0] / 1000  # when Redis took it
    assert [e.event_id for e in await log.tail(5)] == ["e0", "x1", "e2"]
