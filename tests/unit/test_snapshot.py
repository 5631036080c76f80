"""Snapshot rendering, byte for byte as Hermes renders it."""

from __future__ import annotations

from redis.asyncio import Redis

from memsvc.builtin.snapshot import RedisSnapshotCache, Snapshot, render_block, usage_figures
from memsvc.keys import Keys

SEP = "═" * 46


def test_user_block_matches_the_hermes_layout() -> None:
    block = render_block("user", ["Name: Ada", "Prefers tea"], 1375)
    assert block == (
        f"{SEP}\nUSER PROFILE (who the user is) [1% — 23/1,375 chars]\n{SEP}\n"
        "Name: Ada\n§\nPrefers tea"
    )


def test_memory_block_header() -> None:
    assert render_block("memory", ["n"], 2200).split("\n")[1] == (
        "MEMORY (your personal notes) [0% — 1/2,200 chars]"
    )


def test_empty_store_renders_nothing() -> None:
    assert render_block("user", [], 1375) == ""


def test_usage_is_floored_capped_at_100_and_uses_thousands_separators() -> None:
    assert usage_figures(165, 1375) == "12% — 165/1,375"
    assert usage_figures(1374, 1375) == "99% — 1,374/1,375"
    assert usage_figures(5000, 1375) == "100% — 5,000/1,375"


def test_snapshot_text_joins_memory_then_user_like_hermes() -> None:
    snap = Snapshot(memory_block="M", user_block="U", taken_at=0)
    assert snap.text == "M\n\nU"
    assert Snapshot(memory_block="", user_block="U", taken_at=0).text == "U"


async def test_the_first_snapshot_put_for_a_thread_wins(snapshots: RedisSnapshotCache) -> None:
    first = Snapshot("a", "", 1.5)
    assert await snapshots.put_first("u", "a", "t", first) == first
    assert await snapshots.put_first("u", "a", "t", Snapshot("b", "", 2)) == first
    assert await snapshots.get("u", "a", "t") == first
    await snapshots.drop("u", "a", "t")
    assert await snapshots.get("u", "a", "t") is None


async def test_snapshots_are_shared_by_every_worker_of_one_redis(fake_redis: Redis) -> None:
    one, two = RedisSnapshotCache(fake_redis, Keys("x")), RedisSnapshotCache(fake_redis, Keys("x"))
    await one.put_first("u", "a", "t", Snapshot("M", "U 中文 🙂", 3.0))
    assert await two.get("u", "a", "t") == Snapshot("M", "U 中文 🙂", 3.0)
    assert await RedisSnapshotCache(fake_redis, Keys("other")).get("u", "a", "t") is None


async def test_snapshots_expire(fake_redis: Redis) -> None:
    cache = RedisSnapshotCache(fake_redis, Keys("x"), ttl_seconds=60)
    await cache.put_first("u", "a", "t", Snapshot("M", "", 0))
    assert 0 < await fake_redis.ttl(Keys("x").snapshot("u", "a", "t")) <= 60


async def test_threads_frozen_on_unchanged_files_share_one_stored_snapshot(
    fake_redis: Redis,
) -> None:
    keys = Keys("x")
    cache = RedisSnapshotCache(fake_redis, keys)
    same = "MEMORY block " * 200
    for n, thread in enumerate(["t1", "t2", "t3"]):
        await cache.put_first("u", "a", thread, Snapshot(same, "U", float(n)))
    await cache.put_first("u", "a", "t4", Snapshot(same + " changed", "U", 9.0))
    bodies = [k async for k in fake_redis.scan_iter(match=keys.snapshot_bodies("u") + "*")]
    assert len(bodies) == 2  # one per distinct snapshot, not one per thread
    for n, thread in enumerate(["t1", "t2", "t3"]):  # each thread keeps its own time taken
        assert await cache.get("u", "a", thread) == Snapshot(same, "U", float(n))
    pointer = await fake_redis.get(keys.snapshot("u", "a", "t2"))
    assert pointer is not None and len(pointer) < 100  # a thread costs a pointer, not a copy
    await cache.drop("u", "a", "t1")  # a reload of one thread leaves the others' snapshot
    assert await cache.get("u", "a", "t2") == Snapshot(same, "U", 1.0)


async def test_a_pointer_whose_snapshot_is_gone_counts_as_no_snapshot(fake_redis: Redis) -> None:
    keys = Keys("x")
    cache = RedisSnapshotCache(fake_redis, keys)
    await cache.put_first("u", "a", "t", Snapshot("old", "", 1.0))
    for body in [k async for k in fake_redis.scan_iter(match=keys.snapshot_bodies("u") + "*")]:
        await fake_redis.delete(body)  # deleted by hand
    assert await cache.get("u", "a", "t") is None
    assert await cache.put_first("u", "a", "t", Snapshot("new", "", 2.0)) == Snapshot(
        "new", "", 2.0
    )
    assert await cache.get("u", "a", "t") == Snapshot("new", "", 2.0)
