"""Receipts tell a redelivered write whether it was already committed."""

from __future__ import annotations

from redis.asyncio import Redis

from memsvc.edits import Change
from memsvc.keys import Keys
from memsvc.receipts import Receipt, Receipts

BEFORE, AFTER, OTHER = "b" * 64, "a" * 64, "o" * 64


def intent(*changes: Change) -> Receipt:
    return Receipt("intent", {}, "user", list(changes), before=BEFORE, after=AFTER)


def test_the_file_digest_decides_when_it_can() -> None:
    receipt = intent(Change("add", "x"))
    assert receipt.committed([], AFTER)  # the file is exactly what the write produced
    assert not receipt.committed(["x"], BEFORE)  # the file is exactly what it started from


def test_after_other_writes_the_visible_changes_decide() -> None:
    assert intent(Change("add", "x")).committed(["x", "y"], OTHER)
    assert not intent(Change("add", "x")).committed(["y"], OTHER)
    assert intent(Change("remove", "x")).committed(["y"], OTHER)
    assert not intent(Change("remove", "x")).committed(["x"], OTHER)
    assert intent(Change("replace", "new", previous="old")).committed(["new"], OTHER)
    assert not intent(Change("replace", "new", previous="old")).committed(["old"], OTHER)


def test_a_done_receipt_is_always_committed() -> None:
    assert Receipt("done", {}, "user", []).committed([], OTHER)


async def test_receipts_round_trip_and_expire(fake_redis: Redis) -> None:
    receipts = Receipts(fake_redis, Keys("t"), ttl_seconds=100)
    handle = receipts.for_event("u1", "e1")
    assert await handle.load() is None
    await handle.record(
        "intent",
        {"success": True, "message": "中文"},
        "memory",
        [Change("replace", "n", previous="o")],
        before=BEFORE,
        after=AFTER,
    )
    assert await handle.load() == Receipt(
        "intent",
        {"success": True, "message": "中文"},
        "memory",
        [Change("replace", "n", previous="o")],
        before=BEFORE,
        after=AFTER,
    )
    assert 0 < await fake_redis.ttl(Keys("t").receipt("u1", "e1")) <= 100
    assert await receipts.for_event("u2", "e1").load() is None  # per user
