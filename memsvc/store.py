"""The builtin store: ``USER.md`` and ``MEMORY.md`` of one (user, agent).

Reads take no lock: files are only ever replaced whole. A write holds the
file's writer lock, re-reads the file from disk (another host may have written
it a moment ago), applies the operations, keeps a backup of a file that was not
canonical (hand-edited, written by an older tool) before normalising it, and
replaces the file atomically after checking that the lock is still held.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

from memsvc.atomicfile import read_bytes, write_atomic
from memsvc.edits import Applied, Op, apply
from memsvc.locks import WriteLocks
from memsvc.memfile import ParsedFile, parse, serialise
from memsvc.paths import DataLayout, Target

log = structlog.get_logger(__name__)


def digest(raw: bytes | None) -> str:
    """Identifies a file's exact bytes (a missing file and an empty one are the same store)."""
    return hashlib.sha256(raw or b"").hexdigest()


class WriteGuard(Protocol):
    """Hooks of an exactly-once write (see :mod:`memsvc.receipts`)."""

    async def already_applied(self, entries: list[str], digest: str) -> bool:
        """Under the lock, with the file just read: was this write committed before?"""
        ...

    async def committing(self, applied: Applied, before: str, after: str) -> None:
        """Right before the rename, after the lease check, with the digests of both files."""
        ...


class AlreadyApplied(Exception):
    """The guard found this write committed by an earlier delivery; nothing was done."""


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

    async def write(
        self, target: Target, ops: list[Op], *, guard: WriteGuard | None = None
    ) -> Applied:
        """Apply ``ops`` under the writer lock.

        Raises ``EditRejected`` (nothing changed), a lock error (nothing written) or
        :class:`AlreadyApplied` (the guard recognised an earlier delivery).
        """
        path = self.path(target)
        async with self._locks.hold(target, self.user_id, self.agent_id) as lease:
            raw = await read_bytes(path)
            parsed = parse(raw if raw is not None else b"")
            before = digest(raw)
            if guard is not None and await guard.already_applied(parsed.entries, before):
                raise AlreadyApplied
            applied = apply(parsed.entries, ops, self.limits.of(target))
            if not applied.changes:
                return applied  # a no-op leaves even a non-canonical file untouched
            if raw is not None and not parsed.canonical:
                backup = path.with_name(f"{path.name}.{time.time_ns()}.bak")
                await write_atomic(backup, raw)
                log.info("store_backup_before_normalise", file=str(path), backup=str(backup))

            data = serialise(applied.entries)

            async def before_rename() -> None:
                await lease.ensure_held()
                if guard is not None:
                    await guard.committing(applied, before, digest(data))

            await write_atomic(path, data, before_commit=before_rename)
        return applied
