"""The frozen snapshot: the builtin memory as the system prompt shows it.

Rendered exactly as Hermes Agent 0.19.0 renders it (same header, usage figure,
separators and block order), from entries that went through the scanner, so a
poisoned entry on disk reaches the prompt only as a placeholder. A snapshot is
taken once per session (thread) and then served unchanged: the prompt prefix
stays byte-stable, which keeps the model provider's prefix cache warm.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from memsvc.memfile import ENTRY_DELIMITER, char_count
from memsvc.paths import Target

BLOCK_HEADERS: dict[Target, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
SEPARATOR = "═" * 46


def usage_figures(current: int, limit: int) -> str:
    """``"12% — 165/1,375"``: floor percentage capped at 100, thousands separators."""
    pct = min(100, int(current / limit * 100)) if limit > 0 else 0
    return f"{pct}% — {current:,}/{limit:,}"


def render_block(target: Target, entries: list[str], limit: int) -> str:
    """One block of the prompt; empty when there are no entries."""
    if not entries:
        return ""
    header = f"{BLOCK_HEADERS[target]} [{usage_figures(char_count(entries), limit)} chars]"
    return f"{SEPARATOR}\n{header}\n{SEPARATOR}\n{ENTRY_DELIMITER.join(entries)}"


@dataclass(frozen=True)
class Snapshot:
    memory_block: str
    user_block: str
    taken_at: float  # unix time

    @property
    def text(self) -> str:
        """The blocks as Hermes joins them into its system prompt (MEMORY, then USER)."""
        return "\n\n".join(block for block in (self.memory_block, self.user_block) if block)


class SnapshotCache(Protocol):
    """Where frozen snapshots live between the turns of a session."""

    async def get(self, user_id: str, agent_id: str, thread_id: str) -> Snapshot | None: ...

    async def put_first(
        self, user_id: str, agent_id: str, thread_id: str, snapshot: Snapshot
    ) -> Snapshot:
        """Store ``snapshot`` unless one exists; return the one that is kept."""
        ...

    async def drop(self, user_id: str, agent_id: str, thread_id: str) -> None: ...


class LocalSnapshotCache:
    """Snapshots of the most recent threads, in this process."""

    def __init__(self, max_threads: int = 10_000) -> None:
        self._max = max_threads
        self._items: OrderedDict[tuple[str, str, str], Snapshot] = OrderedDict()

    async def get(self, user_id: str, agent_id: str, thread_id: str) -> Snapshot | None:
        key = (user_id, agent_id, thread_id)
        snapshot = self._items.get(key)
        if snapshot is not None:
            self._items.move_to_end(key)
        return snapshot

    async def put_first(
        self, user_id: str, agent_id: str, thread_id: str, snapshot: Snapshot
    ) -> Snapshot:
        key = (user_id, agent_id, thread_id)
        kept = self._items.setdefault(key, snapshot)
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)
        return kept

    async def drop(self, user_id: str, agent_id: str, thread_id: str) -> None:
        self._items.pop((user_id, agent_id, thread_id), None)
