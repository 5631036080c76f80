"""MemoryMiddleware in a real ``create_agent`` graph, with a scripted chat model, against
the in-process worker on fakeredis and the fake Hindsight."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import structlog.testing
from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from memsvc.errors import AsyncOnlyError, MemoryUnavailableError, WritePendingError
from memsvc.hindsight.client import HindsightClient, RetainItem
from memsvc.hindsight.fake import FakeHindsight
from memsvc.ids import InvalidIdError, id_for
from memsvc.integrations.langchain import MemoryContext, MemoryMiddleware
from memsvc.service.eventlog import LogEntry
from memsvc.settings import ServiceSettings
from memsvc.store.memfile import parse
from tests.chat_model import ScriptedModel, remember_or_answer, tool_call
from tests.conftest import turns, until
from tests.unit.conftest import Service, with_hindsight

PROMPT = "You are a helpful assistant."
ALICE = MemoryContext(user_id="alice", agent_id="coder")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_agent.py"


@pytest.fixture
def hindsight_client(fake_hindsight_client: HindsightClient) -> HindsightClient:
    return fake_hindsight_client


@pytest.fixture
def service_settings(service_settings: ServiceSettings, tmp_path: Path) -> ServiceSettings:
    # generous: a prefetch that misses its deadline on a busy machine would leave the
    # snapshot out of a turn; log_turn_text lets the tests read what each turn recorded
    return with_hindsight(service_settings, tmp_path).model_copy(
        update={"prefetch_deadline_seconds": 30.0, "log_turn_text": True}
    )


@pytest.fixture
async def recalled(fake_hindsight_client: HindsightClient) -> str:
    """A fact in alice's user bank, recalled for any query about oolong."""
    fact = "Alice drinks oolong every morning"
    await fake_hindsight_client.retain("deerflow-user-alice", [RetainItem(content=fact)])
    return fact


def build(
    service: Service,
    model: ScriptedModel | None = None,
    *,
    middleware: MemoryMiddleware | None = None,
    checkpointer: InMemorySaver | None = None,
) -> tuple[CompiledStateGraph[Any, Any, Any, Any], ScriptedModel]:
    model = model or ScriptedModel()
    agent = create_agent(
        model,
        tools=[],
        system_prompt=PROMPT,
        middleware=[middleware or MemoryMiddleware(service.client)],
        context_schema=MemoryContext,
        checkpointer=checkpointer if checkpointer is not None else InMemorySaver(),
    )
    return agent, model


async def turn(
    agent: CompiledStateGraph[Any, Any, Any, Any],
    text: str,
    *,
    thread: str = "t1",
    context: Any = ALICE,
    message_id: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = await agent.ainvoke(
        {"messages": [HumanMessage(text, id=message_id)]},
        config={"configurable": {"thread_id": thread}},
        context=context,
    )
    return out


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


async def logged(service: Service, type_: str, thread: str | None = None) -> list[LogEntry]:
    return [
        e
        for e in await service.log()
        if e.type == type_ and (thread is None or e.thread_id == thread)
    ]


async def recorded_turns(
    service: Service, count: int, *, user: str = "alice", thread: str = "t1"
) -> list[tuple[str, str]]:
    """The turns recorded for ``thread`` once ``count`` have been, and any extra one: a
    prefetch of the thread is answered only after its earlier events ran."""
    await until(lambda: _has(service, "sync_turn", thread, count))
    await service.client.prefetch(user, "coder", thread)
    return [
        (e.event["payload"]["user_content"], e.event["payload"]["assistant_content"])
        for e in await logged(service, "sync_turn", thread)
        if e.event is not None
    ]


async def _has(service: Service, type_: str, thread: str, count: int) -> bool:
    return len(await logged(service, type_, thread)) >= count


async def user_file(service: Service, user: str) -> list[str]:
    await service.settled()  # renamed: a write is answered once committed
    return parse((service.settings.data_dir / "users" / user / "USER.md").read_bytes()).entries


async def remember(service: Service, fact: str, *, user: str = "alice") -> None:
    args = {"action": "add", "target": "user", "content": fact}
    result = await service.client.call_tool(user, "coder", "setup", "memory", args)
    assert result["success"] is True, result


async def test_the_model_saves_a_fact_through_the_memory_tool(service: Service) -> None:
    agent, model = build(service)
    out = await turn(agent, "remember: Prefers green tea")
    assert await user_file(service, "alice") == ["Prefers green tea"]
    tool_message = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert tool_message.name == "memory" and tool_message.status == "success"
    assert json.loads(tool_message.text)["success"] is True
    assert out["messages"][-1].text == "Noted (memory)."
    assert [r.tools for r in model.requests] == [["memory"], ["memory"]]


async def test_the_system_message_is_the_same_bytes_for_every_call_of_a_thread(
    service: Service,
) -> None:
    await remember(service, "Name: Alice")
    agent, model = build(service)
    await turn(agent, "remember: Prefers green tea")  # two model calls: the tool, the answer
    await turn(agent, "what do I drink?")
    await turn(agent, "and what is my name?")
    systems = [r.system for r in model.requests]
    assert len(systems) == 4 and len(set(systems)) == 1
    assert systems[0].startswith(PROMPT + "\n\n") and "Name: Alice" in systems[0]
    assert "green tea" not in systems[0]  # written mid-session: on disk, not in this prompt
    assert await user_file(service, "alice") == ["Name: Alice", "Prefers green tea"]
    await turn(agent, "a new session", thread="t2")
    assert "Prefers green tea" in model.requests[-1].system


async def test_the_recall_goes_with_the_request_and_never_into_the_state(
    service: Service, recalled: str
) -> None:
    agent, model = build(service)
    out = await turn(agent, "remember: drinks oolong")
    chunks = [
        chunk
        async for chunk in agent.astream(
            {"messages": [HumanMessage("which oolong do I drink")]},
            config=cfg("t1"),
            context=ALICE,
            stream_mode=["values", "updates", "messages", "custom"],
        )
    ]
    assert len(model.requests) == 3
    for request in model.requests:  # the tool loop's second call gets the same recall
        assert "<memory-context>" in request.human and recalled in request.human
        assert "<memory-context>" not in request.system
    state = await agent.aget_state(cfg("t1"))
    history = [snapshot async for snapshot in agent.aget_state_history(cfg("t1"))]
    for seen in (out, chunks, state, history):
        assert "memory-context" not in repr(seen)
    assert [m.text for m in state.values["messages"] if isinstance(m, HumanMessage)] == [
        "remember: drinks oolong",
        "which oolong do I drink",
    ]
    assert len(await logged(service, "prefetch", "t1")) == 2  # once a turn, not once a call


async def test_each_turn_is_recorded_once_without_recall_or_tool_calls(
    service: Service, recalled: str
) -> None:
    agent, model = build(service)
    await turn(agent, "remember: drinks oolong")
    await turn(agent, "which oolong do I drink")
    assert "<memory-context>" in model.requests[-1].human
    assert await recorded_turns(service, 2) == [
        ("remember: drinks oolong", "Noted (memory)."),
        ("which oolong do I drink", "You said: which oolong do I drink"),
    ]


async def test_a_structured_answer_and_a_direct_tool_result_are_recorded_as_the_turn(
    service: Service,
) -> None:
    """``response_format`` and ``return_direct`` end a run with no AI text: such turns were
    never recorded (only an info-level line said so)."""

    class Answer(BaseModel):
        text: str

    @tool(return_direct=True)
    def lookup(q: str) -> str:
        """Look a thing up."""
        return f"direct result for {q}"

    def calls(name: str, args: dict[str, Any]) -> Callable[[list[BaseMessage]], AIMessage]:
        return lambda _: AIMessage("", tool_calls=[{"name": name, "args": args, "id": "c1"}])

    structured = create_agent(
        ScriptedModel(rule=calls("Answer", {"text": "structured hello"})),
        tools=[],
        middleware=[MemoryMiddleware(service.client)],
        context_schema=MemoryContext,
        response_format=ToolStrategy(Answer),
    )
    out = await structured.ainvoke(
        {"messages": [HumanMessage("answer in a form")]}, config=cfg("t1"), context=ALICE
    )
    assert out["structured_response"] == Answer(text="structured hello")
    direct = create_agent(
        ScriptedModel(rule=calls("lookup", {"q": "tea"})),
        tools=[lookup],
        middleware=[MemoryMiddleware(service.client)],
        context_schema=MemoryContext,
    )
    await direct.ainvoke(
        {"messages": [HumanMessage("look up tea")]}, config=cfg("t2"), context=ALICE
    )
    assert await recorded_turns(service, 1) == [("answer in a form", '{"text":"structured hello"}')]
    assert await recorded_turns(service, 1, thread="t2") == [
        ("look up tea", "direct result for tea")
    ]


async def test_a_turn_too_big_for_one_event_is_recorded_cut_and_the_answer_comes(
    service: Service,
) -> None:
    """200,000 emoji are within the character cap but 800 KB a side: the turn is cut to fit
    an event rather than refused (which would end the run after the model answered)."""
    agent, _ = build(service)
    text = "😀" * 200_000
    out = await turn(agent, text)
    assert out["messages"][-1].text.startswith("You said: 😀")
    [(user_side, assistant_side)] = await recorded_turns(service, 1)
    assert text.startswith(user_side) and len(user_side) > 100_000
    assert out["messages"][-1].text.startswith(assistant_side) and len(assistant_side) > 100_000


async def test_an_answer_that_echoes_the_recall_is_recorded_without_it(
    service: Service, recalled: str
) -> None:

    def echo(messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(f"Sure. {messages[-1].text.split(chr(10), 2)[-1]}")  # the recall

    agent, _ = build(service, ScriptedModel(rule=echo))
    out = await turn(agent, "which oolong do I drink")
    assert "<memory-context>" in out["messages"][-1].text  # the model did echo it
    assert await recorded_turns(service, 1) == [("which oolong do I drink", "Sure. ")]


async def test_a_retried_run_records_no_second_turn(service: Service) -> None:
    agent, model = build(service)
    await turn(agent, "hello", message_id="m-1")
    await turn(agent, "hello", message_id="m-1")  # the client sent the same message again
    await turn(agent, "and now?", message_id="m-2")
    assert len(model.sent_to("hello")) == 2  # the retry did run
    assert await recorded_turns(service, 2) == [
        ("hello", "You said: hello"),
        ("and now?", "You said: and now?"),
    ]


async def test_a_message_edited_under_its_id_is_a_turn_of_its_own(
    service: Service, fake: FakeHindsight
) -> None:
    """LangGraph edits a message by forking the checkpoint before it and replacing the
    message under its id: the edited turn is recorded and retained, not taken for a copy."""
    agent, _ = build(service)
    await turn(agent, "hello", message_id="m-1")
    await recorded_turns(service, 1)
    history = [state async for state in agent.aget_state_history(cfg("t1"))]
    asked = next(s for s in reversed(history) if len(s.values.get("messages", ())) == 1)
    forked = await agent.aupdate_state(asked.config, {"messages": [HumanMessage("bye", id="m-1")]})
    await agent.ainvoke(None, config=forked, context=ALICE)
    assert await recorded_turns(service, 2) == [
        ("hello", "You said: hello"),
        ("bye", "You said: bye"),
    ]
    work = "deerflow-work-alice-coder"
    await until(lambda: _documents(fake, work, 2))
    assert sorted(turns(fake.documents(work))) == ["t1:1", "t1:2"]


async def test_an_answer_regenerated_for_a_message_is_a_turn_of_its_own(
    service: Service, fake: FakeHindsight
) -> None:
    """Regenerating forks the checkpoint before the answer and runs the model again on the
    same message: the new answer is what the user kept, so it is recorded and retained,
    not taken for a copy of the answer they turned down."""
    answers = iter(range(1, 10))
    agent, _ = build(service, ScriptedModel(rule=lambda _: AIMessage(f"Answer #{next(answers)}")))
    await turn(agent, "hello", message_id="m-1")
    await recorded_turns(service, 1)
    history = [state async for state in agent.aget_state_history(cfg("t1"))]
    asked = next(s for s in reversed(history) if len(s.values.get("messages", ())) == 1)
    await agent.ainvoke(None, config=asked.config, context=ALICE)
    assert await recorded_turns(service, 2) == [("hello", "Answer #1"), ("hello", "Answer #2")]
    work = "deerflow-work-alice-coder"
    await until(lambda: _documents(fake, work, 2))
    assert sorted(turns(fake.documents(work))) == ["t1:1", "t1:2"]


async def test_an_answer_regenerated_from_the_finished_state_is_recorded_and_a_rerun_is_not(
    service: Service,
) -> None:
    """A UI may regenerate by removing the answer from the thread's latest state and running
    again: that state already holds the marker of the turn it recorded, yet the new answer
    is an exchange of its own. Running a finished thread again, answer unchanged, records
    nothing new."""
    answers = iter(range(1, 10))
    agent, _ = build(service, ScriptedModel(rule=lambda _: AIMessage(f"Answer #{next(answers)}")))
    first = await turn(agent, "hello", message_id="m-1")
    await recorded_turns(service, 1)
    await agent.aupdate_state(
        cfg("t1"),
        {"messages": [RemoveMessage(id=first["messages"][-1].id)]},
        as_node="MemoryMiddleware.before_agent",
    )
    again = await agent.ainvoke(None, config=cfg("t1"), context=ALICE)
    assert again["messages"][-1].text == "Answer #2"
    assert await recorded_turns(service, 2) == [("hello", "Answer #1"), ("hello", "Answer #2")]
    with structlog.testing.capture_logs() as logs:  # after_agent once more, same answer
        await agent.aupdate_state(cfg("t1"), {}, as_node="model")
        await agent.ainvoke(None, config=cfg("t1"), context=ALICE)
    assert [e for e in logs if e["event"] == "memory_turn_already_recorded"]
    assert await recorded_turns(service, 2) == [("hello", "Answer #1"), ("hello", "Answer #2")]


async def test_two_users_at_once_on_one_middleware_see_only_their_own_memory(
    service: Service,
) -> None:
    agent, model = build(service)
    bob = MemoryContext(user_id="bob", agent_id="coder")
    await asyncio.gather(
        *(
            turn(agent, f"remember: {who} likes {drink}", thread=f"{ctx.user_id}-{n}", context=ctx)
            for n in range(3)
            for who, drink, ctx in (("Alice", "tea", ALICE), ("Bob", "coffee", bob))
        )
    )
    assert await user_file(service, "alice") == ["Alice likes tea"]
    assert await user_file(service, "bob") == ["Bob likes coffee"]
    await asyncio.gather(
        turn(agent, "what do I like, Alice?", thread="alice-new", context=ALICE),
        turn(agent, "what do I like, Bob?", thread="bob-new", context=bob),
    )
    (alice,) = model.sent_to("what do I like, Alice?")
    (bob_sees,) = model.sent_to("what do I like, Bob?")
    assert "Alice likes tea" in alice.system and "Bob" not in alice.system
    assert "Bob likes coffee" in bob_sees.system and "Alice" not in bob_sees.system
    writes = await logged(service, "memory_write")
    assert sorted((w.user_id, w.thread_id) for w in writes) == sorted(
        (user, f"{user}-{n}") for user in ("alice", "bob") for n in range(3)
    )


async def test_with_hindsight_down_the_agent_still_answers(
    service: Service, fake: FakeHindsight
) -> None:
    fake.down = True
    agent, model = build(service)
    with structlog.testing.capture_logs() as logs:
        out = await turn(agent, "remember: Prefers green tea")
    assert out["messages"][-1].text == "Noted (memory)."
    assert await user_file(service, "alice") == ["Prefers green tea"]
    assert all("<memory-context>" not in r.human for r in model.requests)
    skips = [e for e in logs if e["event"] == "memory_context_skipped"]
    assert [set(e["skipped"]) for e in skips] == [{"hindsight"}]
    assert await recorded_turns(service, 1) == [("remember: Prefers green tea", "Noted (memory).")]


async def test_memory_that_does_not_answer_in_time_leaves_the_agent_running(
    service: Service,
) -> None:
    await service.stop_consumers()  # nobody serves the events any more
    agent, model = build(service, middleware=MemoryMiddleware(service.client, deadline=0.3))
    with structlog.testing.capture_logs() as logs:
        out = await turn(agent, "hello")
    assert out["messages"][-1].text == "You said: hello"
    assert model.requests[0].system == PROMPT and model.requests[0].tools == []
    by_event = {e["event"]: e for e in logs}
    assert by_event["memory_context_skipped"]["log_level"] == "warning"
    assert "service" in by_event["memory_context_skipped"]["skipped"]
    assert by_event["memory_tools_unavailable"]["user_id"] == "alice"


async def test_a_turn_redis_does_not_take_is_logged_and_the_answer_still_comes(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refused(*args: Any, **kwargs: Any) -> str:
        raise MemoryUnavailableError("Redis did not answer within 2s")

    monkeypatch.setattr(service.client, "sync_turn", refused)
    agent, _ = build(service)
    with structlog.testing.capture_logs() as logs:
        out = await turn(agent, "hello", message_id="m-1")
    assert out["messages"][-1].text == "You said: hello"
    (failed,) = [e for e in logs if e["event"] == "memory_turn_not_recorded"]
    assert failed["error"] == "Redis did not answer within 2s"
    monkeypatch.undo()
    await turn(agent, "hello", message_id="m-1")  # not marked as recorded: a retry records it
    assert await recorded_turns(service, 1) == [("hello", "You said: hello")]


async def test_a_turn_whose_answer_was_lost_is_sent_again_by_the_retry_and_recorded_once(
    service: Service, fake: FakeHindsight, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service took the turn but its answer never came back (a gateway's reply lost):
    the retried run sends it again under the same id, and it is one turn, one document."""
    sent: list[str | None] = []
    take = service.client.sync_turn

    async def answer_lost(*args: Any, **kwargs: Any) -> str:
        sent.append(kwargs.get("event_id"))
        taken = await take(*args, **kwargs)
        raise MemoryUnavailableError("the gateway did not answer", event_id=taken)

    monkeypatch.setattr(service.client, "sync_turn", answer_lost)
    agent, _ = build(service)
    await turn(agent, "hello", message_id="m-1")
    await turn(agent, "hello", message_id="m-1")  # not marked as recorded: the retry sends it
    await turn(agent, "hello", message_id="m-1", thread="t2")  # another thread's own turn
    monkeypatch.undo()
    await turn(agent, "and now?", message_id="m-2")
    work = "deerflow-work-alice-coder"
    await until(lambda: _documents(fake, work, 3))
    await service.client.prefetch("alice", "coder", "t1")  # after the thread's turns ran
    stored = fake.documents(work)
    assert sorted(turns(stored)) == ["t1:1", "t1:2", "t2:1"]
    assert [doc.retains for doc in stored.values()] == [1, 1, 1]
    assert len(sent) == 3 and sent[0] is not None
    assert sent[0] == sent[1] != sent[2]


async def _documents(fake: FakeHindsight, bank: str, count: int) -> bool:
    return len(fake.documents(bank)) >= count


async def test_a_turn_left_pending_counts_as_recorded_and_a_retried_run_sends_none(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queued in the client's outbox, the turn will be recorded once: the same message run
    again must not record it a second time."""
    calls: list[str] = []

    async def pending(*args: Any, **kwargs: Any) -> str:
        calls.append(kwargs["user_content"])
        raise WritePendingError("Redis did not answer within 2s; queued", event_id="e" * 32)

    monkeypatch.setattr(service.client, "sync_turn", pending)
    agent, _ = build(service)
    with structlog.testing.capture_logs() as logs:
        out = await turn(agent, "hello", message_id="m-1")
        await turn(agent, "hello", message_id="m-1")  # the same message again
    assert out["messages"][-1].text == "You said: hello"
    assert calls == ["hello"]
    (queued,) = [e for e in logs if e["event"] == "memory_turn_pending"]
    assert queued["event_id"] == "e" * 32
    assert not [e for e in logs if e["event"] == "memory_turn_not_recorded"]


async def test_a_run_that_names_no_user_is_refused(service: Service) -> None:
    agent, model = build(service)
    for context in (None, MemoryContext(user_id="")):
        with pytest.raises(InvalidIdError, match="names no user"):
            await turn(agent, "hello", context=context)
    assert model.requests == [] and await logged(service, "prefetch") == []
    with pytest.raises(InvalidIdError, match="thread_id"):
        await turn(agent, "hello", context=MemoryContext(user_id="alice", thread_id="../x"))
    guest, _ = build(service, middleware=MemoryMiddleware(service.client, default_user_id="guest"))
    await turn(guest, "remember: A guest", context=None)
    assert await user_file(service, "guest") == ["A guest"]


async def test_ids_come_from_the_run_a_dict_context_and_the_configs_thread(
    service: Service,
) -> None:
    agent = create_agent(
        ScriptedModel(), tools=[], middleware=[MemoryMiddleware(service.client)]
    )  # no checkpointer: the thread is the config's
    await agent.ainvoke(
        {"messages": [HumanMessage("hello")]}, config=cfg("from-config"), context={"user_id": "u1"}
    )
    await agent.ainvoke(
        {"messages": [HumanMessage("hello")]},
        config=cfg("from-config"),
        context={"user_id": "u1", "agent_id": "a1", "thread_id": "from-context"},
    )
    await agent.ainvoke({"messages": [HumanMessage("hello")]}, context={"user_id": "u1"})
    prefetches = await logged(service, "prefetch")
    assert [(e.user_id, e.agent_id, e.thread_id) for e in prefetches] == [
        ("u1", "default", "from-config"),
        ("u1", "a1", "from-context"),
        ("u1", "default", "default"),
    ]


@pytest.mark.parametrize("thread", ["user-1:conv-2", "slack/C1/1700.1", "with space", "x" * 200])
async def test_a_graph_thread_of_any_shape_gets_memory_under_an_id_standing_for_it(
    service: Service, thread: str
) -> None:
    """The application names its LangGraph threads: memory never breaks a run for that."""
    await remember(service, "Prefers short answers")
    agent, model = build(service)
    first = await turn(agent, "hello", thread=thread)
    second = await turn(agent, "again", thread=thread)
    assert [r.human for r in model.requests] == ["hello", "again"]
    assert all("Prefers short answers" in r.system for r in model.requests)
    standing = id_for("thread_id", thread)
    assert standing != thread and standing == id_for("thread_id", thread)
    assert await recorded_turns(service, 2, thread=standing) == [
        ("hello", first["messages"][-1].text),
        ("again", second["messages"][-1].text),
    ]
    await turn(agent, "other", thread=thread + "!")  # another thread: another session
    other = id_for("thread_id", thread + "!")
    assert other != standing
    assert [user for user, _ in await recorded_turns(service, 1, thread=other)] == ["other"]
    assert len(await logged(service, "sync_turn", standing)) == 2


async def test_a_thread_forked_from_another_ones_checkpoint_is_its_branch(
    service: Service,
) -> None:
    await remember(service, "Name: Alice")
    agent, model = build(service)
    await turn(agent, "remember: Prefers green tea")
    parent_system = model.requests[-1].system
    await fork(agent, "t1", "fork")
    await turn(agent, "hello from the fork", thread="fork")
    await turn(agent, "hello from a new thread", thread="fresh")
    (switch,) = await logged(service, "session_switch")
    assert switch.thread_id == "fork"
    assert switch.detail["parent_thread_id"] == "t1" and switch.detail["reset"] is False
    (forked,) = model.sent_to("hello from the fork")
    (fresh,) = model.sent_to("hello from a new thread")
    assert forked.system == parent_system  # the branch keeps its parent's snapshot ...
    assert "Prefers green tea" in fresh.system  # ... a new thread takes the files as they are
    await turn(agent, "again from the fork", thread="fork")
    assert len(await logged(service, "session_switch")) == 1  # announced once


async def test_a_branch_turn_with_no_worker_answering_waits_one_deadline_not_two(
    service: Service,
) -> None:
    """The branch's announcement and the prefetch share the turn's deadline: a turn never
    waits for memory longer than it was told to."""
    agent, _ = build(service, middleware=MemoryMiddleware(service.client, deadline=3.0))
    await turn(agent, "hello")
    await fork(agent, "t1", "fork")
    await service.stop_consumers()
    started = time.monotonic()
    with structlog.testing.capture_logs() as logs:
        out = await turn(agent, "hello from the fork", thread="fork")
    waited = time.monotonic() - started
    assert out["messages"][-1].text == "You said: hello from the fork"
    assert [e["event"] for e in logs if e["event"].startswith("session_switch")] == [
        "session_switch_unconfirmed"
    ]
    assert waited < 5.5  # two deadlines one after the other take 6 s


async def fork(agent: CompiledStateGraph[Any, Any, Any, Any], thread: str, into: str) -> None:
    """A fork: ``thread``'s latest checkpoint copied to the new thread ``into``."""
    saver = agent.checkpointer
    assert isinstance(saver, InMemorySaver)
    parent = await saver.aget_tuple(cfg(thread))
    assert parent is not None
    checkpoint = parent.checkpoint
    await saver.aput(
        {"configurable": {"thread_id": into, "checkpoint_ns": ""}},
        checkpoint,
        parent.metadata,
        checkpoint["channel_versions"],
    )


async def test_a_run_resumed_in_another_process_keeps_its_memory(service: Service) -> None:
    await remember(service, "Name: Alice")
    saver = InMemorySaver()

    def broken(messages: Sequence[BaseMessage]) -> AIMessage:
        if messages[-1].text.startswith("second"):
            raise RuntimeError("the model's server went away")
        return remember_or_answer(messages)

    agent, model = build(service, ScriptedModel(rule=broken), checkpointer=saver)
    await turn(agent, "first")
    with pytest.raises(RuntimeError, match="went away"):
        await turn(agent, "second")
    resumed, again = build(service, checkpointer=saver)  # a new middleware: nothing cached
    out = await resumed.ainvoke(None, config=cfg("t1"), context=ALICE)
    assert out["messages"][-1].text == "You said: second"
    assert again.requests[0].system == model.requests[0].system
    assert await recorded_turns(service, 2) == [
        ("first", "You said: first"),
        ("second", "You said: second"),
    ]


async def test_the_hindsight_tools_are_offered_when_the_users_memory_mode_asks(
    service: Service,
) -> None:
    config = service.runtime.layout.user_config("alice")
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"hindsight": {"memory_mode": "tools"}}))

    def retain(messages: Sequence[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage("Kept.")
        return tool_call("hindsight_retain", content="The staging DB is pg-17")

    agent, model = build(service, ScriptedModel(rule=retain))
    alices = await turn(agent, "keep this")
    bobs = await turn(agent, "keep this", thread="b1", context={"user_id": "bob"})
    alice, _, bob, _ = model.requests
    assert alice.tools == ["memory", "hindsight_recall", "hindsight_reflect", "hindsight_retain"]
    assert bob.tools == ["memory"]
    (saved,) = [m for m in alices["messages"] if isinstance(m, ToolMessage)]
    assert json.loads(saved.text) == {"success": True, "message": "Saved to long-term memory."}
    (refused,) = [m for m in bobs["messages"] if isinstance(m, ToolMessage)]
    assert refused.status == "error"  # a tool bob was not offered is not run for him
    assert [e.user_id for e in await logged(service, "tool_call")] == ["alice"]


async def test_invoke_is_refused_with_a_pointer_to_ainvoke(service: Service) -> None:
    agent, model = build(service)
    with pytest.raises(AsyncOnlyError, match="ainvoke"):
        await asyncio.to_thread(
            agent.invoke, {"messages": [HumanMessage("hi")]}, cfg("t1"), context=ALICE
        )
    assert model.requests == [] and await logged(service, "prefetch") == []


def test_the_example_runs_two_turns_in_embedded_mode(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSVC_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        env={**env, "MEMSVC_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Prefers short answers" in done.stdout.split("turn 2")[1]
    assert parse((tmp_path / "users" / "alice" / "USER.md").read_bytes()).entries == [
        "Prefers short answers"
    ]
