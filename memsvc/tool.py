"""The ``memory`` tool: its schema, argument checking and the results the model reads.

Behaviour and result shapes follow Hermes Agent 0.19.0: add / replace / remove
by a unique substring, batched ``operations[]`` applied all-or-nothing against
the final budget, errors that carry what the model needs to fix the call, and a
per-turn cap on consolidation failures after which the result tells the model
to stop retrying and answer the user. Entries shown back to the model pass
through the scanner first, so a poisoned entry is never echoed raw.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memsvc.edits import Applied, Change, EditRejected, Op, apply
from memsvc.errors import LockLostError, LockTimeoutError, LockUnavailableError
from memsvc.events import MEMORY_TOOL
from memsvc.memfile import char_count, entry_problem, normalise_newlines
from memsvc.paths import MEMORY_FILE, USER_FILE, Target
from memsvc.receipts import EventReceipt, Receipt
from memsvc.screening import new_findings_beside
from memsvc.security import MAX_SCAN_CHARS, Scanner
from memsvc.snapshot import usage_figures
from memsvc.store import AlreadyApplied, BuiltinStore
from memsvc.validation import describe

MAX_ARGS_BYTES = 64 * 1024
MAX_OPERATIONS = 50
MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
SCAN_IN_THREAD_CHARS = 8 * 1024  # contents past this are scanned off the event loop
PREVIEW_WIDTH = 80

MEMORY_SCHEMA: dict[str, Any] = {
    "name": MEMORY_TOOL,
    "description": (
        "Save durable facts to persistent memory that survive across sessions. Memory is "
        "injected into every future turn, so keep entries compact and high-signal.\n\n"
        "HOW: make ALL your changes in ONE call via an 'operations' array (each item: "
        "{action, content?, old_text?}). The batch applies atomically and the char limit is "
        "checked only on the FINAL result — so a single call can remove/replace stale entries "
        "to free room AND add new ones, even when an add alone would overflow. The response "
        "reports current/limit chars and confirms completion; one batch call finishes the "
        "update, so don't repeat it. Use the bare action/content/old_text fields only for a "
        "single lone change.\n\n"
        "WHEN: save proactively when the user states a preference, correction, or personal "
        "detail, or you learn a stable fact about their environment, conventions, or workflow. "
        "Priority: user preferences & corrections > environment facts > procedures. The best "
        "memory stops the user repeating themselves.\n\n"
        "IF FULL: an add is rejected with the current entries shown. Reissue as ONE batch that "
        "removes or shortens enough stale entries and adds the new one together.\n\n"
        "TARGETS: 'user' = who the user is (name, role, preferences, style); shared by all of "
        "the user's agents. 'memory' = your own notes (environment, conventions, tool quirks, "
        "lessons); private to you.\n\n"
        "SKIP: trivial/obvious info, easily re-discovered facts, raw data dumps, task progress, "
        "completed-work logs, temporary TODO state."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "The action to perform (single-op shape). Omit when using "
                "'operations'.",
            },
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "Which memory store: 'memory' for your notes, 'user' for the "
                "user profile.",
            },
            "content": {
                "type": "string",
                "description": "The entry content. Required for 'add' and 'replace' "
                "(single-op shape).",
            },
            "old_text": {
                "type": "string",
                "description": "REQUIRED for 'replace' and 'remove' (single-op shape): a short "
                "unique substring identifying the existing entry to modify. Omit only for 'add'.",
            },
            "operations": {
                "type": "array",
                "description": (
                    "Batch shape: a list of operations applied atomically in one call against "
                    "the final char budget. Preferred when making multiple changes or "
                    "consolidating to make room. Each item is {action, content?, old_text?}."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "content": {
                            "type": "string",
                            "description": "Entry content for add/replace.",
                        },
                        "old_text": {
                            "type": "string",
                            "description": "Substring identifying the entry for replace/remove.",
                        },
                    },
                    "required": ["action"],
                },
            },
        },
        "required": ["target"],
    },
}

_Text = Field(default=None, max_length=MAX_SCAN_CHARS)


class OperationArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["add", "replace", "remove"]
    content: str | None = _Text
    old_text: str | None = _Text


class MemoryToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["add", "replace", "remove", ""] | None = None
    target: Literal["memory", "user"] | None = None
    content: str | None = _Text
    old_text: str | None = _Text
    operations: list[OperationArgs] | None = Field(default=None, max_length=MAX_OPERATIONS)


@dataclass(frozen=True)
class ToolOutcome:
    """The result the model reads, and the entries that changed (for the mirror)."""

    result: dict[str, Any]
    target: Target = "memory"
    changes: list[Change] = field(default_factory=list)

    @property
    def text(self) -> str:
        return json.dumps(self.result, ensure_ascii=False)


def _error(message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": message, **extra}


class FailureCounter(Protocol):
    """Consecutive consolidation failures per thread, reset when a turn starts."""

    async def record(self, thread_id: str) -> int: ...

    async def reset(self, thread_id: str) -> None: ...


class _ReceiptGuard:
    """Connects the store's exactly-once hooks to an event's receipt."""

    def __init__(
        self, receipt: EventReceipt, target: Target, result_of: Callable[[Applied], dict[str, Any]]
    ) -> None:
        self._receipt = receipt
        self._target = target
        self._result_of = result_of
        self.prior: Receipt | None = None

    async def already_applied(self) -> bool:
        self.prior = await self._receipt.load()  # under the lock: sees any concurrent delivery
        return self.prior is not None and not self.prior.parked

    def _of(self, applied: Applied) -> Receipt:
        return Receipt(self._result_of(applied), self._target, applied.changes)

    def receipt(self, applied: Applied) -> tuple[str, str]:
        return self._receipt.key, self._of(applied).encode()

    async def record(self, applied: Applied) -> None:
        await self._receipt.record(self._of(applied))


class MemoryTool:
    """The handler of the ``memory`` tool for one (user, agent)."""

    def __init__(self, store: BuiltinStore, scanner: Scanner, failures: FailureCounter) -> None:
        self._store = store
        self._scanner = scanner
        self._failures = failures

    async def call(
        self, args: Any, *, thread_id: str, receipt: EventReceipt | None = None
    ) -> ToolOutcome:
        """Run one call; with a ``receipt``, a redelivered call has its effects only once."""
        if receipt is not None:
            prior = await receipt.load()
            if prior is not None and not prior.parked:
                return ToolOutcome(prior.result, prior.target, prior.changes)
        outcome = await self._call(args, thread_id, receipt)
        # a write that changed the file recorded its receipt with its commit
        if receipt is not None and not outcome.changes and not outcome.result.get("retryable"):
            await receipt.record(Receipt(outcome.result, outcome.target, []))
        return outcome

    async def _call(self, args: Any, thread_id: str, receipt: EventReceipt | None) -> ToolOutcome:
        parsed = _parse_args(args)
        if isinstance(parsed, str):
            return ToolOutcome(_error(parsed))
        target: Target = parsed.target or "memory"
        batch = parsed.operations is not None and len(parsed.operations) > 0
        if batch:
            assert parsed.operations is not None
            raw_ops = [(o.action, o.content, o.old_text) for o in parsed.operations]
        elif parsed.operations is not None and not parsed.action:
            return ToolOutcome(_error("operations list is empty."), target)
        else:
            single = await self._check_single(parsed, target)
            if isinstance(single, dict):
                return ToolOutcome(single, target)
            raw_ops = [(single, parsed.content, parsed.old_text)]
        ops = [Op(a, _clean(c), _clean(t)) for a, c, t in raw_ops]
        limit = self._store.limits.of(target)
        if _surely_over(ops, limit):  # the budget first: scanning what cannot fit is wasted
            entries = await self._store.read(target)
            try:
                apply(entries, ops, limit)  # adds alone over the limit: this raises
            except EditRejected as rejected:
                return await self._refused(rejected, target, entries, ops, batch, thread_id)
        if sum(len(op.content) for op in ops) > SCAN_IN_THREAD_CHARS:
            # many KB of patterns would hold the event loop every other user's call runs on
            problem = await asyncio.to_thread(self._content_problem, ops, batch, limit)
        else:
            problem = self._content_problem(ops, batch, limit)
        if problem:
            return ToolOutcome(_error(problem), target)
        return await self._write(target, ops, batch, thread_id, receipt)

    async def _check_single(
        self, parsed: MemoryToolArgs, target: Target
    ) -> Literal["add", "replace", "remove"] | dict[str, Any]:
        action = parsed.action
        if not action:
            return _error("Unknown action ''. Use: add, replace, remove")
        if action == "add" and not parsed.content:
            return _error("Content is required for 'add' action.")
        if action in ("replace", "remove") and not parsed.old_text:
            entries = await self._store.read(target)
            return _error(
                f"'{action}' needs old_text -- a short unique substring of the entry to "
                f"{action}. None was provided. Reissue the {action} with old_text set to part "
                "of one of the current_entries below.",
                current_entries=self._shown(entries, target),
                usage=self._usage(entries, target),
            )
        if action == "replace" and not parsed.content:
            return _error("content is required for 'replace' action.")
        return action

    def _content_problem(self, ops: list[Op], batch: bool, limit: int) -> str | None:
        """Why the contents cannot be written, before any lock is taken.

        Content longer than the whole store's limit can never be written; it is left
        to the limit check (which explains how to consolidate) instead of being scanned.
        """
        for number, op in enumerate(ops, start=1):
            if not batch and op.action != "add" and not op.old_text:
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
        thread_id: str,
        receipt: EventReceipt | None,
    ) -> ToolOutcome:
        def result_of(applied: Applied) -> dict[str, Any]:
            return self._success(target, ops, applied, batch)

        guard = _ReceiptGuard(receipt, target, result_of) if receipt is not None else None
        try:
            applied = await self._store.write(target, ops, guard=guard, vet=self._vet)
        except AlreadyApplied:
            assert guard is not None and guard.prior is not None
            return ToolOutcome(guard.prior.result, guard.prior.target, guard.prior.changes)
        except EditRejected as rejected:
            entries = await self._store.read(target)
            return await self._refused(rejected, target, entries, ops, batch, thread_id)
        except (LockTimeoutError, LockLostError):
            return ToolOutcome(
                _error(
                    f"Memory is busy: another write to {self._filename(target)} is in progress. "
                    "Nothing was saved. Retry this call once; if it fails again, continue "
                    "with your reply.",
                    retryable=True,
                ),
                target,
            )
        except LockUnavailableError:
            return ToolOutcome(
                _error(
                    "Memory storage is temporarily unavailable. Nothing was saved. Continue "
                    "with your reply; the fact can be saved in a later turn.",
                    retryable=True,
                ),
                target,
            )
        await self._failures.reset(thread_id)
        return ToolOutcome(result_of(applied), target, applied.changes)

    async def _refused(
        self,
        rejected: EditRejected,
        target: Target,
        entries: list[str],
        ops: list[Op],
        batch: bool,
        thread_id: str,
    ) -> ToolOutcome:
        error, counts = self._rejection(rejected, target, entries, ops, batch)
        if counts:
            error = await self._count_failure(error, thread_id)
        return ToolOutcome(error, target)

    def _vet(self, before: list[str], applied: Applied) -> None:
        """Refuse entries that are harmless alone but an attack next to the others.

        The prompt shows the entries side by side, so "Ignore all previous" and
        "instructions and ..." added as two entries read as one injection.
        """
        if new := new_findings_beside(self._scanner, before, applied.entries):
            last = len(applied.changes) - 1
            raise EditRejected("blocked", op_index=last, op=Op("add"), matches=new)

    def _success(
        self, target: Target, ops: list[Op], applied: Applied, batch: bool
    ) -> dict[str, Any]:
        result: dict[str, Any] = {
            "success": True,
            "done": True,
            "target": target,
            "usage": f"{self._usage(applied.entries, target, percent=True)} chars",
            "entry_count": len(applied.entries),
            "message": self._success_message(ops, applied.changes, batch),
        }
        replaced = [c.previous for c in applied.changes if c.action == "replace" and c.previous]
        if replaced:
            shown = self._shown(replaced, target)
            result["replaced"] = shown if batch else shown[0]
        result["note"] = "Write saved. This update is complete — do not repeat it."
        return result

    @staticmethod
    def _success_message(ops: list[Op], changes: list[Change], batch: bool) -> str:
        if batch:
            return f"Applied {len(ops)} operation(s)."
        if not changes and ops[0].action == "add":
            return "Entry already exists (no duplicate added)."
        return {"add": "Entry added.", "replace": "Entry replaced.", "remove": "Entry removed."}[
            ops[0].action
        ]

    def _rejection(
        self,
        rejected: EditRejected,
        target: Target,
        entries: list[str],
        ops: list[Op],
        batch: bool,
    ) -> tuple[dict[str, Any], bool]:
        """The error the model reads, and whether it counts against the per-turn cap."""
        op = rejected.op
        limit = self._store.limits.of(target)
        shown = self._shown(entries, target)
        usage = self._usage(entries, target)
        if rejected.kind == "blocked":
            return (
                _error(
                    f"Blocked: next to the entries already in {self._filename(target)}, this "
                    f"content matches threat pattern '{rejected.matches[0]}'. The system prompt "
                    "shows entries side by side, so they must not form instructions together. "
                    "Nothing was saved."
                ),
                False,
            )
        if batch:
            pos = f"Operation {rejected.op_index + 1} ({op.action})"
            message = {
                "missing_content": f"{pos}: content is required"
                + (" (use action='remove' to delete)." if op.action == "replace" else "."),
                "missing_old_text": f"{pos}: old_text is required.",
                "no_match": f"{pos}: no entry matched '{op.old_text}'.",
                "ambiguous": f"{pos}: '{op.old_text}' matched multiple distinct entries -- be "
                "more specific.",
            }.get(rejected.kind)
            if message is None:
                message = (
                    f"After applying all {len(ops)} operations, memory would be at "
                    f"{rejected.total:,}/{limit:,} chars -- over the limit. Remove or shorten "
                    "more entries in the same batch (see current_entries below), then retry."
                )
            else:
                message += " No operations were applied (batch is all-or-nothing)."
            return _error(message, current_entries=shown, usage=usage), True
        if rejected.kind == "no_match":
            verb = "replace" if op.action == "replace" else "remove"
            return (
                _error(
                    f"No entry matched '{op.old_text}'. Check current_entries below and retry "
                    f"with the exact text of the entry you want to {verb}.",
                    current_entries=shown,
                ),
                True,
            )
        if rejected.kind == "ambiguous":
            previews = [
                e[:PREVIEW_WIDTH] + ("..." if len(e) > PREVIEW_WIDTH else "")
                for e in self._shown(rejected.matches, target)
            ]
            return (
                _error(
                    f"Multiple entries matched '{op.old_text}'. Be more specific.", matches=previews
                ),
                False,
            )
        current = char_count(entries)
        if op.action == "add":
            message = (
                f"Memory at {current:,}/{limit:,} chars. Adding this entry ({len(op.content)} "
                "chars) would exceed the limit. Consolidate now: use 'replace' to merge "
                "overlapping entries into shorter ones or 'remove' stale or less important "
                "entries (see current_entries below), then retry this add — all in this turn."
            )
        else:
            message = (
                f"Replacement would put memory at {rejected.total:,}/{limit:,} chars. Shorten "
                "the new content, or 'remove' other stale or less important entries to make "
                "room (see current_entries below), then retry — all in this turn."
            )
        return _error(message, current_entries=shown, usage=usage), True

    async def _count_failure(self, result: dict[str, Any], thread_id: str) -> dict[str, Any]:
        count = await self._failures.record(thread_id)
        if count <= MAX_CONSOLIDATION_FAILURES_PER_TURN:
            return result
        return {
            "success": False,
            "done": True,
            "error": (
                f"Memory consolidation failed {count} times this turn. Stop retrying memory "
                "calls — leave memory unchanged for now and continue with your reply to the "
                "user. The fact can be saved in a later turn."
            ),
        }

    def _usage(self, entries: list[str], target: Target, *, percent: bool = False) -> str:
        current, limit = char_count(entries), self._store.limits.of(target)
        return usage_figures(current, limit) if percent else f"{current:,}/{limit:,}"

    def _shown(self, entries: list[str], target: Target) -> list[str]:
        return self._scanner.sanitise(entries, self._filename(target))

    @staticmethod
    def _filename(target: Target) -> str:
        return USER_FILE if target == "user" else MEMORY_FILE


def _surely_over(ops: list[Op], limit: int) -> bool:
    """Adds only, whose contents alone are over the limit: no file can take them."""
    if any(op.action != "add" for op in ops):
        return False
    return char_count(list(dict.fromkeys(op.content for op in ops if op.content))) > limit


def _clean(text: str | None) -> str:
    """Stripped, with the line ends Hermes would see when it reads the file back."""
    return normalise_newlines(text or "").strip()


def _parse_args(args: Any) -> MemoryToolArgs | str:
    if isinstance(args, str | bytes):
        try:
            args = json.loads(args)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            return f"Invalid memory arguments: not a JSON object ({exc})."
    if not isinstance(args, dict):
        return "Invalid memory arguments: expected a JSON object."
    try:
        size = len(json.dumps(args, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        return "Invalid memory arguments: not JSON-serialisable."
    if size > MAX_ARGS_BYTES:
        return f"Invalid memory arguments: {size:,} bytes is over the {MAX_ARGS_BYTES:,}-byte cap."
    try:
        return MemoryToolArgs.model_validate(args)
    except ValidationError as exc:
        return f"Invalid memory arguments: {describe(exc, root='arguments')}."
