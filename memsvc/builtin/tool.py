"""The ``memory`` tool: one call of the model, checked, scanned and written once.

Behaviour follows Hermes Agent 0.19.0: add / replace / remove by a unique
substring, batched ``operations[]`` applied all-or-nothing against the final
budget, and a per-turn cap on consolidation failures. The schema and argument
checks live in :mod:`memsvc.builtin.schema`, the answers in
:mod:`memsvc.builtin.replies`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from memsvc.builtin import replies
from memsvc.builtin.replies import FileView
from memsvc.builtin.schema import DEFAULT_TARGET, MemoryToolArgs, clean, parse_args
from memsvc.errors import LockLostError, LockTimeoutError, LockUnavailableError
from memsvc.paths import MEMORY_FILE, USER_FILE, Target
from memsvc.security.scanner import Scanner
from memsvc.security.screening import new_findings_beside
from memsvc.store.edits import (
    Action,
    Applied,
    Change,
    EditRejected,
    EntryRef,
    FilePosition,
    Op,
    Written,
    apply,
)
from memsvc.store.filestore import AlreadyApplied, BuiltinStore
from memsvc.store.memfile import char_count, entry_problem
from memsvc.store.receipts import EventReceipt, Receipt, ReceiptGuard

SCAN_IN_THREAD_CHARS = 8 * 1024  # contents past this are scanned off the event loop


@dataclass(frozen=True)
class ToolOutcome:
    """The result the model reads, and the entries that changed (for the mirror)."""

    result: dict[str, Any]
    target: Target = "memory"
    changes: list[Change] = field(default_factory=list)
    position: FilePosition | None = None  # where it was applied among its file's writes
    repeat: bool = False  # a copy of an event that ended already: its first outcome

    @classmethod
    def of_receipt(cls, receipt: Receipt) -> ToolOutcome:
        """The outcome a receipt recorded, for a copy of its event delivered again."""
        return cls(receipt.result, receipt.target, receipt.changes, receipt.position, repeat=True)

    @property
    def text(self) -> str:
        return json.dumps(self.result, ensure_ascii=False)


class FailureCounter(Protocol):
    """Consecutive consolidation failures per thread, reset when a turn starts."""

    async def record(self, thread_id: str, event: str) -> int:
        """Count the refusal of ``event`` (once, however often it runs); the turn's count."""
        ...

    async def reset(self, thread_id: str) -> None: ...

    def key(self, thread_id: str) -> str:
        """Where the count lives: a write's commit clears it in the same step."""
        ...


class MemoryTool:
    """The handler of the ``memory`` tool for one (user, agent)."""

    def __init__(self, store: BuiltinStore, scanner: Scanner, failures: FailureCounter) -> None:
        self._store = store
        self._scanner = scanner
        self._failures = failures

    async def call(
        self, args: Any, *, thread_id: str, receipt: EventReceipt | None = None
    ) -> ToolOutcome:
        """Run one call; with a ``receipt``, a redelivered call has its effects only once.

        The receipt is looked up under the file's lock (with its acquire), or checked by
        the commit that takes the lock (the store's first commit): a call refused before
        it reaches the lock is refused again the same way.
        """
        return await self._recorded(self._call(args, thread_id, receipt), receipt)

    async def edit(
        self,
        target: Target,
        action: Action,
        content: str = "",
        *,
        at: EntryRef | None = None,
        receipt: EventReceipt | None = None,
    ) -> ToolOutcome:
        """A person's edit of one entry, named by position (``at``) unless it is an add.

        The same checks, scanner, limits, lock and receipts as a call of the model, and
        the same answers; made outside any turn, it counts against no turn's failures.
        """
        op = Op(action, clean(content), at=at)
        return await self._recorded(self._checked(target, [op], False, None, receipt), receipt)

    async def _recorded(
        self, running: Awaitable[ToolOutcome], receipt: EventReceipt | None
    ) -> ToolOutcome:
        outcome = await running
        # a write that changed the file recorded its receipt with its commit; a refusal is
        # recorded after the lock, with where it stood among the file's writes (replay
        # orders it there), unless another copy of the event ended first: then every copy
        # answers with that copy's outcome
        if receipt is not None and not outcome.changes and not outcome.result.get("retryable"):
            refusal = Receipt(outcome.result, outcome.target, [], outcome.position)
            if not await receipt.record(refusal):
                prior = await receipt.load()
                if prior is not None and not prior.parked:
                    return ToolOutcome.of_receipt(prior)
        return outcome

    async def _call(self, args: Any, thread_id: str, receipt: EventReceipt | None) -> ToolOutcome:
        parsed = parse_args(args)
        if isinstance(parsed, str):
            return ToolOutcome(replies.error(parsed))
        target: Target = parsed.target or DEFAULT_TARGET
        batch = parsed.operations is not None and len(parsed.operations) > 0
        if batch:
            assert parsed.operations is not None
            raw_ops = [(o.action, o.content, o.old_text) for o in parsed.operations]
        elif parsed.operations is not None and not parsed.action:
            return ToolOutcome(replies.error("operations list is empty."), target)
        else:
            single = await self._check_single(parsed, target)
            if isinstance(single, dict):
                return ToolOutcome(single, target)
            raw_ops = [(single, parsed.content, parsed.old_text)]
        ops = [Op(a, clean(c), clean(t)) for a, c, t in raw_ops]
        return await self._checked(target, ops, batch, thread_id, receipt)

    async def _checked(
        self,
        target: Target,
        ops: list[Op],
        batch: bool,
        thread_id: str | None,
        receipt: EventReceipt | None,
    ) -> ToolOutcome:
        """The budget and the scanner before the lock, then the write."""
        limit = self._store.limits.of(target)
        if _surely_over(ops, limit):  # the budget first: scanning what cannot fit is wasted
            entries = await self._store.read(target)
            try:
                apply(entries, ops, limit)  # adds alone over the limit: this raises
            except EditRejected as rejected:
                return await self._refused(
                    rejected, target, entries, ops, batch, thread_id, receipt
                )
        if sum(len(op.content) for op in ops) > SCAN_IN_THREAD_CHARS:
            # many KB of patterns would hold the event loop every other user's call runs on
            problem = await asyncio.to_thread(self._content_problem, ops, batch, limit)
        else:
            problem = self._content_problem(ops, batch, limit)
        if problem:
            return ToolOutcome(replies.error(problem), target)
        return await self._write(target, ops, batch, thread_id, receipt)

    async def _check_single(
        self, parsed: MemoryToolArgs, target: Target
    ) -> Literal["add", "replace", "remove"] | dict[str, Any]:
        action = parsed.action
        if not action:
            return replies.error("Unknown action ''. Use: add, replace, remove")
        if action == "add" and not parsed.content:
            return replies.error("Content is required for 'add' action.")
        if action in ("replace", "remove") and not parsed.old_text:
            entries = await self._store.read(target)
            return replies.needs_old_text(self._view(target), action, entries)
        if action == "replace" and not parsed.content:
            return replies.error("content is required for 'replace' action.")
        return action

    def _content_problem(self, ops: list[Op], batch: bool, limit: int) -> str | None:
        """Why the contents cannot be written, before any lock is taken.

        Content longer than the whole store's limit can never be written; it is left
        to the limit check (which explains how to consolidate) instead of being scanned.
        """
        for number, op in enumerate(ops, start=1):
            if not batch and op.action != "add" and not op.old_text and op.at is None:
                return "old_text cannot be empty."
            if op.action == "remove":
                continue
            if not batch and not op.content:
                return (
                    "Content cannot be empty."
                    if op.action == "add"
                    else "new_content cannot be empty. Use 'remove' to delete entries."
                )
            if len(op.content) > limit:
                continue
            problem = entry_problem(op.content) or self._scanner.check(op.content)
            if problem:
                return f"Operation {number}: {problem}" if batch else problem
        return None

    async def _write(
        self,
        target: Target,
        ops: list[Op],
        batch: bool,
        thread_id: str | None,
        receipt: EventReceipt | None,
    ) -> ToolOutcome:
        """``thread_id``: the turn whose failure count the write clears (``None``: no turn)."""

        def result_of(applied: Applied) -> dict[str, Any]:
            return replies.success(self._view(target), target, ops, applied, batch)

        guard = None
        if receipt is not None:
            clears = (self._failures.key(thread_id),) if thread_id is not None else ()
            guard = ReceiptGuard(receipt, target, result_of, clears=clears)
        try:
            applied = await self._store.write(target, ops, guard=guard, vet=self._vet)
        except AlreadyApplied:
            assert guard is not None and guard.prior is not None
            # logged again with where it was applied: replay orders it
            return ToolOutcome.of_receipt(guard.prior)
        except EditRejected as rejected:
            entries = rejected.against
            if entries is None:
                entries = await self._store.read(target)
            refused = await self._refused(rejected, target, entries, ops, batch, thread_id, receipt)
            return dataclasses.replace(refused, position=rejected.position)
        except (LockTimeoutError, LockLostError):
            return ToolOutcome(replies.busy(self._view(target)), target)
        except LockUnavailableError:
            return ToolOutcome(replies.unavailable(), target)
        if thread_id is not None and (guard is None or not applied.changes):
            await self._failures.reset(thread_id)  # else the commit cleared the count
        position = applied.position if isinstance(applied, Written) else None
        return ToolOutcome(result_of(applied), target, applied.changes, position)

    async def _refused(
        self,
        rejected: EditRejected,
        target: Target,
        entries: list[str],
        ops: list[Op],
        batch: bool,
        thread_id: str | None,
        receipt: EventReceipt | None,
    ) -> ToolOutcome:
        error, counts = replies.rejection(self._view(target), rejected, entries, ops, batch)
        if counts and thread_id is not None:
            # a redelivered event counts once; a call without a receipt, every time
            event = receipt.key if receipt is not None else uuid.uuid4().hex
            error = replies.gave_up(await self._failures.record(thread_id, event)) or error
        return ToolOutcome(error, target)

    def _vet(self, before: list[str], applied: Applied) -> None:
        """Refuse entries that are harmless alone but an attack next to the others.

        The prompt shows the entries side by side, so "Ignore all previous" and
        "instructions and ..." added as two entries read as one injection.
        """
        if new := new_findings_beside(self._scanner, before, applied.entries):
            last = len(applied.changes) - 1
            raise EditRejected("blocked", op_index=last, op=Op("add"), matches=new)

    def _view(self, target: Target) -> FileView:
        filename = USER_FILE if target == "user" else MEMORY_FILE
        return FileView(
            filename,
            self._store.limits.of(target),
            lambda entries: self._scanner.sanitise(entries, filename),
        )


def _surely_over(ops: list[Op], limit: int) -> bool:
    """Adds only, whose contents alone are over the limit: no file can take them."""
    if any(op.action != "add" for op in ops):
        return False
    return char_count(list(dict.fromkeys(op.content for op in ops if op.content))) > limit
