"""The builtin store: ``USER.md`` and ``MEMORY.md`` of one (user, agent).

Reads take no lock: files are only ever replaced whole. A write holds the
file's writer lock, re-reads the file from disk (another host may have written
it a moment ago), applies the operations, keeps a backup of a file that was not
canonical (hand-edited, written by an older tool) before normalising it, and
replaces the file atomically. With Redis leases the commit point is the file
journal (:mod:`memsvc.store.journal`): the write counts once the journal accepted it
under the writer's lease, and a file that lags behind the journal (a writer died
before its rename, or stalled and renamed an older version late) is served from
the journal and put right by the next writer. A process whose own write the file
on disk still is reads it before it holds the lease, and takes the lease with its
commit (:meth:`BuiltinStore._rewrite_first`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog
from redis.asyncio.client import Pipeline

from memsvc.paths import TARGETS, DataLayout, Target
from memsvc.store.atomicfile import (
    FileState,
    Staged,
    discard_staged,
    folder_of,
    install,
    read_files,
    read_in,
    stage,
    staged_beside,
    write_atomic_now,
    written_at,
)
from memsvc.store.batches import Queued, WriteBatches
from memsvc.store.edits import Applied, EditRejected, FilePosition, Op, Written, apply
from memsvc.store.filejobs import current_event, events_ended, file_job, outside_events
from memsvc.store.journal import Confirmed, FileJournal, Head, decode_head
from memsvc.store.locks import Lease, WriteLocks
from memsvc.store.memfile import parse, serialise
from memsvc.tasks import to_its_end

log = structlog.get_logger(__name__)


def digest(raw: bytes | None) -> str:
    """Identifies a file's exact bytes (a missing file and an empty one are the same store)."""
    return hashlib.sha256(raw or b"").hexdigest()


class WriteGuard(Protocol):
    """Hooks of an exactly-once write (see :mod:`memsvc.store.receipts`)."""

    @property
    def key(self) -> str:
        """Where the write's receipt lives: read with the lock, in the same round trip."""
        ...

    @property
    def clears(self) -> Sequence[str]:
        """Keys the commit deletes in the same step (the turn's failure count)."""
        ...

    async def fetch(self) -> bytes | None:
        """The receipt, for a lock that reads nothing with its acquire."""
        ...

    def already_applied(self, raw: bytes | None) -> bool:
        """Given the receipt as read under the lock: was this write done by an earlier delivery?"""
        ...

    def receipt(self, applied: Applied) -> tuple[str, str]:
        """The receipt (key, value) the journal records in the same step as the commit."""
        ...

    async def record(self, applied: Applied) -> None:
        """Without a journal (a lock that cannot expire): record right before the rename."""
        ...


class _NotTaken(Exception):
    """A commit that was to take the lease did not (see :meth:`BuiltinStore._rewrite_first`)."""


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
class _Write:
    ops: list[Op]
    guard: WriteGuard | None
    vet: Callable[[list[str], Applied], None] | None
    event: object | None  # the event it serves, whose answer its rename waits for


@dataclass(frozen=True)
class _Plan:
    """What one batch does to its file: each write's outcome, and the file staged to replace
    it (``None``: nothing to write)."""

    outcomes: list[tuple[Queued[_Write, Applied], Applied | Exception]]
    current: CurrentFile
    staged: Staged | None
    records: list[tuple[WriteGuard, Applied]]

    @property
    def data(self) -> bytes:
        assert self.staged is not None
        return self.staged.data


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

    @property
    def modified(self) -> float | None:
        """When the version served was written: a head not yet renamed was staged then."""
        if self.head is not None and self.lagging:
            return written_at(self.head.fingerprint)
        return self.state.modified


def _discard_plan(plan: _Plan | None) -> None:
    if plan is not None and plan.staged is not None:
        discard_staged(plan.staged)


def _settle(outcomes: list[tuple[Queued[_Write, Applied], Applied | Exception]]) -> None:
    """Hand each write still waiting its own outcome; the ones settled already are skipped."""
    for queued, outcome in outcomes:
        if not queued.wanted:
            continue
        if isinstance(outcome, Exception):
            queued.outcome.set_exception(outcome)
        else:
            queued.outcome.set_result(outcome)


def _placed(outcome: Applied | Exception, position: FilePosition) -> Applied | Exception:
    if isinstance(outcome, EditRejected):
        outcome.position = position
    if not isinstance(outcome, Applied):
        return outcome
    return Written(outcome.entries, outcome.changes, position=position)


@dataclass(frozen=True)
class StoredFile:
    """A file's entries as served, and when the file on disk last changed (``None``: none yet)."""

    entries: list[str]
    modified: float | None


def new_batches() -> WriteBatches[_Write, Applied]:
    """The write queues one process shares between its stores."""
    return WriteBatches()


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
        batches: WriteBatches[_Write, Applied] | None = None,
    ) -> None:
        """``journal`` is required with locks that are leases (Redis), else optional.
        ``batches`` is shared by every store of a process (a user's agents share USER.md)."""
        self.user_id = user_id
        self.agent_id = agent_id
        self.limits = limits or Limits()
        self._layout = layout
        self._locks = locks
        self._journal = journal
        self._batches = batches if batches is not None else new_batches()
        self._paths = {target: layout.store_file(target, user_id, agent_id) for target in TARGETS}
        self._files = {target: layout.anchored(path) for target, path in self._paths.items()}
        self._repairs: dict[Target, asyncio.Task[None]] = {}
        self._dirty: set[Target] = set()

    def path(self, target: Target) -> Path:
        return self._paths[target]

    async def read(self, target: Target) -> list[str]:
        return (await self.read_all((target,)))[target]

    async def read_all(
        self,
        targets: Sequence[Target] = TARGETS,
        *,
        heads: Mapping[Target, Head | None] | None = None,
    ) -> dict[Target, list[str]]:
        """The entries of ``targets`` as served: their journal heads in one round trip, or
        none when the caller read them already (``heads``)."""
        files = await self.files(targets, heads=heads)
        return {target: stored.entries for target, stored in files.items()}

    async def files(
        self,
        targets: Sequence[Target] = TARGETS,
        *,
        heads: Mapping[Target, Head | None] | None = None,
    ) -> dict[Target, StoredFile]:
        """:meth:`read_all`, with each file's modification time."""
        reading = asyncio.ensure_future(read_files([self._files[target] for target in targets]))
        try:
            if self._journal is None:
                heads = dict.fromkeys(targets)
            elif heads is None:
                heads = await self._journal.heads(self.user_id, self.agent_id, targets)
        except BaseException:
            await asyncio.gather(reading, return_exceptions=True)
            raise
        files: dict[Target, StoredFile] = {}
        for target, state in zip(targets, await reading, strict=True):
            current = CurrentFile(state, heads[target])
            if current.lagging:
                self._repair_soon(target)
            files[target] = StoredFile(parse(current.data).entries, current.modified)
        return files

    async def write(
        self,
        target: Target,
        ops: list[Op],
        *,
        guard: WriteGuard | None = None,
        vet: Callable[[list[str], Applied], None] | None = None,
    ) -> Applied:
        """Apply ``ops`` under the writer lock, together with the writes queued beside it.

        ``vet`` sees the entries before and after and may refuse the result by raising
        ``EditRejected``. Raises ``EditRejected`` (nothing changed), a lock error
        (nothing written) or :class:`AlreadyApplied` (the guard recognised an earlier
        delivery).
        """
        applied = await self._batches.submit(
            self._queue_of(target),
            _Write(ops, guard, vet, current_event()),
            lambda batch: self._write_batch(target, batch),
        )
        repair = self._repairs.get(target)
        if repair is not None and repair is not asyncio.current_task():
            await asyncio.shield(repair)  # the caller sees the file settled
        return applied

    async def settled(self) -> None:
        """Wait until this store's writes in flight are done: answered once committed,
        a write's file is renamed and confirmed a moment later (see :meth:`_write_batch`)."""
        await self._batches.settled(*(self._queue_of(target) for target in TARGETS))

    def _queue_of(self, target: Target) -> str:
        """The key of ``target``'s write queue: USER.md is one file for every agent of its
        user, and one queue."""
        return str(self.path(target))

    async def _write_batch(self, target: Target, batch: list[Queued[_Write, Applied]]) -> None:
        """One read-modify-write under the file's lock for every write of ``batch``, each in
        its turn (the lease taken first, or by the commit: see :meth:`_rewrite_first`).

        Outcomes are settled only once the batch counts: a write refused because of an
        earlier one in the batch is not told so if that one never landed. With the
        journal a batch counts once committed (readers serve the journal's head until
        the file is in place), so the callers' replies travel while the file is synced,
        renamed and confirmed; until the confirmation lands this file's next batch
        waits, and one that never lands is done by the next writer. Without it, a batch
        counts once its file is in place.
        """
        guards = [queued.item.guard for queued in batch if queued.item.guard is not None]
        reads = None
        known = None
        if self._journal is not None:
            head_key, unconfirmed_key = self._journal.keys_of(target, self.user_id, self.agent_id)
            known = self._journal.known(target, self.user_id, self.agent_id)

            def reads(pipe: Pipeline) -> None:
                pipe.hgetall(head_key)
                pipe.zrange(unconfirmed_key, 0, -1)
                for guard in guards:
                    pipe.get(guard.key)

        async with self._locks.hold(
            target, self.user_id, self.agent_id, reads=reads, deferred=known is not None
        ) as lease:
            if lease.fence is not None and self._journal is None:
                raise TypeError("writes under a Redis lease need the file journal")
            # Once it starts, a replacement runs to its end even if this task is cancelled:
            # a commit without its rename and confirmation would leave the file lagging
            # until somebody read it, and the lease this block gives back is held till then.
            outcomes = None
            if known is not None:
                outcomes = await to_its_end(
                    self._rewrite_first(target, lease, known, batch, guards)
                )
            if outcomes is None:
                await lease.take()
                head, receipts = await self._head_and_receipts(target, lease, guards)
                outcomes = await to_its_end(self._rewrite(target, lease, head, batch, receipts))
        _settle(outcomes)

    async def _head_and_receipts(
        self, target: Target, lease: Lease, guards: list[WriteGuard]
    ) -> tuple[Head | None, dict[str, bytes | None]]:
        """The journal's head and the receipts of ``guards``, as read with the lock."""
        if lease.reads is not None:
            fields, unconfirmed, *raws = lease.reads
            receipts = {guard.key: raw for guard, raw in zip(guards, raws, strict=True)}
            return decode_head(fields, unconfirmed), receipts
        head = None
        if self._journal is not None:
            head = await self._journal.head(target, self.user_id, self.agent_id)
        return head, {guard.key: await guard.fetch() for guard in guards}

    async def _rewrite_first(
        self,
        target: Target,
        lease: Lease,
        known: Confirmed,
        batch: list[Queued[_Write, Applied]],
        guards: list[WriteGuard],
    ) -> list[tuple[Queued[_Write, Applied], Applied | Exception]] | None:
        """The batch planned from the disk alone and committed with the lease, when the
        file is still the rename this process confirmed last: ``None`` if it is not, if
        a write of the batch that has a receipt would change nothing, or if the commit
        finds the lock held, the file overtaken or a write done already (nothing was
        recorded: the batch goes the usual way, under the lock, from what it reads there).

        Receipts are not read first: the commit refuses a write whose receipt counts
        already. A write that changes nothing records its receipt after the fact, with
        no commit to check it, so such a batch goes the usual way too.
        """
        head = Head(known.version, known.fingerprint, "", b"", frozenset())
        unread = dict.fromkeys((guard.key for guard in guards), None)
        plan = await file_job(
            lambda: self._plan(target, head, batch, unread, on_disk=known.fingerprint),
            discard=_discard_plan,
        )
        if plan is None:
            return None
        if plan.staged is None or len(plan.records) != len(guards):
            _discard_plan(plan)
            return None
        if not await self._replace(target, lease, plan, takes=True):
            return None
        return plan.outcomes

    async def _rewrite(
        self,
        target: Target,
        lease: Lease,
        head: Head | None,
        batch: list[Queued[_Write, Applied]],
        receipts: dict[str, bytes | None],
    ) -> list[tuple[Queued[_Write, Applied], Applied | Exception]]:
        """Plan the batch and stage its file in one file job, then commit and rename."""
        plan = await file_job(
            lambda: self._plan(target, head, batch, receipts), discard=_discard_plan
        )
        assert plan is not None  # nothing to expect on disk: a plan always
        if plan.staged is not None:
            await self._replace(target, lease, plan)
        elif self._journal is not None and head is not None:
            on_disk = plan.current.state.fingerprint
            if on_disk == head.fingerprint and on_disk not in head.unconfirmed:
                # the file is still a confirmed rename: what the next write may start from
                self._journal.remember(
                    target, self.user_id, self.agent_id, Confirmed(head.version, on_disk)
                )
        return plan.outcomes

    def _plan(
        self,
        target: Target,
        head: Head | None,
        batch: list[Queued[_Write, Applied]],
        receipts: Mapping[str, bytes | None],
        *,
        on_disk: str | None = None,
    ) -> _Plan | None:
        """Read the file, apply each write in its turn, stage the result (a file job);
        ``None`` if ``on_disk`` is given and the file is another than that fingerprint.

        The file is read and its replacement staged through one walk to its folder: under
        many writers, the syscalls of each walk (nine for an agent's file) hand the GIL
        back and forth between the threads and the event loop.
        """
        with folder_of(self._files[target], create=False) as folder:
            return self._plan_in(folder, target, head, batch, receipts, on_disk)

    def _plan_in(
        self,
        folder: int | None,
        target: Target,
        head: Head | None,
        batch: list[Queued[_Write, Applied]],
        receipts: Mapping[str, bytes | None],
        on_disk: str | None,
    ) -> _Plan | None:
        path = self.path(target)
        current = CurrentFile(read_in(folder, self._files[target]), head)
        if on_disk is not None and current.state.fingerprint != on_disk:
            return None
        parsed = parse(current.data)
        entries = parsed.entries
        outcomes: list[tuple[Queued[_Write, Applied], Applied | Exception]] = []
        for queued in batch:
            write = queued.item
            guard = write.guard
            if guard is not None and guard.already_applied(receipts[guard.key]):
                outcomes.append((queued, AlreadyApplied()))
                continue
            try:
                applied = apply(entries, write.ops, self.limits.of(target))
                if write.vet is not None and applied.changes:
                    write.vet(entries, applied)
            except EditRejected as rejected:
                rejected.against = list(entries)
                outcomes.append((queued, rejected))
                continue
            entries = applied.entries
            outcomes.append((queued, applied))
        changed = any(isinstance(outcome, Applied) and outcome.changes for _, outcome in outcomes)
        if self._journal is not None:  # where each write stands among its file's writes
            version = head.version if head is not None else 0
            outcomes = [
                (queued, _placed(outcome, (version, int(changed), index)))
                for index, (queued, outcome) in enumerate(outcomes)
            ]
        if not changed and not current.lagging:  # a no-op leaves even a non-canonical file
            return _Plan(outcomes, current, None, [])
        raw = current.state.data
        if not current.lagging and raw is not None and not parsed.canonical:
            backup = self._files[target].sibling(f"{path.name}.{time.time_ns()}.bak")
            write_atomic_now(backup, raw, folder_fd=folder)  # a sibling: the same folder
            log.info("store_backup_before_normalise", file=path.name, backup=backup.relative)
        data = serialise(entries) if changed else current.data
        records = [  # each receipt keeps where its write stood: a redelivery logs it again
            (queued.item.guard, outcome)
            for queued, outcome in outcomes
            if isinstance(outcome, Applied) and outcome.changes and queued.item.guard is not None
        ]
        # with the journal, the commit is what makes the write count: the sync can follow it
        staged = stage(self._files[target], data, folder_fd=folder, sync=self._journal is None)
        return _Plan(outcomes, current, staged, records)

    async def _replace(
        self, target: Target, lease: Lease, plan: _Plan, *, takes: bool = False
    ) -> bool:
        """Commit and rename the staged file; repair it if a newer version overtook it.

        Each write's outcome is settled once the batch counts (see :meth:`_write_batch`).
        ``takes``: the commit takes the lease (see :meth:`_rewrite_first`); ``False`` is
        returned, nothing done, when it could not.
        """
        assert plan.staged is not None
        current, records = plan.current, plan.records
        version = 0

        async def commit(written: str) -> None:
            nonlocal version
            if self._journal is None:
                for guard, applied in records:
                    await guard.record(applied)
                return
            try:
                version = await self._journal.commit(
                    target,
                    self.user_id,
                    self.agent_id,
                    fence=lease.fence,
                    expected=current.head.version if current.head is not None else 0,
                    written=written,
                    base=current.state.fingerprint,
                    data=plan.data,
                    receipts=[guard.receipt(applied) for guard, applied in records],
                    clears=[key for guard, _ in records for key in guard.clears],
                    takes=takes,
                )
            except BaseException:
                if takes:  # it may have taken the lease: given back by its token, if it did
                    lease.taken_by_commit()
                raise
            if version == 0:
                raise _NotTaken
            if takes:
                lease.taken_by_commit()

        if self._journal is None:
            await install(plan.staged, before_commit=commit)
            _settle(plan.outcomes)
            return True

        async def answered() -> None:
            # Committed, the batch is served from the journal's head until the file is in
            # place: its callers hear their outcomes first, and the disk waits for the
            # events of its writes to end (their answers sent), unless another write of
            # the file queues meanwhile (it may be one of those events' own).
            _settle(plan.outcomes)
            events = {queued.item.event for queued, _ in plan.outcomes}
            await self._batches.until_queued(self._queue_of(target), lambda: events_ended(events))

        try:
            written = await install(plan.staged, before_commit=commit, committed=answered)
        except _NotTaken:
            return False
        head = await self._journal.confirm(
            target, self.user_id, self.agent_id, written, release=lease.fence
        )
        if lease.fence is not None:
            lease.released_elsewhere()
        if head == version:
            self._journal.remember(target, self.user_id, self.agent_id, Confirmed(version, written))
        else:
            # A newer version was committed while this writer stalled, and its own
            # (older) file may just have replaced it on disk: put the head back.
            log.warning("store_overtaken_repairing", file=self.path(target).name)
            self._repair_soon(target)
        return True

    async def put_right(self, target: Target) -> bool:
        """Rewrite ``target`` from its journal if it lags (raising what stops that); then
        whether a replacement of it is still staged, which a stalled writer may yet
        rename into place."""
        assert self._journal is not None
        head = await self._journal.head(target, self.user_id, self.agent_id)
        (state,) = await read_files([self._files[target]])
        if head is not None and head.renamed_unconfirmed(state.fingerprint):
            await self._journal.confirm(target, self.user_id, self.agent_id, head.fingerprint)
        elif CurrentFile(state, head).lagging:
            await self.write(target, [])
            await self._batches.settled(self._queue_of(target))  # renamed, not just committed
        return await file_job(lambda: staged_beside(self._files[target]))

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

        # no event's: the reader's answer does not wait for it, nor its rename for the reader
        self._repairs[target] = asyncio.get_running_loop().create_task(
            repair(), context=outside_events()
        )
