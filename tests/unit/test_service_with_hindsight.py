"""The whole service with Hindsight configured: client -> worker -> jobs -> fake Hindsight."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
import structlog.testing

from memsvc.errors import InvalidInputError
from memsvc.hindsight.banks import mirror_document_id
from memsvc.hindsight.client import WARM_UP_BANK, HindsightClient, RetainItem
from memsvc.hindsight.fake import FakeHindsight
from memsvc.jobs.payloads import Job
from memsvc.settings import ServiceSettings
from tests.conftest import turns, until
from tests.unit.conftest import Service, with_hindsight

USER_BANK, WORK_BANK = "deerflow-user-u1", "deerflow-work-u1-a1"


@pytest.fixture
def hindsight_client(fake_hindsight_client: HindsightClient) -> HindsightClient:
    return fake_hindsight_client


@pytest.fixture
def retain_every_n_turns() -> int:
    return 1


@pytest.fixture
def service_settings(
    service_settings: ServiceSettings, tmp_path: Path, retain_every_n_turns: int
) -> ServiceSettings:
    return with_hindsight(service_settings, tmp_path, retain_every_n_turns=retain_every_n_turns)


async def drained(service: Service) -> None:
    await service.jobs.drain()


async def test_prefetch_injects_the_snapshot_and_this_users_recall_only(
    service: Service, hindsight_client: HindsightClient
) -> None:
    await hindsight_client.retain(USER_BANK, [RetainItem(content="Zhang San likes green tea")])
    await hindsight_client.retain(WORK_BANK, [RetainItem(content="tea service deploys via helm")])
    await hindsight_client.retain("deerflow-user-u2", [RetainItem(content="u2 likes tea too")])
    await service.client.call_tool(
        "u1", "a1", "t1", "memory", {"action": "add", "target": "user", "content": "Name: Zhang"}
    )
    ctx = await service.client.prefetch("u1", "a1", "t1", query="what tea")
    assert "USER PROFILE" in ctx.text and "Name: Zhang" in ctx.text
    assert "<memory-context>" in ctx.text
    assert "green tea" in ctx.text and "helm" in ctx.text
    assert "u2 likes" not in ctx.text
    assert ctx.skipped == {}
    # the frozen part for the system prompt, the recall for this turn's user message
    assert ctx.snapshot.startswith("═") and "<memory-context>" not in ctx.snapshot
    assert ctx.recall.startswith("<memory-context>") and "helm" in ctx.recall
    assert ctx.text == ctx.snapshot + "\n\n" + ctx.recall


async def test_prefetch_while_hindsight_is_down_still_serves_the_snapshot(
    service: Service, fake: FakeHindsight
) -> None:
    await service.client.call_tool(
        "u1", "a1", "t1", "memory", {"action": "add", "target": "user", "content": "Name: Zhang"}
    )
    fake.down = True
    ctx = await service.client.prefetch("u1", "a1", "t1", query="who am I")
    assert "Name: Zhang" in ctx.text and not ctx.degraded
    assert "hindsight" in ctx.skipped


async def test_builtin_writes_are_mirrored_in_the_background(
    service: Service, fake: FakeHindsight
) -> None:
    async def tool(args: dict[str, str]) -> None:
        result = await service.client.call_tool("u1", "a1", "t1", "memory", args)
        assert result["success"] is True, result
        await drained(service)

    await tool({"action": "add", "target": "user", "content": "Prefers tea"})
    assert list(fake.documents(USER_BANK)) == [mirror_document_id("user", "Prefers tea")]
    await tool(
        {"action": "replace", "target": "user", "old_text": "tea", "content": "Prefers coffee"}
    )
    assert [d.content for d in fake.documents(USER_BANK).values()] == ["Prefers coffee"]
    await tool({"action": "add", "target": "memory", "content": "Repo uses uv"})
    assert [d.content for d in fake.documents(WORK_BANK).values()] == ["Repo uses uv"]
    await tool({"action": "remove", "target": "user", "old_text": "coffee"})
    assert fake.documents(USER_BANK) == {}


async def test_every_turn_is_retained_into_the_work_bank_once(
    service: Service, fake: FakeHindsight
) -> None:
    for turn in range(1, 4):
        await service.client.sync_turn(
            "u1", "a1", "t1", user_content=f"question {turn}", assistant_content=f"answer {turn}"
        )
    await until(lambda: _documents(fake, WORK_BANK, 3))
    stored = fake.documents(WORK_BANK)
    docs = dict(zip(turns(stored), stored.values(), strict=True))
    assert sorted(docs) == ["t1:1", "t1:2", "t1:3"]
    assert docs["t1:2"].content == "User: question 2\nAssistant: answer 2"
    assert all(doc.retains == 1 for doc in docs.values())


async def _documents(fake: FakeHindsight, bank: str, count: int) -> bool:
    return len(fake.documents(bank)) >= count


async def test_a_short_outage_is_ridden_out_by_retries(
    service: Service, fake: FakeHindsight
) -> None:
    fake.fail("retain", status=503, times=2)
    await service.client.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a")

    async def outcomes() -> list[str]:
        return [e.outcome for e in await service.log() if e.type == "job:sync_turn"]

    async def done() -> bool:
        return "ok" in await outcomes()

    await until(done)
    assert await outcomes() == ["error", "error", "ok"]
    assert turns(fake.documents(WORK_BANK)) == ["t1:1"]
    assert await service.runtime.dead_letters.records() == []


async def test_a_long_outage_parks_the_job_and_a_redrive_delivers_it(
    service: Service, fake: FakeHindsight
) -> None:
    fake.down = True
    await service.client.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a")

    async def parked() -> bool:
        return len(await service.runtime.dead_letters.records()) == 1

    await until(parked)
    (record,) = await service.runtime.dead_letters.records()
    assert record["function"] == "sync_turn" and "ConnectError" in record["error"]
    assert record["payload"]["user_content"] == "q" and record["tries"] == 3
    fake.down = False
    redriven = await service.runtime.dead_letters.redrive(service.jobs)
    assert len(redriven.sent) == 1 and redriven.left == []
    await until(lambda: _documents(fake, WORK_BANK, 1))
    assert turns(fake.documents(WORK_BANK)) == ["t1:1"]
    assert await service.runtime.dead_letters.records() == []


async def test_a_request_hindsight_refuses_is_parked_without_retrying(
    service: Service, fake: FakeHindsight
) -> None:
    fake.fail("retain", status=422)
    await service.client.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a")

    async def parked() -> bool:
        return len(await service.runtime.dead_letters.records()) == 1

    await until(parked)
    (record,) = await service.runtime.dead_letters.records()
    assert record["tries"] == 1 and "HTTP 422" in record["error"]


async def test_tool_schemas_follow_each_users_memory_mode(service: Service) -> None:
    service.runtime.layout.user_config("u2").parent.mkdir(parents=True, exist_ok=True)
    service.runtime.layout.user_config("u2").write_text(
        json.dumps({"hindsight": {"memory_mode": "tools"}})
    )
    default = [s["name"] for s in await service.client.tool_schemas("u1", "a1")]
    tools = [s["name"] for s in await service.client.tool_schemas("u2", "a1")]
    assert default == ["memory"]
    assert tools == ["memory", "hindsight_recall", "hindsight_reflect", "hindsight_retain"]


async def test_the_hindsight_tools_work_through_the_client(
    service: Service, fake: FakeHindsight
) -> None:
    service.runtime.layout.user_config("u1").parent.mkdir(parents=True, exist_ok=True)
    service.runtime.layout.user_config("u1").write_text(
        json.dumps({"hindsight": {"memory_mode": "hybrid"}})
    )
    saved = await service.client.call_tool(
        "u1", "a1", "t1", "hindsight_retain", {"content": "The staging DB is pg-17"}
    )
    assert saved == {"success": True, "message": "Saved to long-term memory."}
    await drained(service)
    found = await service.client.call_tool(
        "u1", "a1", "t1", "hindsight_recall", {"query": "staging DB"}
    )
    assert [r["text"] for r in found["results"]] == ["The staging DB is pg-17"]
    refused = await service.client.call_tool(
        "u1", "a1", "t1", "hindsight_recall", {"query": "x", "scope": "elsewhere"}
    )
    assert refused["success"] is False
    logged = [e.detail["result"] for e in await service.log() if e.type == "tool_call"]
    assert logged == [
        {"success": True},
        {"success": True},  # a recall's findings are not kept: they are memory, not outcome
        {"success": False, "error": "Invalid scope 'elsewhere'."},
    ]


async def test_a_fact_saved_again_after_its_first_save_was_parked_is_saved(
    service: Service, fake: FakeHindsight
) -> None:
    """Each call to save a fact is a job of its own: the second save of a fact whose first
    was refused is sent, not taken for the first; the bank holds it once either way."""
    service.runtime.layout.user_config("u1").parent.mkdir(parents=True, exist_ok=True)
    service.runtime.layout.user_config("u1").write_text(
        json.dumps({"hindsight": {"memory_mode": "tools"}})
    )
    fact = {"content": "Drinks coffee daily"}
    fake.fail("retain", status=400)
    assert (await service.client.call_tool("u1", "a1", "t1", "hindsight_retain", fact))["success"]

    async def parked() -> bool:
        return len(await service.runtime.dead_letters.records()) == 1

    await until(parked)
    for _ in range(2):
        await service.client.call_tool("u1", "a1", "t1", "hindsight_retain", fact)
    await drained(service)
    contents = [d.content for d in fake.documents("deerflow-work-u1-a1").values()]
    assert contents == ["Drinks coffee daily"]


@pytest.mark.parametrize("retain_every_n_turns", [5])
async def test_a_new_thread_retains_what_the_old_one_still_buffered(
    service: Service, fake: FakeHindsight
) -> None:
    for turn in (1, 2):
        await service.client.sync_turn(
            "u1", "a1", "t1", user_content=f"q{turn}", assistant_content="a"
        )
    await service.client.prefetch("u1", "a1", "t1")  # ordered after the two turns
    await drained(service)
    assert fake.documents(WORK_BANK) == {}  # buffered: 2 of 5
    await service.client.prefetch("u1", "a1", "t2")  # the agent moved on: a session switch
    await until(lambda: _documents(fake, WORK_BANK, 2))
    assert sorted(turns(fake.documents(WORK_BANK))) == ["t1:1", "t1:2"]


async def test_the_tool_result_does_not_wait_for_the_mirror_to_be_queued(
    service: Service, fake: FakeHindsight, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = asyncio.Event()
    enqueue = service.jobs.enqueue

    async def stalled(job: Job, *, job_id: str) -> None:
        await release.wait()  # the job queue is slow right now
        await enqueue(job, job_id=job_id)

    monkeypatch.setattr(service.jobs, "enqueue", stalled)
    args = {"action": "add", "target": "user", "content": "Prefers tea"}
    result = await service.client.call_tool("u1", "a1", "t1", "memory", args, deadline=2)
    assert result["success"] is True  # answered while the mirror was still being queued
    release.set()

    async def mirrored() -> bool:
        await service.jobs.drain()
        return len(fake.documents(USER_BANK)) == 1

    await until(mirrored)


async def test_a_turn_hindsight_accepts_but_fails_to_process_is_retried(
    service: Service, fake: FakeHindsight
) -> None:
    fake.failed_processing = 2  # e.g. its embedder is down for a moment
    await service.client.sync_turn("u1", "a1", "t1", user_content="q", assistant_content="a")
    await until(lambda: _documents(fake, WORK_BANK, 1))
    assert turns(fake.documents(WORK_BANK)) == ["t1:1"]
    assert await service.runtime.dead_letters.records() == []


async def test_a_burst_of_turns_in_one_thread_is_flushed_by_one_job_at_a_time(
    service: Service, fake: FakeHindsight
) -> None:
    fake.latency["retain"] = 0.05  # rounds overlap with the turns still coming in
    await asyncio.gather(
        *(
            service.client.sync_turn("u1", "a1", "t1", user_content=f"q{n}", assistant_content="a")
            for n in range(60)
        )
    )
    await until(lambda: _documents(fake, WORK_BANK, 60))
    await service.jobs.drain()
    assert fake.peak["retain"] == 1
    assert all(doc.retains == 1 for doc in fake.documents(WORK_BANK).values())
    # not one per turn: what piled up while a flush ran goes in the next one (how many
    # rounds that takes depends on how fast the turns come, so the bound is loose)
    assert fake.count("retain") <= 60 // 5
    assert await service.runtime.dead_letters.records() == []


async def test_a_worker_connects_to_hindsight_at_start_not_on_the_first_prefetch(
    service: Service, fake: FakeHindsight
) -> None:
    await service.runtime.warm_up()
    assert fake.count("recall", WARM_UP_BANK) == 2  # two connections: one per bank
    assert WARM_UP_BANK not in fake.banks  # nothing created
    fake.down = True
    await service.runtime.warm_up()  # Hindsight down at start: logged, not fatal


@pytest.fixture
def log_lines() -> Iterator[list[dict[str, Any]]]:
    """Log lines as a worker writes them: with the context bound to the running task."""
    capture = structlog.testing.LogCapture()
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, capture])
    yield capture.entries
    structlog.reset_defaults()


async def test_log_lines_of_an_event_and_of_a_job_name_whose_they_are(
    service: Service, fake: FakeHindsight, log_lines: list[dict[str, Any]]
) -> None:
    fake.down = True
    ctx = await service.client.prefetch("u1", "a1", "t1", query="who am I")
    event_id = await service.client.sync_turn(
        "u1", "a1", "t1", user_content="q", assistant_content="a"
    )

    async def retried() -> bool:
        return any(line["event"] == "job_retry" for line in log_lines)

    await until(retried)
    failed = [line for line in log_lines if line["event"] == "provider_hook_failed"]
    assert failed and ctx.skipped
    assert {(line["user_id"], line["agent_id"], line["thread_id"]) for line in failed} == {
        ("u1", "a1", "t1")
    }
    assert all(line["event_type"] == "prefetch" for line in failed)
    retry = next(line for line in log_lines if line["event"] == "job_retry")
    assert (retry["user_id"], retry["agent_id"], retry["event_id"]) == ("u1", "a1", event_id)
    assert retry["job"] == "sync_turn" and retry["job_try"] == 1


async def test_a_turn_sent_again_under_its_event_id_is_retained_once(
    service: Service, fake: FakeHindsight
) -> None:
    """A caller that could not tell whether its turn was taken sends it again under the
    same id: one turn, one document. Another user's turn, or another thread's, under that
    id is its own."""
    turn = {"user_content": "question", "assistant_content": "answer"}
    first = await service.client.sync_turn("u1", "a1", "t1", **turn)
    assert await service.client.sync_turn("u1", "a1", "t1", event_id=first, **turn) == first
    await service.client.sync_turn("u1", "a1", "t1", user_content="next", assistant_content="a")
    await service.client.sync_turn("u1", "a1", "t2", event_id=first, **turn)
    await service.client.sync_turn("u2", "a1", "t1", event_id=first, **turn)
    await until(lambda: _documents(fake, WORK_BANK, 3))
    await until(lambda: _documents(fake, "deerflow-work-u2-a1", 1))
    await drained(service)
    stored = fake.documents(WORK_BANK)
    assert sorted(turns(stored)) == ["t1:1", "t1:2", "t2:1"]
    assert [doc.retains for doc in stored.values()] == [1, 1, 1]
    assert turns(fake.documents("deerflow-work-u2-a1")) == ["t1:1"]


async def test_an_event_id_that_is_not_one_is_refused_before_anything_is_sent(
    service: Service,
) -> None:
    for bad in ("short", "has space in it", "x" * 65, "ünïcödé-id", 12345678):
        with pytest.raises(InvalidInputError, match="event_id"):
            await service.client.sync_turn(
                "u1",
                "a1",
                "t1",
                user_content="q",
                assistant_content="a",
                event_id=bad,  # type: ignore[arg-type]
            )
    assert [e for e in await service.log() if e.type == "sync_turn"] == []
