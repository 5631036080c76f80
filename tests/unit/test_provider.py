"""The provider ABC: what must be written and what every hook does by default."""

from __future__ import annotations

from typing import Any

import pytest

from memsvc.provider import MemoryProvider


class Minimal(MemoryProvider):
    @property
    def name(self) -> str:
        return "minimal"

    async def initialize(self, *, user_id: str, agent_id: str, thread_id: str = "") -> None:
        return None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


def test_a_provider_missing_a_required_hook_cannot_be_built() -> None:
    class NoSchemas(MemoryProvider):
        @property
        def name(self) -> str:
            return "x"

        async def initialize(self, *, user_id: str, agent_id: str, thread_id: str = "") -> None:
            return None

    with pytest.raises(TypeError, match="get_tool_schemas"):
        NoSchemas()  # type: ignore[abstract]


async def test_optional_hooks_default_to_harmless_no_ops() -> None:
    p = Minimal()
    assert p.system_prompt_block() == ""
    assert await p.prefetch("q", thread_id="t") == ""
    assert await p.queue_prefetch("q", thread_id="t") is None
    assert await p.sync_turn("u", "a", thread_id="t") is None
    assert await p.on_session_switch("t2", parent_thread_id="t", reset=True) is None
    assert await p.on_memory_write("add", "user", "x", {"k": "v"}) is None
    assert await p.shutdown() is None


async def test_a_provider_without_tools_refuses_tool_calls() -> None:
    with pytest.raises(NotImplementedError, match="minimal has no tool 'anything'"):
        await Minimal().handle_tool_call("anything", {})
