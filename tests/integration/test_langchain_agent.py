"""MemoryMiddleware against the machine's Redis and a ``memsvc worker`` process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from memsvc.client import MemoryClient
from memsvc.integrations.langchain import MemoryContext, MemoryMiddleware
from memsvc.service.eventlog import EventLog
from memsvc.store.memfile import parse
from tests.chat_model import ScriptedModel
from tests.conftest import until
from tests.integration.conftest import WorkerPool

pytestmark = pytest.mark.integration

PROMPT = "You are a helpful assistant."
USERS = ("alice", "bob")


async def test_two_users_each_get_their_memory_through_a_worker_process(
    workers: WorkerPool,
) -> None:
    await workers.start(1)
    data_dir = Path(workers.env["MEMSVC_DATA_DIR"])
    log = EventLog(workers.redis, workers.keys)

    async def sync_turns() -> list[Any]:
        return [e async for e in log.entries() if e.type == "sync_turn"]

    # generous: a first prefetch that missed its deadline would leave the snapshot out
    async with MemoryClient(settings=workers.settings(prefetch_deadline_seconds=30.0)) as mem:
        for user in USERS:
            args = {"action": "add", "target": "user", "content": f"Name: {user}"}
            assert (await mem.call_tool(user, "coder", "setup", "memory", args))["success"]
        model = ScriptedModel()
        agent = create_agent(
            model,
            tools=[],
            system_prompt=PROMPT,
            middleware=[MemoryMiddleware(mem)],
            context_schema=MemoryContext,
            checkpointer=InMemorySaver(),
        )

        async def turn(user: str, thread: str, text: str) -> None:
            await agent.ainvoke(
                {"messages": [HumanMessage(text)]},
                config={"configurable": {"thread_id": f"{user}-{thread}"}},
                context=MemoryContext(user_id=user, agent_id="coder"),
            )

        for text in ("remember: {} prefers tea", "which drink do I prefer, {}?"):
            await asyncio.gather(*(turn(user, "t1", text.format(user)) for user in USERS))
        await asyncio.gather(*(turn(user, "t2", f"hello again, {user}") for user in USERS))

    await workers.renamed()
    for user, other in (USERS, USERS[::-1]):
        entries = parse((data_dir / "users" / user / "USER.md").read_bytes()).entries
        assert entries == [f"Name: {user}", f"{user} prefers tea"]
        in_t1 = [
            r.system
            for r in model.requests
            if r.human.endswith((f"{user} prefers tea", f"{user}?"))
        ]
        assert len(in_t1) == 3 and len(set(in_t1)) == 1  # the tool call, its answer, turn 2
        assert in_t1[0].startswith(PROMPT) and f"Name: {user}" in in_t1[0]
        assert "prefers tea" not in in_t1[0]  # frozen for the thread: on disk, not in its prompt
        (in_t2,) = [r.system for r in model.requests if r.human == f"hello again, {user}"]
        assert f"{user} prefers tea" in in_t2 and other not in in_t2
    await until(lambda: _count(sync_turns, 6))
    by_thread = sorted((e.user_id, e.thread_id) for e in await sync_turns())
    assert by_thread == sorted(
        (user, f"{user}-{thread}") for user in USERS for thread in ("t1", "t1", "t2")
    )


async def _count(entries: Any, count: int) -> bool:
    return len(await entries()) >= count
