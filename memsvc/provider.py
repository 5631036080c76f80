"""The interface every memory provider implements.

The hooks are those of Hermes Agent's ``MemoryProvider`` that a DeerFlow-style
agent needs, made async: a provider is called from an event loop that serves
many agents at once, so none of its hooks may block it. Only ``name``,
``initialize`` and ``get_tool_schemas`` must be written; every
other hook has a harmless default, so a provider implements only what it uses.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from memsvc.ids import DEFAULT_THREAD
from memsvc.paths import Target
from memsvc.store.edits import Action

if TYPE_CHECKING:
    from memsvc.config import MemoryConfig


class MemoryProvider(ABC):
    """Hermes' provider interface: the hooks a memory source implements; the optional ones default
    to doing nothing.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """Short id such as ``builtin`` or ``hindsight``; also names it in logs."""

    @abstractmethod
    async def initialize(
        self, *, user_id: str, agent_id: str, thread_id: str = DEFAULT_THREAD
    ) -> None:
        """Open connections, create banks, load files."""

    async def shutdown(self) -> None:
        """Flush buffers and close connections."""

    def configure(self, config: MemoryConfig) -> None:
        """Take the user's effective config: a per-user override applies to the next event."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (usage notes, provider status)."""
        return ""

    async def prefetch(self, query: str, *, thread_id: str = DEFAULT_THREAD) -> str:
        """Context to inject before this turn's model call."""
        return ""

    async def queue_prefetch(self, query: str, *, thread_id: str = DEFAULT_THREAD) -> None:
        """Start preparing the next turn's context in the background."""

    async def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        thread_id: str = DEFAULT_THREAD,
        turn_index: int = 0,
        at: float | None = None,
    ) -> None:
        """Persist a finished turn; ``turn_index`` (1-based, stable across retries) names it,
        ``at`` (unix time, default now) says when it happened, however late it is stored."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas this provider serves; empty for context-only providers."""

    async def handle_tool_call(
        self, tool_name: str, args: dict[str, Any], *, thread_id: str = DEFAULT_THREAD
    ) -> str:
        """Run one of this provider's tools; the result is a JSON string for the model."""
        raise NotImplementedError(f"{self.name} has no tool {tool_name!r}")

    async def on_session_switch(
        self, new_thread_id: str, *, parent_thread_id: str = "", reset: bool = False
    ) -> None:
        """The agent moved to another thread (new, resumed, branched, compressed)."""

    async def on_memory_write(
        self,
        action: Action,
        target: Target,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """A builtin entry changed; an external provider mirrors it."""
