"""Replay: re-apply a slice of the event log to a data dir, and compare the result.

The log holds every write (``memory_write``, and ``entry_edit`` from the
gateway) exactly as it arrived, with where the store applied it among its file's
writes; applying the same events in that order to the same starting files gives
the same bytes. An event delivered twice (a worker that died before its ack, a
re-drive) was applied once, and its records carry the same place: it is replayed
once. Prefetches are replayed as the turn starts they were (each restarts the count
of its turn's failed writes, which the tool's answers quote). That
is how a write path bug is reproduced ("what did these events do?"), and how
files are rebuilt from a backup plus the log. Writes run through the same
manager, store and scanner as in a worker, on an in-memory Redis, so nothing
touches the live service.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import fakeredis

from memsvc.events import EntryEditEvent, Event, InvalidEvent, MemoryWriteEvent, decode
from memsvc.paths import DataLayout, Target
from memsvc.service.eventlog import WRITES, EventLog, LogEntry, stream_position
from memsvc.service.runtime import Runtime
from memsvc.settings import ServiceSettings


def starts_turn(entry: LogEntry) -> bool:
    """A prefetch (not a warm one, made ahead for the next turn) or a session switch that
    resets: it restarts its thread's count of failed writes, which the tool's answers
    quote (after a few, they tell the model to stop). Replayed where it was logged."""
    payload = _payload(entry)
    if entry.type == "prefetch":
        return not payload.get("warm")
    return entry.type == "session_switch" and bool(payload.get("reset"))


@dataclass(frozen=True)
class Slice:
    """Which log entries to replay: stream id or time bounds, and one user or all."""

    start: str = "-"
    end: str = "+"
    since: float | None = None
    until: float | None = None
    user_id: str | None = None

    def wants(self, entry: LogEntry) -> bool:
        return (
            entry.outcome == "ok"
            and (entry.type in WRITES or starts_turn(entry))
            and entry.event is not None
            and self.covers(entry)
        )

    def covers(self, entry: LogEntry) -> bool:
        """Whether the record is of the user and the time asked for."""
        return (
            (self.user_id is None or entry.user_id == self.user_id)
            and (self.since is None or entry.at >= self.since)
            and (self.until is None or entry.at <= self.until)
        )


@dataclass
class ReplayReport:
    events: int = 0
    same_result: int = 0
    too_large: int = 0  # logged without their payload: refused writes, nothing to re-apply
    repeated: int = 0  # a second record of an event replayed already (a redelivery)
    # copies replayed for want of their first run's record, in a log that dropped old
    # records: the first may have been applied before the slice (and be in the base)
    unsure: list[str] = field(default_factory=list)
    different_results: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> same | different | missing
    # records in the slice not in the shape memsvc writes (another release's, one added by
    # hand, damaged), left out: {"stream_id", "why"}
    unreadable: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "same_result": self.same_result,
            "too_large": self.too_large,
            "repeated": self.repeated,
            "unsure": self.unsure,
            "different_results": self.different_results,
            "files": self.files,
            "unreadable": self.unreadable,
        }


async def replay(
    log: EventLog,
    selection: Slice,
    into: Path,
    settings: ServiceSettings,
    *,
    base: Path | None = None,
    compare_with: Path | None = None,
) -> ReplayReport:
    """Apply the selected writes to ``into`` (seeded from ``base``); compare with a live dir."""
    if base is not None:
        shutil.copytree(base, into, dirs_exist_ok=True)
    redis = fakeredis.aioredis.FakeRedis()
    runtime = Runtime(settings.model_copy(update={"data_dir": into}), redis, shared_redis=False)
    report = ReplayReport()
    touched: set[tuple[Target, str, str]] = set()
    wanted: list[LogEntry] = []
    events: dict[str, Event] = {}  # the writes' events, by stream id, as read once
    async for entry in log.entries(start=selection.start, end=selection.end):
        if "unreadable" in entry.detail:
            # a write it would have replayed (as far as its record still says)
            if entry.outcome == "ok" and entry.type in WRITES and selection.covers(entry):
                report.unreadable.append({"stream_id": entry.stream_id, "why": UNREADABLE})
        elif selection.wants(entry):
            read = _read(entry)
            if isinstance(read, str):
                report.unreadable.append({"stream_id": entry.stream_id, "why": read})
                continue
            if read is not None:
                events[entry.stream_id] = read
            wanted.append(entry)
    # a copy of a write whose first run is logged before the slice: in ``base`` already
    replayed, unsure = await _first_runs_before(log, wanted)
    report.unsure = sorted(unsure)
    try:
        for entry in in_applied_order(wanted):
            assert entry.event is not None
            if entry.type not in WRITES:  # a turn's start
                failures = runtime.sessions.failures(entry.user_id, entry.agent_id)
                await failures.reset(entry.thread_id)
                continue
            if entry.event_id in replayed:  # an event delivered twice was applied once
                report.repeated += 1
                continue
            replayed.add(entry.event_id)
            if _truncated(entry):
                report.too_large += 1
                continue
            event = events[entry.stream_id]
            memory = await runtime.memory(event.user_id, event.agent_id)
            if isinstance(event, EntryEditEvent):
                outcome = await memory.manager.builtin.edit_entry(event.payload)
            else:
                assert isinstance(event, MemoryWriteEvent)
                outcome = await memory.manager.memory_write(
                    event.payload.args, thread_id=event.thread_id
                )
            report.events += 1
            logged = entry.detail.get("result")
            if logged == outcome.result:
                report.same_result += 1
            else:
                report.different_results.append(
                    {"event_id": entry.event_id, "logged": logged, "replayed": outcome.result}
                )
            touched.add((outcome.target, event.user_id, event.agent_id))
    finally:
        await runtime.aclose()
        await redis.aclose()
    if compare_with is not None:
        report.files = _compare(DataLayout.at(into), DataLayout.at(compare_with), touched)
    return report


UNREADABLE = "not a record memsvc writes"


def _read(entry: LogEntry) -> Event | str | None:
    """A wanted write's event, or why it cannot be replayed: it is none memsvc would run,
    or names another user, agent, thread or type than the record does (the record's own
    fields are what a slice selects on, so a replay of one user's records never writes
    another user's files). ``None`` for a turn's start (only its record's ids are used)
    and for a write logged without its payload (counted as too large, never applied)."""
    if entry.type not in WRITES or _truncated(entry):
        return None
    # as it was sent: escaped, a text in another script would pass the size an event may have
    raw = json.dumps(entry.event, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        event = decode(raw)
    except InvalidEvent as exc:
        return f"its event cannot be run: {exc.reason}"
    named = (event.type, event.user_id, event.agent_id, event.thread_id)
    if named != (entry.type, entry.user_id, entry.agent_id, entry.thread_id):
        return "its event names another user, agent, thread or type than the record"
    return event


def _truncated(entry: LogEntry) -> bool:
    return _payload(entry).get("truncated") is True


def _payload(entry: LogEntry) -> dict[str, Any]:
    """The logged event's payload, or nothing for a record that holds none fit to read."""
    payload = (entry.event or {}).get("payload")
    return payload if isinstance(payload, dict) else {}


async def _first_runs_before(log: EventLog, wanted: list[LogEntry]) -> tuple[set[str], set[str]]:
    """The copies in ``wanted`` (logged ``repeat``) whose first run's record is older than
    the slice: it was applied before the slice. And those whose first run's record is
    found nowhere before it while the log has dropped old records: unsure. (A copy whose
    first run logged nothing, its worker gone first, is the one record of its write: it
    is replayed.)"""
    first = {entry.event_id for entry in wanted if not entry.detail.get("repeat")}
    copies = [entry for entry in wanted if entry.detail.get("repeat")]
    ids = {entry.event_id for entry in copies} - first
    if not ids:
        return set(), set()
    earliest = min(
        (entry for entry in copies if entry.event_id in ids),
        key=lambda entry: stream_position(entry.stream_id),
    )
    before = await log.first_runs(ids, earliest.stream_id)
    unsure = ids - before if await log.trimmed() else set()
    return before, unsure


def in_applied_order(entries: list[LogEntry]) -> list[LogEntry]:
    """``entries`` (in log order) with each file's writes in the order they were applied.

    The log has a write when its event finished, and writes to one file that ran
    together (batched, or on two workers) can finish in another order than they
    were applied. The writes that reached a file's store are put back in the order
    of the position it recorded, in the places the log gave them, so writes to
    different files stay interleaved as they were. Calls refused before the store
    (bad arguments, a blocked entry, adds that fit no file) have no position and
    keep their places; without a journal nothing has one, and the log order stays.
    """
    slots: dict[tuple[str, ...], list[int]] = {}
    keys: dict[int, tuple[int, int, int]] = {}
    for index, entry in enumerate(entries):
        position = entry.detail.get("position")
        if _is_position(position):
            version, changed, among = position
            # A batch that changed nothing left the version as it was, so its index
            # orders it only within its batch; batches of one version that changed
            # nothing (refusals, one after another) keep the log's order among them.
            keys[index] = (version, changed, among if changed else index)
            slots.setdefault(_file_of(entry), []).append(index)
    ordered = list(entries)
    for indexes in slots.values():
        for index, moved in zip(indexes, sorted(indexes, key=keys.__getitem__), strict=True):
            ordered[index] = entries[moved]
    return ordered


def _is_position(value: object) -> TypeGuard[list[int]]:
    """Where a write stood among its file's writes, as a worker logs it (anything else in
    that place, in a record not written by memsvc, gives it none)."""
    return (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    )


def _file_of(entry: LogEntry) -> tuple[str, ...]:
    target = str(entry.detail.get("target", "memory"))
    if target == "user":
        return (target, entry.user_id)
    return (target, entry.user_id, entry.agent_id)


def _compare(
    replayed: DataLayout, live: DataLayout, touched: set[tuple[Target, str, str]]
) -> dict[str, str]:
    verdicts = {}
    for target, user_id, agent_id in sorted(touched):
        mine = replayed.store_file(target, user_id, agent_id)
        theirs = live.store_file(target, user_id, agent_id)
        name = str(mine.relative_to(replayed.root))
        if not theirs.exists():  # no write made it: the same, unless the replay made it
            verdicts[name] = "missing" if mine.exists() else "same"
        else:
            same = mine.exists() and mine.read_bytes() == theirs.read_bytes()
            verdicts[name] = "same" if same else "different"
    return verdicts
