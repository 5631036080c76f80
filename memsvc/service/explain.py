"""Explain: the logged writes that added, replaced or removed a memory entry.

Every write's record in the event log (the model's ``memory_write``, a person's
``entry_edit`` through the gateway) keeps the entries it changed (the entry
added, the one a replace overwrote and its successor, the one removed),
so an entry's history is read from the log alone, oldest first, following it
through its replacements. The log is bounded by count and age: an entry written
before its oldest record shows only the steps after it, and an entry that no
record names (older than the log, or written by hand or by Hermes) is named as
such, with the time the log reaches back to. This is what ``memsvc explain`` and
``memsvc replay --explain`` print, and what ``GET /api/memory/v2/explain`` returns.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from memsvc.builtin.schema import target_named
from memsvc.errors import InvalidInputError
from memsvc.ids import validate_id
from memsvc.paths import MEMORY_FILE, USER_FILE, Target
from memsvc.service.eventlog import WRITES, LogEntry
from memsvc.service.replay import in_applied_order
from memsvc.service.runtime import Runtime
from memsvc.store.edits import Action, Change

DEFAULT_AGENT = "default"  # reads USER.md, which every agent of a user shares


def file_name(target: Target, agent_id: str) -> str:
    """A memory file as explain names it, relative to the user's folder."""
    return USER_FILE if target == "user" else f"agents/{agent_id}/{MEMORY_FILE}"


@dataclass(frozen=True)
class Step:
    """One logged write that changed the entry: what it was before and after."""

    event_id: str
    agent_id: str
    thread_id: str
    at: float
    action: Action
    before: str | None
    after: str | None

    def mentions(self, text: str) -> bool:
        return any(text in version for version in (self.before, self.after) if version)


@dataclass
class EntryHistory:
    """An entry from its first logged step; ``now``: its text in the file today, if there."""

    file: str
    steps: list[Step]
    now: str | None = None

    @property
    def reaches_back(self) -> bool:
        """The log holds the write that created it (else it is older than the log)."""
        return self.steps[0].action == "add"


@dataclass(frozen=True)
class LogReach:
    """How far back the log goes for one user: what tells an entry older than the log from
    one it never saw. The count and the time are the user's own records': through the
    log every user shares, one must not watch how busy the others are. What remains
    shared is one bit, whether the log ever dropped a record, and how soon a user's own
    old records leave a log bounded by count, which depends on everyone's volume."""

    records: int  # the user's records in the log
    trimmed: bool  # the log (every user's) has dropped older records, by count or by age
    oldest_at: float | None  # the time of the user's oldest record in it


@dataclass
class Explanation:
    """The histories of the entries that match ``text``, and what the log cannot tell."""

    user_id: str
    agent_id: str | None
    text: str
    reach: LogReach
    entries: list[EntryHistory] = field(default_factory=list)
    unlogged: list[tuple[str, str]] = field(default_factory=list)  # (file, entry) no write names

    def notes(self) -> list[str]:
        """What a reader must know to trust the histories, in plain sentences."""
        notes = []
        if not self.entries and not self.unlogged:
            notes.append(f"No entry and no logged write of {self.user_id} matches {self.text!r}.")
        oldest = _when(self.reach.oldest_at) if self.reach.oldest_at is not None else None
        for history in self.entries:
            if not history.reaches_back:
                first = history.steps[0]
                notes.append(
                    f"{history.file}: the log does not reach back to the write that created "
                    f"this entry; its oldest logged step is the {first.action} at "
                    f"{_when(first.at)}."
                )
        for name, _ in self.unlogged:
            since = f"the log's oldest record of {self.user_id} ({oldest})" if oldest else "it"
            notes.append(
                f"{name} holds a matching entry that no logged write made: it was written "
                f"before {since}, or outside memsvc (by hand, by Hermes)."
            )
        if oldest is None:
            notes.append(f"The event log holds no record of {self.user_id}.")
        elif self.reach.trimmed:
            notes.append(
                f"The log has dropped older records; its oldest of {self.user_id} is from {oldest}."
            )
        else:
            notes.append(f"The log holds every record of {self.user_id} since {oldest}.")
        return notes

    def as_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "text": self.text,
            "entries": [
                {
                    "file": history.file,
                    "now": history.now,
                    "reaches_back": history.reaches_back,
                    "steps": [asdict(step) for step in history.steps],
                }
                for history in self.entries
            ],
            "unlogged": [{"file": name, "entry": entry} for name, entry in self.unlogged],
            "log": asdict(self.reach),
            "notes": self.notes(),
        }

    def lines(self) -> list[str]:
        """For people: each entry, its steps oldest first, then the notes."""
        out = []
        for history in self.entries:
            state = f"now: {history.now!r}" if history.now is not None else "not in the file now"
            out.append(f"{history.file}  ({state})")
            for step in history.steps:
                out.append(
                    f"  {_when(step.at)}  {step.action:<7}  agent {step.agent_id}  "
                    f"thread {step.thread_id}  event {step.event_id}"
                )
                if step.before is not None:
                    out.append(f"      before: {step.before}")
                if step.after is not None:
                    out.append(f"      after:  {step.after}")
        for name, entry in self.unlogged:
            out.append(f"{name}  (now: {entry!r}; no logged write)")
        return out + [f"note: {note}" for note in self.notes()]


def _when(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


class _Histories:
    """Entries followed through the log: by their text while they live, kept once removed."""

    def __init__(self) -> None:
        self.live: dict[str, dict[str, list[Step]]] = {}  # file -> entry text -> its steps
        self.gone: list[EntryHistory] = []

    def follow(self, file: str, change: Change, entry: LogEntry) -> None:
        before, after = {
            "add": (None, change.content),
            "replace": (change.previous, change.content),
            "remove": (change.content, None),
        }[change.action]
        step = Step(
            event_id=entry.event_id,
            agent_id=entry.agent_id,
            thread_id=entry.thread_id,
            at=entry.at,
            action=change.action,
            before=before,
            after=after,
        )
        entries = self.live.setdefault(file, {})
        earlier = entries.pop(before, []) if before is not None else []
        if after is None:
            self.gone.append(EntryHistory(file, [*earlier, step]))
            return
        merged = entries.get(after, [])  # a replace that made two entries equal merges them
        entries[after] = [*sorted([*merged, *earlier], key=lambda s: s.at), step]

    def histories(self) -> Iterable[tuple[str, str | None, list[Step]]]:
        for name, entries in self.live.items():
            for text, steps in entries.items():
                yield name, text, steps
        for history in self.gone:
            yield history.file, None, history.steps


async def explain(
    runtime: Runtime, text: str, *, user_id: str, agent_id: str | None = None
) -> Explanation:
    """The logged history of every entry of ``user_id`` whose text, at any step, holds ``text``.

    ``agent_id`` narrows the search to USER.md and that agent's MEMORY.md; without it
    every agent's MEMORY.md is searched. Reads the log and the files, writes nothing:
    a gateway can call it for the caller's own entries.
    """
    text = text.strip()
    if not text:
        raise InvalidInputError("the text to explain is empty")
    user_id = validate_id("user_id", user_id)
    if agent_id is not None:
        agent_id = validate_id("agent_id", agent_id)
    followed = _Histories()
    seen: set[str] = set()
    agents = {agent_id} if agent_id is not None else set()
    records, oldest_at = 0, None
    writes: list[LogEntry] = []
    async for entry in runtime.log.entries():
        if entry.user_id != user_id:
            continue
        records += 1
        oldest_at = entry.at if oldest_at is None else oldest_at
        if entry.type not in WRITES or entry.outcome != "ok" or not _ours(entry):
            continue
        if entry.event_id in seen:  # a stalled worker's late second record of one write
            continue
        seen.add(entry.event_id)
        target = target_named(entry.detail.get("target"))
        if target == "memory" and agent_id is not None and entry.agent_id != agent_id:
            continue
        if agent_id is None:
            agents.add(entry.agent_id)
        writes.append(entry)
    # writes to one file that ran together can be logged in another order than applied
    for entry in in_applied_order(writes):
        target = target_named(entry.detail.get("target"))
        for change in _changes(entry):
            followed.follow(file_name(target, entry.agent_id), change, entry)
    if agent_id is None:
        agents |= _agents_on_disk(runtime, user_id)
    current = await _current(runtime, user_id, sorted(agents))
    reach = LogReach(records, await runtime.log.trimmed(), oldest_at)
    explanation = Explanation(user_id, agent_id, text, reach)
    explained: set[tuple[str, str]] = set()
    for name, live_text, steps in followed.histories():
        if name not in current:
            continue
        now = live_text if live_text is not None and live_text in current[name] else None
        if any(step.mentions(text) for step in steps):
            explanation.entries.append(EntryHistory(name, steps, now))
        if now is not None:
            explained.add((name, now))
    explanation.entries.sort(key=lambda history: history.steps[0].at)
    explanation.unlogged = [
        (name, entry)
        for name, entries in current.items()
        for entry in entries
        if text in entry and (name, entry) not in explained
    ]
    return explanation


def _ours(entry: LogEntry) -> bool:
    """A write's record as a worker writes it, naming an agent memsvc could have run."""
    if "unreadable" in entry.detail:
        return False
    try:
        validate_id("agent_id", entry.agent_id)
    except InvalidInputError:
        return False
    return True


def _changes(entry: LogEntry) -> list[Change]:
    """The entries a logged write changed. Records from before entries were logged hold
    actions only, and a record not written by memsvc may hold anything: those give none."""
    changes = entry.detail.get("changes")
    if not isinstance(changes, list):
        return []
    return [
        Change.from_dict(change)
        for change in changes
        if isinstance(change, dict)
        and isinstance(change.get("action"), str)
        and isinstance(change.get("content"), str)
        and isinstance(change.get("previous"), str | None)
    ]


def _agents_on_disk(runtime: Runtime, user_id: str) -> set[str]:
    folder = runtime.layout.user_dir(user_id) / "agents"
    if not folder.is_dir():
        return set()
    found = set()
    for child in folder.iterdir():
        try:
            found.add(validate_id("agent_id", child.name))
        except InvalidInputError:  # not a folder memsvc made
            continue
    return found


async def _current(runtime: Runtime, user_id: str, agents: list[str]) -> dict[str, list[str]]:
    """The files' entries as served now (through the store: a lagging file is read right)."""
    first = (await runtime.memory(user_id, agents[0] if agents else DEFAULT_AGENT)).manager
    current = {file_name("user", ""): await first.builtin.store.read("user")}
    for agent in agents:
        manager = (await runtime.memory(user_id, agent)).manager
        current[file_name("memory", agent)] = await manager.builtin.store.read("memory")
    return current
