"""The builtin store: ``USER.md`` and ``MEMORY.md`` of one (user, agent).

Reads take no lock: files are only ever replaced whole. A write holds the
file's writer lock, re-reads the file from disk (another host may have written
it a moment ago), applies the operations, keeps a backup of a file that was not
canonical (hand-edited, written by an older tool) before normalising it, and
replaces the file atomically after checking that the lock is still held.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import structlog

from memsvc.atomicfile import read_bytes, write_atomic
from memsvc.edits import Applied, Op, apply
from memsvc.locks import WriteLocks
from memsvc.memfile import ParsedFile, parse, serialise
from memsvc.paths import DataLayout, Target

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Limits:
    user: int = 1375
    memory: int = 2200

    def of(self, target: Target) -> int:
        return self.user if target == "user" else self.memory


class BuiltinStore:
    def __init__(
        self,
        layout: DataLayout,
        locks: WriteLocks,
        *,
        user_id: str,
        agent_id: str,
        limits: Limits | None = None,
    ) -> None:
        self.user_id = user_id
        self.agent_id = agent_id
        self.limits = limits or Limits()
        self._layout = layout
        self._locks = locks
        self._paths = {
            target: layout.store_file(target, user_id, agent_id) for target in ("user", "memory")
        }

    def path(self, target: Target) -> Path:
        return self._paths[target]

    async def read(self, target: Target) -> list[str]:
        return (await self._read_parsed(target)).entries

    async def _read_parsed(self, target: Target) -> ParsedFile:
        raw = await read_bytes(self.path(target))
        return parse(raw if raw is not None else b"")

    async def write(self, target: Target, ops: list[Op]) -> Applied:
        """Apply ``ops`` under the writer lock; raises ``EditRejected`` or a lock error."""
        path = self.path(target)
        async with self._locks.hold(target, self.user_id, self.agent_id) as lease:
            raw = await read_bytes(path)
            parsed = parse(raw if raw is not None else b"")
            applied = apply(parsed.entries, ops, self.limits.of(target))
            if not applied.changes:
                return applied  # a no-op leaves even a non-canonical file untouched
            if raw is not None and not parsed.canonical:
                backup = path.with_name(f"{path.name}.{time.time_ns()}.bak")
                await write_atomic(backup, raw)
                log.info("store_backup_before_normalise", file=str(path), backup=str(backup))
            await write_atomic(path, serialise(applied.entries), before_commit=lease.ensure_held)
        return applied
