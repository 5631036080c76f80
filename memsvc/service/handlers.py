"""What a worker does with each event type.

Each handler returns the reply for the waiting caller (if any), the detail for
the event log, and the work to do once the reply is on its way (mirroring a
builtin write). Identity always comes from the envelope.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from memsvc.builtin.snapshot import ThreadRead
from memsvc.builtin.tool import ToolOutcome
from memsvc.config import MemoryConfig
from memsvc.events import (
    Event,
    MemoryWriteEvent,
    PrefetchEvent,
    SessionSwitchEvent,
    SnapshotReloadEvent,
    SyncTurnEvent,
    ToolCallEvent,
    ToolSchemasEvent,
)
from memsvc.jobs.payloads import SyncTurnJob
from memsvc.paths import TARGETS
from memsvc.service.manager import MemoryManager
from memsvc.service.runtime import Runtime

log = structlog.get_logger(__name__)


class WriteDeferred(Exception):
    """A write that could not be applied now (a busy file, a lost lease, the lock service
    unreachable): the event is delivered again instead of answered, so a write the caller
    was told is queued is applied, or parked with its error after ``max_deliveries``."""


@dataclass
class Handled:
    reply: dict[str, Any] | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    after_reply: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


class EventHandlers:
    """What a worker does with each event type, and the reply it sends."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    async def handle(self, event: Event) -> Handled:
        memory = await self._rt.memory(event.user_id, event.agent_id)
        manager = memory.manager
        switched: dict[str, Any] | None = None
        read: ThreadRead | None = None
        if isinstance(event, PrefetchEvent | MemoryWriteEvent | ToolCallEvent | SyncTurnEvent):
            previous, known, read = await self._enter_thread(event)
            switched = await self._follow_thread(event, manager, previous, known)
        handled = await self._dispatch(event, manager, memory.config.config, read)
        if switched is not None:
            handled.detail["session_switch"] = switched
        if problems := memory.config.problems:  # served without a broken override file
            handled.detail["config_problems"] = list(problems)
            if handled.reply is not None and "skipped" in handled.reply:
                handled.reply["skipped"]["config"] = "; ".join(problems)
        return handled

    async def _dispatch(
        self, event: Event, manager: MemoryManager, config: MemoryConfig, read: ThreadRead | None
    ) -> Handled:
        if isinstance(event, PrefetchEvent):
            return await self._prefetch(event, manager, config, read)
        if isinstance(event, MemoryWriteEvent):
            return await self._memory_write(event, manager, event.payload.args)
        if isinstance(event, ToolCallEvent):
            text = await manager.handle_tool_call(
                event.payload.name, event.payload.args, thread_id=event.thread_id
            )
            return Handled(reply={"result": json.loads(text)})
        if isinstance(event, ToolSchemasEvent):
            return Handled(reply={"schemas": manager.tool_schemas()})
        if isinstance(event, SyncTurnEvent):
            return await self._sync_turn(event, manager)
        if isinstance(event, SessionSwitchEvent):
            return await self._session_switch(event, manager)
        if isinstance(event, SnapshotReloadEvent):
            snapshot = await manager.builtin.reload(event.thread_id)
            return Handled(reply={"text": snapshot.text, "taken_at": snapshot.taken_at})
        raise AssertionError(f"no handler for {type(event).__name__}")

    async def _enter_thread(
        self,
        event: PrefetchEvent | MemoryWriteEvent | ToolCallEvent | SyncTurnEvent,
    ) -> tuple[str | None, bool, ThreadRead | None]:
        """The event's first round trip: the previous thread, whether this one has a snapshot,
        and for a prefetch that starts a turn, the snapshot itself.

        That prefetch also resets the turn's failure count, and for a thread without a
        snapshot yet reads the journal heads its files are served from, so that taking
        one costs no further read.
        """
        rt = self._rt
        ids = (event.user_id, event.agent_id, event.thread_id)
        starts_turn = isinstance(event, PrefetchEvent) and not event.payload.warm
        heads = []
        if starts_turn and rt.journal is not None:
            heads = [
                rt.journal.keys_of(target, event.user_id, event.agent_id) for target in TARGETS
            ]
        async with rt.redis.pipeline(transaction=False) as pipe:
            previous_of = rt.sessions.queue_enter(pipe, *ids)
            if not starts_turn:
                known_of = rt.snapshots.queue_known(pipe, *ids)
                previous, known = await pipe.execute()
                return previous_of(previous), known_of(known), None
            read_of = rt.snapshots.queue_read(pipe, *ids, heads=heads)
            rt.sessions.failures(event.user_id, event.agent_id).queue_reset(pipe, event.thread_id)
            previous, raw, _ = await pipe.execute()
        read = read_of(raw)
        return previous_of(previous), read.snapshot is not None, read

    async def _follow_thread(
        self,
        event: PrefetchEvent | MemoryWriteEvent | ToolCallEvent | SyncTurnEvent,
        manager: MemoryManager,
        previous: str | None,
        resumed: bool,
    ) -> dict[str, Any] | None:
        """An agent that shows up in another thread has switched sessions.

        A thread seen before (it has a snapshot) is resumed as it was; a new one
        takes its own snapshot on its first prefetch. Nothing is dropped: an agent
        may serve several threads at once, and another worker may be taking the
        new thread's snapshot right now. The providers hear of the switch (the
        threads left behind get their buffered turns retained).
        """
        if previous is None or previous == event.thread_id:
            return None
        await manager.on_session_switch(event.thread_id, reset=False)
        log.info(
            "session_switch_detected",
            user_id=event.user_id,
            agent_id=event.agent_id,
            thread_id=event.thread_id,
            previous=previous,
            resumed=resumed,
        )
        return {"detected": True, "previous": previous, "resumed": resumed}

    async def _prefetch(
        self,
        event: PrefetchEvent,
        manager: MemoryManager,
        config: MemoryConfig,
        read: ThreadRead | None,
    ) -> Handled:
        if event.payload.warm:
            await manager.queue_prefetch_all(event.payload.query, thread_id=event.thread_id)
            return Handled(detail={"warm": True})
        result = await manager.prefetch_all(
            event.payload.query,
            thread_id=event.thread_id,
            injection=config.injection,
            builtin_read=read,
        )
        reply = {
            "text": result.text,
            "blocks": result.blocks,
            "skipped": result.skipped,
            "timings_ms": result.timings_ms,
            # what a client that streams the model's output to a person should strip
            "scrub_tag": config.injection.context_tag
            if config.security.streaming_scrubber
            else None,
        }
        return Handled(
            reply=reply,
            detail={
                "skipped": result.skipped,
                "timings_ms": result.timings_ms,
                "chars": len(result.text),
            },
        )

    async def _memory_write(
        self, event: MemoryWriteEvent | ToolCallEvent, manager: MemoryManager, args: Any
    ) -> Handled:
        receipt = self._rt.receipts.for_event(event.user_id, event.id)
        outcome: ToolOutcome = await manager.memory_write(
            args, thread_id=event.thread_id, receipt=receipt
        )
        if outcome.result.get("retryable"):
            raise WriteDeferred(outcome.result.get("error", "not applied"))

        async def mirror() -> None:
            await manager.mirror(outcome, thread_id=event.thread_id, event_id=event.id)

        reply: dict[str, Any] = (
            {"result": outcome.result} if isinstance(event, ToolCallEvent) else outcome.result
        )
        return Handled(
            reply=reply,
            detail={
                "result": outcome.result,
                "changes": [change.as_dict() for change in outcome.changes],  # for explain
                "target": outcome.target,
                **({"position": list(outcome.position)} if outcome.position else {}),  # replay
            },
            after_reply=[mirror] if outcome.changes and manager.external is not None else [],
        )

    async def _sync_turn(self, event: SyncTurnEvent, manager: MemoryManager) -> Handled:
        index = await self._rt.sessions.turn_index(
            event.user_id, event.agent_id, event.thread_id, event.id, event.payload.turn_index
        )
        if manager.external is None or self._rt.jobs is None:
            await manager.sync_turn_all(
                event.payload.user_content,
                event.payload.assistant_content,
                thread_id=event.thread_id,
                turn_index=index,
                at=event.ts,
            )
            return Handled(detail={"turn_index": index})
        job = SyncTurnJob(
            user_id=event.user_id,
            agent_id=event.agent_id,
            thread_id=event.thread_id,
            turn_index=index,
            event_id=event.id,
            at=event.ts,
            user_content=event.payload.user_content,
            assistant_content=event.payload.assistant_content,
        )
        await self._rt.jobs.enqueue(job, job_id=self._rt.keys.job(job.name, event.id))
        return Handled(detail={"turn_index": index, "queued": job.name})

    async def _session_switch(self, event: SessionSwitchEvent, manager: MemoryManager) -> Handled:
        await self._rt.sessions.enter_thread(event.user_id, event.agent_id, event.thread_id)
        await manager.on_session_switch(
            event.thread_id,
            parent_thread_id=event.payload.parent_thread_id,
            reset=event.payload.reset,
        )
        return Handled(
            detail={
                "reset": event.payload.reset,
                "parent_thread_id": event.payload.parent_thread_id,
                "at": time.time(),
            }
        )
