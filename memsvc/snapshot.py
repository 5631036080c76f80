"""The frozen snapshot: the builtin memory as the system prompt shows it.

Rendered exactly as Hermes Agent 0.19.0 renders it (same header, usage figure,
separators and block order), from entries that went through the scanner, so a
poisoned entry on disk reaches the prompt only as a placeholder. A snapshot is
taken once per session (thread), kept in Redis, and then served unchanged by
every worker: the prompt prefix stays byte-stable, which keeps the model
provider's prefix cache warm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis

from memsvc.keys import Keys
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


class RedisSnapshotCache:
    """Snapshots in Redis, so every worker on every host serves a thread the same bytes."""

    def __init__(self, redis: Redis, keys: Keys, *, ttl_seconds: int = 7 * 24 * 3600) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl_seconds

    async def get(self, user_id: str, agent_id: str, thread_id: str) -> Snapshot | None:
        key = self._keys.snapshot(user_id, agent_id, thread_id)
        raw = await self._redis.get(key)
        return None if raw is None else _decode(raw)

    async def put_first(
        self, user_id: str, agent_id: str, thread_id: str, snapshot: Snapshot
    ) -> Snapshot:
        key = self._keys.snapshot(user_id, agent_id, thread_id)
        if await self._redis.set(key, _encode(snapshot), nx=True, ex=self._ttl):
            return snapshot
        raw = await self._redis.get(key)
        return snapshot if raw is None else _decode(raw)

    async def drop(self, user_id: str, agent_id: str, thread_id: str) -> None:
        await self._redis.delete(self._keys.snapshot(user_id, agent_id, thread_id))


def _encode(snapshot: Snapshot) -> str:
    return json.dumps(
        {"memory": snapshot.memory_block, "user": snapshot.user_block, "at": snapshot.taken_at},
        ensure_ascii=False,
    )


def _decode(raw: bytes | str) -> Snapshot:
    data = json.loads(raw)
    return Snapshot(memory_block=data["memory"], user_block=data["user"], taken_at=data["at"])
