"""The builtin store: ``USER.md`` and ``MEMORY.md`` of one (user, agent).

Reads take no lock: files are only ever replaced whole. A write holds the
file's writer lock, re-reads the file from disk (another host may have written
it a moment ago), applies the operations, keeps a backup of a file that was not
canonical (hand-edited, written by an older tool) before normalising it, and
replaces the file atomically. With Redis leases the commit point is the file
journal (:mod:`memsvc.store.journal`): the write counts once the journal accepted it
under the writer's lease, and a file that lags behind the journal (a writer died
before its rename, or stalled and renamed an older version late) is served from
the journal and put right by the next writer.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

from memsvc.paths import DataLayout, Target
from memsvc.store.atomicfile import FileState, read_file, write_atomic
from memsvc.store.edits import Applied, Op, apply
from memsvc.store.journal import FileJournal, Head
from memsvc.store.locks import Lease, WriteLocks
from memsvc.store.memfile import parse, serialise

log = structlog.get_logger(__name__)


def digest(raw: bytes | None) -> str:
    """Identifies a file's exact bytes (a missing file and an empty one are the same store)."""
    return hashlib.sha256(raw or b"").hexdigest()


class WriteGuard(Protocol):
    """Hooks of an exactly-once write (see :mod:`memsvc.store.receipts`)."""

    async def already_applied(self) -> bool:
        """Under the lock: was this write committed by an earlier delivery?"""
        ...

    def receipt(self, applied: Applied) -> tuple[str, str]:
        """The receipt (key, value) the journal records in the same step as the commit."""
        ...

    async def record(self, applied: Applied) -> None:
        """Without a journal (a lock that cannot expire): record right before the rename."""
        ...


class AlreadyApplied(Exception):
    """The guard found this write committed by an earlier delivery; nothing was done."""


@dataclass(frozen=True)
class Limits:
    """Each file's character limit (Hermes' defaults)."""

    user: int = 1375
    memory: int = 2200

    def of(self, target: Target) -> int:
        return self.user if target == "user" else self.memory


@dataclass(frozen=True)
class CurrentFile:
    """A file as a writer or reader must take it: from disk, or from the journal's head."""

    state: FileState
    head: Head | None

    @property
    def lagging(self) -> bool:
        return self.head is not None and self.head.lagging(self.state.fingerprint)

    @property
    def data(self) -> bytes:
        if self.head is not None and self.lagging:
            return self.head.data
        return self.state.data or b""


class BuiltinStore:
    """USER.md and MEMORY.md of one (user, agent): read as served, written under the lock through
    the journal.
    """

    def __init__(
        self,
        layout: DataLayout,
        locks: WriteLocks,
        *,
        user_id: str,
        agent_id: str,
        limits: Limits | None = None,
        journal: FileJournal | None = None,
    ) -> None:
        """``journal`` is required with locks that are leases (Redis), else optional."""
        self.user_id = user_id
        self.agent_id = agent_id
        self.limits = limits or Limits()
        self._layout = layout
        self._locks = locks
        self._journal = journal
        self._paths = {
            target: layout.store_file(target, user_id, agent_id) for target in ("user", "memory")
        }
        self._files = {target: layout.anchored(path) for target, path in self._paths.items()}
        self._repairs: dict[Target, asyncio.Task[None]] = {}
        self._dirty: set[Target] = set()

    def path(self, target: Target) -> Path:
        return self._paths[target]

    async def read(self, target: Target) -> list[str]:
        current = await self._current(target)
        if current.lagging:
            self._repair_soon(target)
        return parse(current.data).entries

    async def _current(self, target: Target) -> CurrentFile:
        if self._journal is None:
            return CurrentFile(await read_file(self._files[target]), None)
        state, head = await asyncio.gather(
            read_file(self._files[target]),
            self._journal.head(target, self.user_id, self.agent_id),
        )
        return CurrentFile(state, head)

    async def write(
        self,
        target: Target,
        ops: list[Op],
        *,
        guard: WriteGuard | None = None,
        vet: Callable[[list[str], Applied], None] | None = None,
    ) -> Applied:
        """Apply ``ops`` under the writer lock.

        ``vet`` sees the entries before and after and may refuse the result by raising
        ``EditRejected``. Raises ``EditRejected`` (nothing changed), a lock error
        (nothing written) or :class:`AlreadyApplied` (the guard recognised an earlier
        delivery).
        """
        path = self.path(target)
        async with self._locks.hold(target, self.user_id, self.agent_id) as lease:
            if lease.fence is not None and self._journal is None:
                raise TypeError("writes under a Redis lease need the file journal")
            current = await self._current(target)
            parsed = parse(current.data)
            if guard is not None and await guard.already_applied():
                if current.lagging:
                    await asyncio.shield(self._replace(target, lease, current, current.data, None))
                raise AlreadyApplied
            applied = apply(parsed.entries, ops, self.limits.of(target))
            if vet is not None and applied.changes:
                vet(parsed.entries, applied)
            if not applied.changes and not current.lagging:
                return applied  # a no-op leaves even a non-canonical file untouched
            raw = current.state.data
            if not current.lagging and raw is not None and not parsed.canonical:
                backup = self._files[target].sibling(f"{path.name}.{time.time_ns()}.bak")
                await write_atomic(backup, raw)
                log.info("store_backup_before_normalise", file=path.name, backup=backup.relative)
            data = serialise(applied.entries)
            committed = guard if applied.changes else None
            # Once it starts, a replacement runs to its end even if this task is cancelled
            # (a worker dropping an event another took over): a commit without its rename
            # and confirmation would leave the file lagging until somebody read it.
            await asyncio.shield(self._replace(target, lease, current, data, (committed, applied)))
        repair = self._repairs.get(target)
        if repair is not None and repair is not asyncio.current_task():
            await asyncio.shield(repair)  # the caller sees the file settled
        return applied

    async def _replace(
        self,
        target: Target,
        lease: Lease,
        current: CurrentFile,
        data: bytes,
        receipt: tuple[WriteGuard | None, Applied] | None,
    ) -> None:
        """Commit and rename ``data``; repair the file if a newer version overtook it."""
        guard, applied = receipt or (None, None)
        version = 0

        async def commit(written: str) -> None:
            nonlocal version
            if self._journal is None:
                if guard is not None and applied is not None:
                    await guard.record(applied)
                return
            version = await self._journal.commit(
                target,
                self.user_id,
                self.agent_id,
                fence=lease.fence,
                expected=current.head.version if current.head is not None else 0,
                written=written,
                base=current.state.fingerprint,
                data=data,
                receipt=guard.receipt(applied)
                if guard is not None and applied is not None
                else None,
            )

        written = await write_atomic(self._files[target], data, before_commit=commit)
        if self._journal is None:
            return
        head = await self._journal.confirm(target, self.user_id, self.agent_id, written)
        if head != version:
            # A newer version was committed while this writer stalled, and its own
            # (older) file may just have replaced it on disk: put the head back.
            log.warning("store_overtaken_repairing", file=self.path(target).name)
            self._repair_soon(target)

    def _repair_soon(self, target: Target) -> None:
        """Put a lagging file right, in a task of its own (readers never wait for a lock).

        A repair asked for while one runs makes it run once more: the running one may
        have looked at the file before the newest late rename.
        """
        self._dirty.add(target)
        if target in self._repairs:
            return

        async def repair() -> None:
            try:
                while target in self._dirty:
                    self._dirty.discard(target)
                    await self.write(target, [])
            except Exception as exc:  # the next write repairs it as well
                log.warning("store_repair_failed", file=self.path(target).name, error=repr(exc))
            finally:
                del self._repairs[target]

        self._repairs[target] = asyncio.get_running_loop().create_task(repair())
