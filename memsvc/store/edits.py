"""Applying add / replace / remove to a list of entries, with Hermes 0.19.0 semantics.

Pure functions: no I/O, no locks, so the rules can be tested exhaustively.
``replace`` and ``remove`` find their entry by a unique substring; several
matches that are all the same text count as one. The limit is checked on the
state after the operations (after the whole batch for ``operations[]``), except
that removals alone are always allowed (they can only shrink a store that was
over its limit from a hand edit), and a batch is all-or-nothing. A replace that
makes two entries equal merges them, so a store never holds duplicates.

A person's edit (the gateway) names its entry by position instead, with the hash
of the entry as it was read: applied under the writer lock to the file as it is
then, an entry that moved or changed meanwhile is refused (``stale``), never the
wrong one edited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from memsvc.store.memfile import HANDLE_PATTERN, char_count, entry_handle, entry_hash

Action = Literal["add", "replace", "remove"]
RejectKind = Literal[
    "missing_content",
    "missing_old_text",
    "no_match",
    "ambiguous",
    "over_limit",
    "blocked",
    "stale",
]


@dataclass(frozen=True)
class EntryRef:
    """An entry by its position and the hash of the entry as the caller read it."""

    index: int
    expect: str


@dataclass(frozen=True)
class Op:
    """One add, replace or remove, as the tool's arguments give it (or by position: ``at``)."""

    action: Action
    content: str = ""  # stripped
    old_text: str = ""  # stripped
    at: EntryRef | None = None


@dataclass(frozen=True)
class Change:
    """One entry that changed: what a mirror needs to follow the write."""

    action: Action
    content: str  # the new entry (add, replace) or the removed one (remove)
    previous: str | None = None  # the entry a replace overwrote

    def as_dict(self) -> dict[str, str | None]:
        """As receipts and the event log keep it: what explains an entry later."""
        return {"action": self.action, "content": self.content, "previous": self.previous}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Change:
        return cls(data["action"], data["content"], data.get("previous"))


@dataclass(frozen=True)
class Applied:
    """The entries after a list of edits, and what changed (for the mirror and the receipt)."""

    entries: list[str]
    changes: list[Change] = field(default_factory=list)


FilePosition = tuple[int, int, int]


@dataclass(frozen=True)
class Written(Applied):
    """A write as the store applied it: ``position`` orders it among the writes of its file.

    (journal version it was applied on, 1 if its batch committed else 0, its place in
    the batch): writes sorted by it are in the order they were applied, whatever order
    their events finished in. A batch that committed nothing changed no state, so its
    writes come first among those on the same version. ``None`` without a journal.
    """

    position: FilePosition | None = None


class EditRejected(Exception):
    """The operations cannot be applied; nothing changes."""

    def __init__(
        self,
        kind: RejectKind,
        *,
        op_index: int,
        op: Op,
        matches: list[str] | None = None,
        total: int = 0,
    ) -> None:
        super().__init__(kind)
        self.kind = kind
        self.op_index = op_index  # 0-based position in the batch
        self.op = op
        self.matches = matches or []  # the entries (ambiguous) or the findings (blocked)
        self.total = total  # chars after the operations, for over_limit
        # set by the store: the entries the edit was refused against, and where it stood
        # among its file's writes (see :class:`Written`)
        self.against: list[str] | None = None
        self.position: FilePosition | None = None


def _find(entries: list[str], index: int, op: Op) -> int:
    hits = [i for i, entry in enumerate(entries) if op.old_text in entry]
    if not hits and (handle := HANDLE_PATTERN.search(op.old_text)):
        named = f"blocked:{handle.group(1).lower()}"
        hits = [i for i, entry in enumerate(entries) if entry_handle(entry) == named]
    if not hits:
        raise EditRejected("no_match", op_index=index, op=op)
    if len({entries[i] for i in hits}) > 1:
        raise EditRejected("ambiguous", op_index=index, op=op, matches=[entries[i] for i in hits])
    return hits[0]


def _at(entries: list[str], index: int, op: Op) -> int:
    assert op.at is not None
    position = op.at.index
    if position >= len(entries) or entry_hash(entries[position]) != op.at.expect:
        raise EditRejected("stale", op_index=index, op=op)
    return position


def _apply_one(working: list[str], index: int, op: Op) -> Change | None:
    if op.action == "add":
        if not op.content:
            raise EditRejected("missing_content", op_index=index, op=op)
        if op.content in working:
            return None  # an exact duplicate is a successful no-op
        working.append(op.content)
        return Change("add", op.content)
    if not op.old_text and op.at is None:
        raise EditRejected("missing_old_text", op_index=index, op=op)
    if op.action == "replace" and not op.content:
        raise EditRejected("missing_content", op_index=index, op=op)
    position = _find(working, index, op) if op.at is None else _at(working, index, op)
    previous = working[position]
    if op.action == "remove":
        working.pop(position)
        return Change("remove", previous)
    if op.content == previous:
        return None
    if op.content in working:
        working.pop(position)
    else:
        working[position] = op.content
    return Change("replace", op.content, previous=previous)


def apply(entries: list[str], ops: list[Op], limit: int) -> Applied:
    """Apply ``ops`` in order; raise :class:`EditRejected` and change nothing on failure."""
    working = list(entries)
    changes = [c for i, op in enumerate(ops) if (c := _apply_one(working, i, op)) is not None]
    total = char_count(working)
    if total > limit and any(op.action != "remove" for op in ops):
        raise EditRejected("over_limit", op_index=len(ops) - 1, op=ops[-1], total=total)
    return Applied(entries=working, changes=changes)
