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
