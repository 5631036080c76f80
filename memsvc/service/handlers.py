"""What a worker does with each event type.

Each handler returns the reply for the waiting caller (if any), the detail for
the event log, and the work to do once the reply is on its way (mirroring a
builtin write). Identity always comes from the envelope.

A person's requests (the gateway's: reading and editing entries, config, status,
search, clearing a bank, explaining an entry) that cannot be granted are
answered with a refusal the client raises as its error
(:func:`memsvc.events.refusal`), not failed and parked as an event no worker
could process.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import structlog
from redis.asyncio.client import Pipeline

from memsvc.builtin.snapshot import ThreadRead
from memsvc.builtin.tool import ToolOutcome
from memsvc.config import MemoryConfig, shown
from memsvc.errors import (
    DependencyUnavailableError,
    InvalidInputError,
    NotFoundError,
    RequestRefusedError,
)
from memsvc.events import (
    BankClearEvent,
    ConfigReadEvent,
    ConfigUpdateEvent,
    EntryEditEvent,
    Event,
    ExplainEvent,
    MemoryReadEvent,
    MemoryWriteEvent,
    PrefetchEvent,
    SearchEvent,
    SessionSwitchEvent,
    SnapshotReloadEvent,
    StatusEvent,
    SyncTurnEvent,
    ToolCallEvent,
    ToolSchemasEvent,
    refusal,
)
from memsvc.hindsight.client import HindsightError
from memsvc.hindsight.provider import HindsightProvider
from memsvc.jobs.payloads import SyncTurnJob
from memsvc.paths import TARGETS
from memsvc.service.explain import explain
from memsvc.service.manager import MemoryManager
from memsvc.service.runtime import Runtime

log = structlog.get_logger(__name__)

RECALL_HITS_SCAN = 1000  # newest log records a status looks through for the latest recall


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
        config = memory.config.config
        switched: dict[str, Any] | None = None
        if isinstance(event, PrefetchEvent):  # its snapshot comes with the thread record
            previous, known, read = await self._enter_thread(
                event, withheld=not config.injection.builtin_shown
            )
            switched = await self._follow_thread(event, manager, previous, known)
            handled = await self._dispatch(event, manager, config, read)
        elif isinstance(event, MemoryWriteEvent | ToolCallEvent | SyncTurnEvent):
            # Nothing these do depends on the thread record, so it is read beside them: a
            # round trip less on a write's path. A switch is followed even if they fail, as
            # their next delivery finds the record already updated.
            entering = asyncio.ensure_future(self._enter_thread(event))
            try:
                handled = await self._dispatch(event, manager, config, None)
            finally:
                previous, known, _ = await entering
                switched = await self._follow_thread(event, manager, previous, known)
        else:
            handled = await self._dispatch(event, manager, config, None)
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
            result = json.loads(text)
            # what the log keeps of it: whether it worked, and why not (not what a recall found)
            kept = {"success": result.get("success")}
            if "error" in result:
                kept["error"] = result["error"]
            return Handled(reply={"result": result}, detail={"result": kept})
        if isinstance(event, ToolSchemasEvent):
            return Handled(reply={"schemas": manager.tool_schemas()})
        if isinstance(event, SyncTurnEvent):
            return await self._sync_turn(event, manager)
        if isinstance(event, SessionSwitchEvent):
            return await self._session_switch(event, manager)
        if isinstance(event, SnapshotReloadEvent):
            snapshot = await manager.builtin.reload(event.thread_id)
            return Handled(reply={"text": snapshot.text, "taken_at": snapshot.taken_at})
        if isinstance(event, EntryEditEvent):
            receipt = self._rt.receipts.for_event(event.user_id, event.id)
            outcome = await manager.builtin.edit_entry(event.payload, receipt=receipt)
            return self._written(event, manager, outcome)
        if isinstance(event, MemoryReadEvent):
            return await self._answer(self._memory_read(manager))
        if isinstance(event, ConfigReadEvent | ConfigUpdateEvent):
            return await self._answer(self._config(event))
        if isinstance(event, StatusEvent):
            return await self._answer(self._status(event, manager))
        if isinstance(event, SearchEvent | BankClearEvent):
            return await self._answer(self._hindsight_request(event, manager))
        if isinstance(event, ExplainEvent):
            return await self._answer(self._explain(event))
        raise AssertionError(f"no handler for {type(event).__name__}")

    async def _answer(self, work: Coroutine[Any, Any, dict[str, Any]]) -> Handled:
        """A person's request: its reply, or a refusal that says why (see the module doc)."""
        try:
            reply = await work
        except HindsightError as exc:
            return self._refused(DependencyUnavailableError(f"Hindsight: {exc.logged()}"))
        except (RequestRefusedError, InvalidInputError) as exc:
            return self._refused(exc)
        return Handled(reply=reply)

    @staticmethod
    def _refused(exc: RequestRefusedError | InvalidInputError) -> Handled:
        reply = refusal(exc)
        return Handled(reply=reply, detail={"refused": reply["refused"]["kind"], "error": str(exc)})

    async def _memory_read(self, manager: MemoryManager) -> dict[str, Any]:
        return {**await manager.builtin.view(), "hindsight_status": _hindsight_status(manager)}

    async def _config(self, event: ConfigReadEvent | ConfigUpdateEvent) -> dict[str, Any]:
        rt = self._rt
        if isinstance(event, ConfigUpdateEvent):
            async with rt.key_locks.hold_key(rt.keys.config_lock(event.user_id)):
                effective = await rt.configs.update_user(event.user_id, event.payload.changes)
                # a client's fallback must not serve a snapshot the user just turned off
                await rt.snapshots.withhold(
                    event.user_id, not effective.config.injection.builtin_shown
                )
        else:
            effective = await rt.configs.effective(event.user_id)  # a broken file: refused
        return shown(
            effective,
            hindsight_url=rt.settings.hindsight_url,
            api_key_from_env=rt.settings.hindsight_api_key is not None,
        )

    async def _status(self, event: StatusEvent, manager: MemoryManager) -> dict[str, Any]:
        hindsight = _hindsight_status(manager)
        if isinstance(manager.external, HindsightProvider):
            hindsight["reachable"] = await manager.external.reachable()
            hindsight["last_recall_hits"] = await self._last_recall_hits(event)
        return {
            "providers": [provider.name for provider in manager.providers],
            "hindsight": hindsight,
            **await self._rt.bus.backlog(),
        }

    async def _last_recall_hits(self, event: StatusEvent) -> int | None:
        """What the agent's latest recall found, from its prefetch's record in the log."""
        entries, _ = await self._rt.log.page(
            lambda entry: (
                entry.type == "prefetch"
                and entry.user_id == event.user_id
                and entry.agent_id == event.agent_id
                and "recall_hits" in entry.detail
            ),
            limit=1,
            scan=RECALL_HITS_SCAN,
        )
        return int(entries[0].detail["recall_hits"]) if entries else None

    async def _hindsight_request(
        self, event: SearchEvent | BankClearEvent, manager: MemoryManager
    ) -> dict[str, Any]:
        external = manager.external
        if not isinstance(external, HindsightProvider):
            raise NotFoundError("Hindsight is not configured for this user")
        if isinstance(event, SearchEvent):
            p = event.payload
            return await external.search(
                p.query, mode=p.mode, scope=p.scope, thread_id=event.thread_id
            )
        await external.clear_bank(event.payload.bank, confirm=event.payload.confirm)
        return {"cleared": event.payload.bank}

    async def _explain(self, event: ExplainEvent) -> dict[str, Any]:
        """The user's own entries only: the envelope names the user, the log and files are read."""
        agent_id = None if event.payload.every_agent else event.agent_id
        found = await explain(
            self._rt, event.payload.text, user_id=event.user_id, agent_id=agent_id
        )
        return found.as_dict()

    async def _enter_thread(
        self,
        event: PrefetchEvent | MemoryWriteEvent | ToolCallEvent | SyncTurnEvent,
        *,
        withheld: bool = False,
    ) -> tuple[str | None, bool, ThreadRead | None]:
        """The event's first round trip: the previous thread, whether this one has a snapshot,
        and for a prefetch that starts a turn, the snapshot itself.

        That prefetch also resets the turn's failure count, records whether the user's
        config ``withheld`` the builtin memory (for a client's fallback), and for a
        thread without a snapshot yet reads the journal heads its files are served
        from, so that taking one costs no further read.
        """
        rt = self._rt
        ids = (event.user_id, event.agent_id, event.thread_id)
        starts_turn = isinstance(event, PrefetchEvent) and not event.payload.warm
        heads = []
        if starts_turn and rt.journal is not None:
            heads = [
                rt.journal.keys_of(target, event.user_id, event.agent_id) for target in TARGETS
            ]
        parsers: list[Callable[[Any], Any]] = []

        def queue(pipe: Pipeline) -> None:  # events entering together share a round trip
            parsers.append(rt.sessions.queue_enter(pipe, *ids))
            if starts_turn:
                parsers.append(rt.snapshots.queue_read(pipe, *ids, heads=heads, withheld=withheld))
                rt.sessions.failures(event.user_id, event.agent_id).queue_reset(
                    pipe, event.thread_id
                )
            else:
                parsers.append(rt.snapshots.queue_known(pipe, *ids))

        results = await rt.commands.execute(queue)
        previous, second = (parse(raw) for parse, raw in zip(parsers, results[:2], strict=True))
        if not starts_turn:
            return previous, second, None
        return previous, second.snapshot is not None, second

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
        detail: dict[str, Any] = {
            "skipped": result.skipped,
            "timings_ms": result.timings_ms,
            "chars": len(result.text),
        }
        if isinstance(manager.external, HindsightProvider):
            hits = manager.external.take_recall_hits(event.thread_id)
            if hits is not None:
                detail["recall_hits"] = hits
        return Handled(reply=reply, detail=detail)

    async def _memory_write(
        self, event: MemoryWriteEvent | ToolCallEvent, manager: MemoryManager, args: Any
    ) -> Handled:
        receipt = self._rt.receipts.for_event(event.user_id, event.id)
        outcome: ToolOutcome = await manager.memory_write(
            args, thread_id=event.thread_id, receipt=receipt
        )
        mirror = not isinstance(event, MemoryWriteEvent) or event.payload.mirror
        return self._written(event, manager, outcome, mirror=mirror)

    def _written(
        self,
        event: MemoryWriteEvent | ToolCallEvent | EntryEditEvent,
        manager: MemoryManager,
        outcome: ToolOutcome,
        *,
        mirror: bool = True,
    ) -> Handled:
        """A write's reply and record; a write that could not be applied now is deferred.

        ``mirror=False``: the external provider does not hear of it (the record says so).
        """
        if outcome.result.get("retryable"):
            # its cause, without the advice to the model (a parked write must not be resent)
            raise WriteDeferred(str(outcome.result.get("error", "not applied")).split(". ")[0])

        follows = mirror and bool(outcome.changes) and manager.external is not None

        async def follow() -> None:
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
                **({} if mirror else {"mirror": False}),
                **({"repeat": True} if outcome.repeat else {}),  # answered from its receipt
            },
            after_reply=[follow] if follows else [],
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
        # named as the turn ledger names the turn: a caller may give its turn's event id,
        # which another user, agent or thread may give as well
        job_id = self._rt.keys.job(
            job.name, event.user_id, event.agent_id, event.thread_id, event.id
        )
        await self._rt.jobs.enqueue(job, job_id=job_id)
        return Handled(detail={"turn_index": index, "queued": job.name})

    async def _session_switch(self, event: SessionSwitchEvent, manager: MemoryManager) -> Handled:
        await self._rt.sessions.enter_thread(event.user_id, event.agent_id, event.thread_id)
        await manager.on_session_switch(
            event.thread_id,
            parent_thread_id=event.payload.parent_thread_id,
            reset=event.payload.reset,
        )
        return Handled(
            reply={},  # a caller that waits learns the switch is applied before its next event
            detail={
                "reset": event.payload.reset,
                "parent_thread_id": event.payload.parent_thread_id,
                "at": time.time(),
            },
        )


def _hindsight_status(manager: MemoryManager) -> dict[str, Any]:
    if isinstance(manager.external, HindsightProvider):
        return manager.external.status()
    return {"enabled": False, "memory_mode": None, "banks": None}
