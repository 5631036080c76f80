"""MemoryManager: one builtin, at most one external, isolated hooks, background mirror."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from structlog.testing import capture_logs

from memsvc.builtin.provider import BuiltinProvider
from memsvc.builtin.snapshot import RedisSnapshotCache
from memsvc.config import InjectionConfig
from memsvc.errors import ProviderLimitError
from memsvc.paths import DataLayout
from memsvc.provider import MemoryProvider
from memsvc.security.scanner import Scanner
from memsvc.service.manager import MemoryManager
from memsvc.service.sessions import TurnFailures
from memsvc.store.filestore import BuiltinStore
from memsvc.store.locks import FileLocks


class Recorder(MemoryProvider):
    """An external provider that records every hook and can be told to fail or hang."""

    def __init__(
        self,
        name: str = "ext",
        *,
        fail: set[str] | None = None,
        hang: set[str] | None = None,
        tools: list[str] | None = None,
    ) -> None:
        self._name = name
        self.fail = fail or set()
        self.hang = hang or set()
        self.tools = tools if tools is not None else ["ext_search"]
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    async def _hook(self, hook: str, *args: Any) -> None:
        self.calls.append((hook, args))
        if hook in self.hang:
            await asyncio.sleep(3600)
        if hook in self.fail:
            raise RuntimeError(f"{hook} exploded")

    @property
    def name(self) -> str:
        return self._name

    async def initialize(self, *, user_id: str, agent_id: str, thread_id: str = "") -> None:
        await self._hook("initialize", user_id, agent_id, thread_id)

    async def shutdown(self) -> None:
        await self._hook("shutdown")

    async def prefetch(self, query: str, *, thread_id: str = "") -> str:
        await self._hook("prefetch", query, thread_id)
        return f"<memory-context>recalled for {query}</memory-context>"

    async def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        thread_id: str = "",
        turn_index: int = 0,
        at: float | None = None,
    ) -> None:
        await self._hook("sync_turn", user_content, assistant_content, thread_id, turn_index, at)

    async def on_session_switch(
        self, new_thread_id: str, *, parent_thread_id: str = "", reset: bool = False
    ) -> None:
        await self._hook("on_session_switch", new_thread_id, parent_thread_id, reset)

    async def on_memory_write(
        self, action: Any, target: Any, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        await self._hook("on_memory_write", action, target, content, metadata)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": t, "parameters": {"type": "object"}} for t in self.tools]

    async def handle_tool_call(
        self, tool_name: str, args: dict[str, Any], *, thread_id: str = ""
    ) -> str:
        await self._hook("handle_tool_call", tool_name, args)
        return json.dumps({"success": True, "tool": tool_name})


async def write(manager: MemoryManager, args: dict[str, Any], thread_id: str = "t1") -> Any:
    """The memory tool as an agent calls it: the write, then the mirror."""
    return json.loads(await manager.handle_tool_call("memory", args, thread_id=thread_id))


@pytest.fixture
def manager(
    layout: DataLayout, snapshots: RedisSnapshotCache, failures: TurnFailures
) -> MemoryManager:
    store = BuiltinStore(layout, FileLocks(layout), user_id="u1", agent_id="a1")
    builtin = BuiltinProvider(store, Scanner(), snapshots, failures)
    return MemoryManager(builtin, hook_timeout=0.3, prefetch_timeout=0.3)


def test_a_second_external_provider_is_refused(manager: MemoryManager) -> None:
    manager.add_provider(Recorder("hindsight"))
    with pytest.raises(ProviderLimitError, match="only one external provider"):
        manager.add_provider(Recorder("other"))


def test_an_external_provider_cannot_take_the_builtin_name(manager: MemoryManager) -> None:
    with pytest.raises(ProviderLimitError):
        manager.add_provider(Recorder("builtin"))


def test_tool_schemas_are_aggregated_and_memory_cannot_be_shadowed(
    manager: MemoryManager,
) -> None:
    ext = Recorder(tools=["memory", "ext_search"])
    manager.add_provider(ext)
    names = [s["name"] for s in manager.tool_schemas()]
    assert names == ["memory", "ext_search"]
    memory = next(s for s in manager.tool_schemas() if s["name"] == "memory")
    assert "operations" in memory["parameters"]["properties"]


async def test_tool_calls_are_routed_to_their_provider(manager: MemoryManager) -> None:
    ext = Recorder()
    manager.add_provider(ext)
    builtin = json.loads(
        await manager.handle_tool_call(
            "memory", {"action": "add", "target": "user", "content": "x"}
        )
    )
    assert builtin["success"] is True
    external = json.loads(await manager.handle_tool_call("ext_search", {"q": 1}))
    assert external == {"success": True, "tool": "ext_search"}
    unknown = json.loads(await manager.handle_tool_call("nope", {}))
    assert unknown["success"] is False and "Unknown tool 'nope'" in unknown["error"]
    assert [args for hook, args in ext.calls if hook == "handle_tool_call"] == [
        ("ext_search", {"q": 1})
    ]


async def test_a_failing_external_tool_returns_an_error_result(manager: MemoryManager) -> None:
    manager.add_provider(Recorder(fail={"handle_tool_call"}))
    result = json.loads(await manager.handle_tool_call("ext_search", {}))
    assert result["success"] is False and "exploded" in result["error"]


async def test_builtin_writes_are_mirrored_to_the_external_in_the_background(
    manager: MemoryManager,
) -> None:
    ext = Recorder()
    manager.add_provider(ext)
    await write(
        manager, {"action": "add", "target": "user", "content": "Lives in Paris"}, thread_id="t1"
    )
    await write(
        manager,
        {"action": "replace", "target": "user", "old_text": "Paris", "content": "Lives in Rome"},
        thread_id="t1",
    )
    await write(manager, {"action": "add", "target": "user", "content": "Lives in Rome"})
    await manager.drain()
    writes = [args for hook, args in ext.calls if hook == "on_memory_write"]
    assert [(a, t, c) for a, t, c, _ in writes] == [
        ("add", "user", "Lives in Paris"),
        ("replace", "user", "Lives in Rome"),
    ]
    assert writes[1][3]["previous"] == "Lives in Paris"
    assert writes[1][3]["user_id"] == "u1" and writes[1][3]["agent_id"] == "a1"


async def test_the_tool_result_does_not_wait_for_a_slow_mirror(manager: MemoryManager) -> None:
    ext = Recorder(hang={"on_memory_write"})
    manager.add_provider(ext)
    with capture_logs() as logs:  # from the start: on a busy machine the timeout may come early
        result = await write(manager, {"action": "add", "target": "memory", "content": "n"})
        assert result["success"] is True
        # the result is back while the mirror is still running (it hangs until its timeout)
        await asyncio.sleep(0.01)
        assert [hook for hook, _ in ext.calls] == ["on_memory_write"]
        assert len(manager._background) == 1  # still running: a task leaves the set as it ends
        await manager.drain()
    assert any(
        e["event"] == "provider_hook_timeout" and e["hook"] == "on_memory_write" for e in logs
    )


async def test_prefetch_runs_providers_concurrently_and_joins_their_blocks(
    manager: MemoryManager,
) -> None:
    manager.add_provider(Recorder())
    await write(manager, {"action": "add", "target": "user", "content": "Name: Ada"})
    result = await manager.prefetch_all("trip", thread_id="t1")
    assert list(result.blocks) == ["builtin", "ext"]
    assert "Name: Ada" in result.text and "recalled for trip" in result.text
    assert result.text.index("Name: Ada") < result.text.index("recalled for trip")
    assert result.skipped == {}


async def test_a_hanging_provider_is_cut_at_its_timeout_and_the_other_still_answers(
    manager: MemoryManager,
) -> None:
    manager.add_provider(Recorder(hang={"prefetch"}))
    await write(manager, {"action": "add", "target": "user", "content": "Name: Ada"})
    with capture_logs() as logs:
        result = await manager.prefetch_all("q", thread_id="t1")
    assert "Name: Ada" in result.text
    assert result.skipped == {"ext": "timed out after 0.3s"}
    assert any(e["event"] == "provider_hook_timeout" for e in logs)


async def test_a_raising_provider_is_logged_and_skipped(manager: MemoryManager) -> None:
    manager.add_provider(Recorder(fail={"prefetch", "sync_turn", "on_session_switch"}))
    with capture_logs() as logs:
        result = await manager.prefetch_all("q", thread_id="t1")
        await manager.sync_turn_all("u", "a", thread_id="t1")
        await manager.on_session_switch("t2", reset=True)
    assert result.skipped["ext"].startswith("RuntimeError: prefetch exploded")
    failures = {e["hook"]: e["error"] for e in logs if e["event"] == "provider_hook_failed"}
    assert failures == {
        "prefetch": "RuntimeError: prefetch exploded",
        "sync_turn": "RuntimeError: sync_turn exploded",
        "on_session_switch": "RuntimeError: on_session_switch exploded",
    }


async def test_a_finished_turn_reaches_the_external_provider(manager: MemoryManager) -> None:
    ext = Recorder()
    manager.add_provider(ext)
    await manager.sync_turn_all("question", "answer", thread_id="t1", turn_index=3, at=1700.0)
    assert ("sync_turn", ("question", "answer", "t1", 3, 1700.0)) in ext.calls


async def test_session_switch_reaches_every_provider(manager: MemoryManager) -> None:
    ext = Recorder()
    manager.add_provider(ext)
    await write(manager, {"action": "add", "target": "user", "content": "v1"})
    await manager.prefetch_all("", thread_id="t1")
    await write(manager, {"action": "add", "target": "user", "content": "v2"})
    await manager.on_session_switch("t1", parent_thread_id="", reset=True)
    assert ("on_session_switch", ("t1", "", True)) in ext.calls
    assert "v2" in (await manager.prefetch_all("", thread_id="t1")).text


async def test_memory_writes_are_not_echoed_back_to_the_builtin(manager: MemoryManager) -> None:
    await manager.on_memory_write("add", "user", "x")  # no external: nothing to do
    assert await manager.builtin.store.read("user") == []


async def test_injection_config_filters_what_is_injected(manager: MemoryManager) -> None:
    manager.add_provider(Recorder())
    await write(manager, {"action": "add", "target": "user", "content": "Name: Ada"})
    off = await manager.prefetch_all("q", injection=InjectionConfig(enabled=False))
    assert off.text == "" and set(off.skipped) == {"builtin", "ext"}
    no_ext = await manager.prefetch_all("q", injection=InjectionConfig(include_hindsight=False))
    assert "Name: Ada" in no_ext.text and "recalled" not in no_ext.text
    no_builtin = await manager.prefetch_all(
        "q", thread_id="x", injection=InjectionConfig(include_builtin=False)
    )
    assert "Name: Ada" not in no_builtin.text and "recalled" in no_builtin.text


async def test_initialize_and_shutdown_reach_every_provider(manager: MemoryManager) -> None:
    ext = Recorder(fail={"initialize"})
    manager.add_provider(ext)
    with capture_logs():
        await manager.initialize(user_id="u1", agent_id="a1", thread_id="t1")
    await manager.shutdown()
    assert [c[0] for c in ext.calls] == ["initialize", "shutdown"]


def test_system_prompt_blocks_are_joined_and_a_raising_one_is_skipped(
    manager: MemoryManager,
) -> None:
    class Static(Recorder):
        def system_prompt_block(self) -> str:
            raise RuntimeError("no")

    manager.add_provider(Static())
    with capture_logs() as logs:
        assert manager.system_prompt_block() == ""
    assert logs[0]["hook"] == "system_prompt_block"
