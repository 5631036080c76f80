"""What the ``memory`` tool answers: the results a model reads to finish or fix a call.

Shapes and wording follow Hermes Agent 0.19.0, so a model that learned them there
reads them here: an error carries what is needed to retry (the current entries,
the usage), and after a few failed consolidations in one turn the answer tells
the model to stop and reply to the user. Entries are shown through the scanner's
sanitiser, so a poisoned entry is never echoed raw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memsvc.builtin.snapshot import usage_figures
from memsvc.paths import Target
from memsvc.store.edits import Applied, Change, EditRejected, Op
from memsvc.store.memfile import char_count

MAX_CONSOLIDATION_FAILURES_PER_TURN = 3
PREVIEW_WIDTH = 80
DUPLICATE = "Entry already exists (no duplicate added)."


def error(message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": message, **extra}


@dataclass(frozen=True)
class FileView:
    """One memory file as a result shows it: by name, against its limit, safe to echo."""

    filename: str
    limit: int
    show: Callable[[list[str]], list[str]]

    def usage(self, entries: list[str], *, percent: bool = False) -> str:
        current = char_count(entries)
        return usage_figures(current, self.limit) if percent else f"{current:,}/{self.limit:,}"


def success(
    view: FileView, target: Target, ops: list[Op], applied: Applied, batch: bool
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "success": True,
        "done": True,
        "target": target,
        "usage": f"{view.usage(applied.entries, percent=True)} chars",
        "entry_count": len(applied.entries),
        "message": _success_message(ops, applied.changes, batch),
    }
    replaced = [c.previous for c in applied.changes if c.action == "replace" and c.previous]
    if replaced:
        shown = view.show(replaced)
        result["replaced"] = shown if batch else shown[0]
    result["note"] = "Write saved. This update is complete — do not repeat it."
    return result


def _success_message(ops: list[Op], changes: list[Change], batch: bool) -> str:
    if batch:
        return f"Applied {len(ops)} operation(s)."
    if not changes and ops[0].action == "add":
        return DUPLICATE
    return {"add": "Entry added.", "replace": "Entry replaced.", "remove": "Entry removed."}[
        ops[0].action
    ]


def needs_old_text(view: FileView, action: str, entries: list[str]) -> dict[str, Any]:
    return error(
        f"'{action}' needs old_text -- a short unique substring of the entry to "
        f"{action}. None was provided. Reissue the {action} with old_text set to part "
        "of one of the current_entries below.",
        current_entries=view.show(entries),
        usage=view.usage(entries),
    )


def busy(view: FileView) -> dict[str, Any]:
    return error(
        f"Memory is busy: another write to {view.filename} is in progress. Nothing was "
        "saved. Retry this call once; if it fails again, continue with your reply.",
        retryable=True,
    )


def parked(cause: str) -> str:
    """What the caller of a write its worker gave up on is told. The write is set aside and
    an operator may re-drive it: it may still be applied, so the caller must not send it
    again (the copy and the re-driven original would both be applied, the second perhaps
    after a later edit of the same entry)."""
    return (
        f"Memory could not save this write ({cause}) and set it aside for an operator, who "
        "may still apply it. Do not send it again; continue with your reply."
    )


def unavailable() -> dict[str, Any]:
    return error(
        "Memory storage is temporarily unavailable. Nothing was saved. Continue with your "
        "reply; the fact can be saved in a later turn.",
        retryable=True,
    )


def gave_up(failures: int) -> dict[str, Any] | None:
    """Past the per-turn cap, the answer that ends the model's retries; else ``None``."""
    if failures <= MAX_CONSOLIDATION_FAILURES_PER_TURN:
        return None
    return {
        "success": False,
        "done": True,
        "error": (
            f"Memory consolidation failed {failures} times this turn. Stop retrying memory "
            "calls — leave memory unchanged for now and continue with your reply to the "
            "user. The fact can be saved in a later turn."
        ),
    }


def rejection(
    view: FileView, rejected: EditRejected, entries: list[str], ops: list[Op], batch: bool
) -> tuple[dict[str, Any], bool]:
    """The error the model reads, and whether it counts against the per-turn cap."""
    op = rejected.op
    shown = view.show(entries)
    usage = view.usage(entries)
    if rejected.kind == "stale":
        assert op.at is not None
        return (
            error(
                f"Entry {op.at.index} of {view.filename} changed since it was read (it no "
                f"longer has hash {op.at.expect}). Nothing was changed: read the entries again.",
                conflict=True,
                current_entries=shown,
                usage=usage,
            ),
            False,
        )
    if rejected.kind == "blocked":
        return (
            error(
                f"Blocked: next to the entries already in {view.filename}, this content "
                f"matches threat pattern '{rejected.matches[0]}'. The system prompt shows "
                "entries side by side, so they must not form instructions together. "
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
                f"{rejected.total:,}/{view.limit:,} chars -- over the limit. Remove or shorten "
                "more entries in the same batch (see current_entries below), then retry."
            )
        else:
            message += " No operations were applied (batch is all-or-nothing)."
        return error(message, current_entries=shown, usage=usage), True
    if rejected.kind == "no_match":
        verb = "replace" if op.action == "replace" else "remove"
        return (
            error(
                f"No entry matched '{op.old_text}'. Check current_entries below and retry "
                f"with the exact text of the entry you want to {verb}.",
                current_entries=shown,
            ),
            True,
        )
    if rejected.kind == "ambiguous":
        previews = [
            e[:PREVIEW_WIDTH] + ("..." if len(e) > PREVIEW_WIDTH else "")
            for e in view.show(rejected.matches)
        ]
        return (
            error(f"Multiple entries matched '{op.old_text}'. Be more specific.", matches=previews),
            False,
        )
    current = char_count(entries)
    if op.action == "add":
        message = (
            f"Memory at {current:,}/{view.limit:,} chars. Adding this entry ({len(op.content)} "
            "chars) would exceed the limit. Consolidate now: use 'replace' to merge "
            "overlapping entries into shorter ones or 'remove' stale or less important "
            "entries (see current_entries below), then retry this add — all in this turn."
        )
    else:
        message = (
            f"Replacement would put memory at {rejected.total:,}/{view.limit:,} chars. Shorten "
            "the new content, or 'remove' other stale or less important entries to make "
            "room (see current_entries below), then retry — all in this turn."
        )
    return error(message, current_entries=shown, usage=usage), True
