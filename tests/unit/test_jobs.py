"""Background jobs: backoff with jitter, bounded tries and age, parked, never dropped."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
import structlog
from arq.worker import Retry
from redis.asyncio import Redis

from memsvc.errors import LockTimeoutError
from memsvc.hindsight.client import HindsightRejected, HindsightUnavailable
from memsvc.jobs.functions import job_functions
from memsvc.jobs.payloads import FlushJob, Job
from memsvc.jobs.queue import DeadLetters, InlineJobs, RetryPolicy, durable
from memsvc.keys import Keys
from memsvc.service.eventlog import EventLog


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    policy = RetryPolicy(base_seconds=1, cap_seconds=30)
    for job_try, ceiling in [(1, 1), (2, 2), (3, 4), (5, 16), (9, 30), (40, 30)]:
        samples = [policy.backoff(job_try) for _ in range(200)]
        assert all(ceiling / 2 <= s <= ceiling for s in samples)
        assert max(samples) - min(samples) > ceiling / 4  # jitter de-synchronises workers


def test_the_default_policy_outlasts_an_outage_of_half_an_hour() -> None:
    policy = RetryPolicy()
    shortest = sum(policy.backoff(t) for t in range(1, policy.max_tries))
    assert shortest >= 25 * 60


def test_a_servers_retry_after_is_the_least_a_retry_waits() -> None:
    policy = RetryPolicy(base_seconds=1, cap_seconds=300)
    assert policy.backoff(1, at_least=42) == 42
    assert policy.backoff(1, at_least=10_000) == 300  # but never beyond the cap


def context(fake_redis: Redis, job_try: int = 1) -> dict[str, Any]:
    keys = Keys("t")
    return {
        "job_try": job_try,
        "dead_letters": DeadLetters(fake_redis, keys, EventLog(fake_redis, keys)),
        "event_log": EventLog(fake_redis, keys),
        "job_id": "j1",
    }


async def failing(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    raise ConnectionError("hindsight down")


async def test_a_failing_job_asks_arq_to_retry_later(fake_redis: Redis) -> None:
    job = durable(failing, RetryPolicy(max_tries=3, base_seconds=10))
    with pytest.raises(Retry) as info:
        await job(context(fake_redis, job_try=2), {"enqueued_at": time.time()})
    assert 10_000 <= (info.value.defer_score or 0) <= 20_000


async def test_a_job_out_of_tries_is_parked_with_its_payload_and_error(fake_redis: Redis) -> None:
    job = durable(failing, RetryPolicy(max_tries=3))
    payload = {"enqueued_at": time.time(), "user_id": "u1", "agent_id": "a1", "event_id": "e1"}
    await job(context(fake_redis, job_try=3), payload)
    (parked,) = await DeadLetters(fake_redis, Keys("t")).records()
    assert parked["function"] == "failing" and parked["payload"] == payload
    assert parked["error"] == "ConnectionError: hindsight down" and parked["tries"] == 3
    entries = [e async for e in EventLog(fake_redis, Keys("t")).entries()]
    assert [(e.outcome, e.type, e.user_id, e.event_id) for e in entries] == [
        ("dead", "job:failing", "u1", "e1")
    ]
    assert entries[0].detail == {
        "error": "ConnectionError: hindsight down",
        "job_id": "j1",
        "job_try": 3,
    }


async def test_a_request_the_server_refused_is_parked_at_once(fake_redis: Redis) -> None:
    async def refused(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        raise HindsightRejected("HTTP 422: content cannot be empty", status=422)

    await durable(refused, RetryPolicy())(context(fake_redis), {"enqueued_at": time.time()})
    (parked,) = await DeadLetters(fake_redis, Keys("t")).records()
    assert parked["tries"] == 1 and "422" in parked["error"]


async def test_a_throttled_job_waits_as_long_as_the_server_asks(fake_redis: Redis) -> None:
    async def throttled(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        raise HindsightUnavailable("HTTP 429", status=429, retry_after=90)

    job = durable(throttled, RetryPolicy(base_seconds=0.1))
    with pytest.raises(Retry) as info:
        await job(context(fake_redis), {"enqueued_at": time.time()})
    assert info.value.defer_score == 90_000


async def test_a_try_that_runs_too_long_is_retried_not_lost(fake_redis: Redis) -> None:
    async def stuck(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        await asyncio.sleep(3600)  # e.g. a server that accepts and never answers

    job = durable(stuck, RetryPolicy(try_seconds=0.05))
    with pytest.raises(Retry):
        await job(context(fake_redis), {"enqueued_at": time.time()})
    (entry,) = [e async for e in EventLog(fake_redis, Keys("t")).entries()]
    assert entry.outcome == "error" and "took over 0.05s" in entry.detail["error"]


async def test_a_lock_that_stayed_busy_is_said_as_such_not_as_a_slow_try(
    fake_redis: Redis,
) -> None:
    """A lock's timeout is a ``TimeoutError`` too, but the try did not run out of time:
    what an operator reads must say which it was."""

    async def locked_out(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        raise LockTimeoutError("'t:mirror:lock' stayed busy for 10s")

    job = durable(locked_out, RetryPolicy(try_seconds=24))
    with pytest.raises(Retry):
        await job(context(fake_redis), {"enqueued_at": time.time()})
    (entry,) = [e async for e in EventLog(fake_redis, Keys("t")).entries()]
    assert entry.detail["error"] == "LockTimeoutError: 't:mirror:lock' stayed busy for 10s"


async def test_a_job_older_than_the_max_age_is_parked_not_retried(fake_redis: Redis) -> None:
    job = durable(failing, RetryPolicy(max_tries=50, max_age_seconds=60))
    await job(context(fake_redis), {"enqueued_at": time.time() - 61})
    assert len(await DeadLetters(fake_redis, Keys("t")).records()) == 1


async def test_a_successful_job_is_logged(fake_redis: Redis) -> None:
    async def fine(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        return None

    await durable(fine, RetryPolicy())(context(fake_redis), {"user_id": "u1"})
    entries = [e async for e in EventLog(fake_redis, Keys("t")).entries()]
    assert [(e.outcome, e.type) for e in entries] == [("ok", "job:fine")]


async def test_inline_jobs_retry_until_success_and_dedupe_by_id(fake_redis: Redis) -> None:
    runs: list[int] = []

    async def flaky(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        runs.append(ctx["job_try"])
        if ctx["job_try"] < 3:
            raise ConnectionError("not yet")

    ctx = context(fake_redis)
    jobs = InlineJobs({"flush_turns": durable(flaky, RetryPolicy(base_seconds=0.001))}, ctx)
    job = FlushJob(user_id="u1", agent_id="a1", thread_id="t1")
    await jobs.enqueue(job, job_id="same")
    await jobs.enqueue(job, job_id="same")
    await jobs.drain()
    await asyncio.sleep(0)
    assert runs == [1, 2, 3]
    assert await DeadLetters(fake_redis, Keys("t")).records() == []


async def test_what_hindsight_said_back_stays_out_of_the_logs_and_in_the_parked_record(
    fake_redis: Redis,
) -> None:
    """A 422 body echoes the request, and with it a turn's text: the event log (which a
    user's token reads) and the process log keep the request and the status only."""
    echoed = '{"detail": [{"msg": "too long", "input": "User: my PIN is 4921"}]}'

    async def refused(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        raise HindsightRejected("POST /v1/banks/b/memories: HTTP 422", status=422, said=echoed)

    async def unavailable(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
        raise HindsightUnavailable("POST /v1/banks/b/memories: HTTP 500", status=500, said=echoed)

    payload = {"enqueued_at": time.time(), "user_id": "u1", "agent_id": "a1"}
    with structlog.testing.capture_logs() as logs:
        with pytest.raises(Retry):
            await durable(unavailable, RetryPolicy(max_tries=3))(context(fake_redis), payload)
        await durable(refused, RetryPolicy(max_tries=3))(context(fake_redis), payload)
    (parked,) = await DeadLetters(fake_redis, Keys("t")).records()
    assert "4921" in parked["error"]  # the operator's record keeps what the server said
    retried, dead = [e async for e in EventLog(fake_redis, Keys("t")).entries()]
    assert (retried.outcome, dead.outcome) == ("error", "dead")
    assert retried.detail["error"] == "HindsightUnavailable: POST /v1/banks/b/memories: HTTP 500"
    assert dead.detail["error"] == "HindsightRejected: POST /v1/banks/b/memories: HTTP 422"
    assert logs and "4921" not in json.dumps(logs, default=str)


async def test_a_payload_that_does_not_fit_its_job_is_parked_at_once(fake_redis: Redis) -> None:
    """A dead-letter record re-driven by another version must not run half right."""
    sync_turn = job_functions(RetryPolicy(max_tries=5))["sync_turn"]
    payload = {"enqueued_at": time.time(), "user_id": "u1", "agent_id": "a1", "turn_idx": 1}
    await sync_turn(context(fake_redis), payload)
    (parked,) = await DeadLetters(fake_redis, Keys("t")).records()
    assert parked["tries"] == 1 and parked["payload"] == payload
    assert "invalid sync_turn job" in parked["error"] and "turn_idx" in parked["error"]


async def test_redrive_queues_each_record_as_its_typed_job_and_keeps_what_no_longer_fits(
    fake_redis: Redis,
) -> None:
    letters = DeadLetters(fake_redis, Keys("t"))
    flush = {"user_id": "u1", "agent_id": "a1", "thread_id": "t1", "enqueued_at": 1.0}
    await letters.park("flush_turns", flush, "ConnectionError: down", 3)
    await letters.park("flush_turns", {"user_id": "u1"}, "ConnectionError: down", 3)
    await letters.park("no_such_job", {"user_id": "u1", "agent_id": "a1"}, "x", 1)
    queued: list[tuple[Job, str]] = []

    class Recording:
        async def enqueue(self, job: Job, *, job_id: str) -> None:
            queued.append((job, job_id))

    redriven = await letters.redrive(Recording())
    assert [r["payload"] for r in redriven.sent] == [flush]
    assert redriven.left == [  # the operator is told what stays, where it now is, and why
        {
            "position": 0,
            "function": "flush_turns",
            "why": "its payload no longer fits the job (InvalidInputError)",
        },
        {
            "position": 1,
            "function": "no_such_job",
            "why": "no job of this release is called 'no_such_job'",
        },
    ]
    listed = await letters.records()
    assert [listed[r["position"]]["function"] for r in redriven.left] == [
        "flush_turns",
        "no_such_job",
    ]
    only_flushes = await letters.redrive(Recording(), function="no_such_job")
    assert only_flushes.sent == [] and [r["position"] for r in only_flushes.left] == [1]
    ((job, job_id),) = queued
    assert job == FlushJob(user_id="u1", agent_id="a1", thread_id="t1")
    assert job_id.startswith(Keys("t").dead_jobs)
    left = [r["function"] for r in await letters.records()]
    assert left == ["flush_turns", "no_such_job"]


async def test_two_redrives_at_once_queue_each_parked_job_once_and_pass_over_foreign_records(
    fake_redis: Redis,
) -> None:
    letters = DeadLetters(fake_redis, Keys("t"))
    for thread in ("t1", "t2", "t3"):
        flush = {"user_id": "u1", "agent_id": "a1", "thread_id": thread, "enqueued_at": 1.0}
        await letters.park("flush_turns", flush, "ConnectionError: down", 3)
    foreign = [b"not json", json.dumps({"function": "flush_turns", "payload": None}).encode()]
    await fake_redis.rpush(Keys("t").dead_jobs, *foreign)
    queued: list[str] = []

    class Slow:  # each enqueue takes a turn of the loop: the two re-drives interleave
        async def enqueue(self, job: Job, *, job_id: str) -> None:
            await asyncio.sleep(0)
            queued.append(job.model_dump()["thread_id"])

    first, second = await asyncio.gather(
        letters.redrive(Slow()), DeadLetters(fake_redis, Keys("t")).redrive(Slow())
    )
    assert sorted(queued) == ["t1", "t2", "t3"]
    assert len(first.sent) + len(second.sent) == 3
    assert (
        [r["why"] for r in first.left]
        == [r["why"] for r in second.left]
        == ["not a job memsvc parked", "its payload no longer fits the job (AttributeError)"]
    )
    assert await letters.records() == [
        {"unreadable": "not json"},
        {"function": "flush_turns", "payload": None},
    ]
    assert await fake_redis.keys("t:jobs:dead:redriving:*") == []
