"""Receipts: the recorded outcome of a write event, per user, for a limited time."""

from __future__ import annotations

from redis.asyncio import Redis

from memsvc.keys import Keys
from memsvc.store.edits import Change
from memsvc.store.receipts import Receipt, Receipts


async def test_receipts_round_trip_and_expire(fake_redis: Redis) -> None:
    receipts = Receipts(fake_redis, Keys("t"), ttl_seconds=100)
    handle = receipts.for_event("u1", "e1")
    assert await handle.load() is None
    recorded = Receipt(
        {"success": True, "message": "中文"}, "memory", [Change("replace", "n", previous="o")]
    )
    await handle.record(recorded)
    assert await handle.load() == recorded
    assert 0 < await fake_redis.ttl(Keys("t").receipt("u1", "e1")) <= 100
    assert await receipts.for_event("u2", "e1").load() is None  # per user


def test_a_receipt_encodes_to_what_it_decodes_from() -> None:
    receipt = Receipt({"success": False, "error": "x"}, "user", [Change("remove", "gone")])
    assert Receipt.decode(receipt.encode()) == receipt


async def test_a_receipt_recorded_late_never_replaces_one_that_counts(fake_redis: Redis) -> None:
    """A worker stalled between working out a refusal and recording it: the worker that took
    the event over applied it meanwhile, and that outcome is what a caller looks up."""
    handle = Receipts(fake_redis, Keys("t")).for_event("u1", "e1")
    applied = Receipt({"success": True, "message": "Entry added."}, "user", [Change("add", "x")])
    assert await handle.record(applied)
    refused = Receipt({"success": False, "error": "over the limit"}, "user", [])
    parked = Receipt({"success": False, "error": "gave up", "parked": True}, "user", [])
    assert not await handle.record(refused) and not await handle.record(parked)
    assert await handle.load() == applied
    # a parked write's receipt gives way to what its re-drive came to, with its keys cleared
    other = Receipts(fake_redis, Keys("t")).for_event("u1", "e2")
    assert await other.record(parked)
    await fake_redis.set("t:{u1}:failed", "1")
    assert await other.record(refused, clears=["t:{u1}:failed"])
    assert await other.load() == refused and not await fake_redis.exists("t:{u1}:failed")
