"""``MemoryClient``: what an agent process imports.

```python
async with MemoryClient(redis_url="redis://...") as mem:   # or MemoryClient.from_env()
    ctx = await mem.prefetch(user_id, agent_id, thread_id, query="...")
    system_prompt += ctx.text
    result = await mem.call_tool(user_id, agent_id, thread_id, "memory", args)
    await mem.sync_turn(user_id, agent_id, thread_id, user_content=..., assistant_content=...)
```

Every call is one event on the bus. ``sync_turn`` and ``session_switch`` return
once the event is in Redis. ``prefetch`` and ``call_tool`` wait for the worker's
reply, pushed to this process's inbox, until a deadline: a prefetch that misses
it returns the thread's frozen snapshot if one exists and says what was
skipped; it never raises because a provider is slow or down. Without a Redis
URL the client runs an embedded worker in this process.

Every call is bounded, also when Redis refuses or stops answering:
``prefetch`` and ``call_tool`` answer within their deadline with a result that
says what happened; the other calls raise :class:`MemoryUnavailableError`
(see :mod:`memsvc.errors`) within their deadline or ``MEMSVC_REDIS_TIMEOUT_SECONDS``.

The DeerFlow V2 methods (``get_memory``, ``add_memory_entry``,
``replace_memory_entry``, ``remove_memory_entry``, ``get_memory_config``,
``search_memory``, and the config, status, bank, explain and log calls beside
them) are a person's view of the same memory, as the gateway serves it: each
returns the body of its route and raises the error its refusal stands for
(:class:`ConflictError` for an entry that changed since it was read, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

import structlog
from pydantic import ValidationError
from redis.asyncio import Redis
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memsvc.builtin.snapshot import WITHHELD, RedisSnapshotCache
from memsvc.errors import (
    ClientStateError,
    ConflictError,
    InvalidInputError,
    MemoryMisconfiguredError,
    MemoryServiceError,
    MemoryUnavailableError,
    WritePendingError,
    WriteRefusedError,
)
from memsvc.events import (
    MEMORY_TOOL,
    BankClearEvent,
    BankClearPayload,
    ConfigReadEvent,
    ConfigUpdateEvent,
    ConfigUpdatePayload,
    EntryEditEvent,
    EntryEditPayload,
    ExplainEvent,
    ExplainPayload,
    MemoryReadEvent,
    MemoryWriteEvent,
    MemoryWritePayload,
    PrefetchEvent,
    PrefetchPayload,
    SearchEvent,
    SearchPayload,
    SessionSwitchEvent,
    SessionSwitchPayload,
    SnapshotReloadEvent,
    StatusEvent,
    SyncTurnEvent,
    SyncTurnPayload,
    ToolCallEvent,
    ToolCallPayload,
    ToolSchemasEvent,
    refused,
    stamp,
    validate_event_id,
)
from memsvc.ids import DEFAULT_AGENT, DEFAULT_THREAD, validate_id, validate_optional_id
from memsvc.keys import Keys
from memsvc.logs import keep_stdout_free
from memsvc.outbox import Outbox
from memsvc.redisconn import (
    REDIS_DOWN,
    Outage,
    SentThenLost,
    cancel_and_wait,
    connect,
    lasting_refusal,
)
from memsvc.security.scrubber import DEFAULT_CONTEXT_TAG, StreamingScrubber
from memsvc.service.bus import EventBus
from memsvc.service.eventlog import PAGE_TOKEN, EventLog, LogEntry
from memsvc.settings import ServiceSettings
from memsvc.store.receipts import Receipts
from memsvc.validation import describe

__all__ = [
    "ClientStateError",
    "ConflictError",
    "MemoryClient",
    "MemoryHTTPClient",
    "MemoryMisconfiguredError",
    "MemoryServiceError",
    "MemoryUnavailableError",
    "PrefetchContext",
    "WritePendingError",
    "WriteRefusedError",
]

if TYPE_CHECKING:
    from memsvc.gateway.http_client import MemoryHTTPClient
    from memsvc.service.embedded import EmbeddedService

log = structlog.get_logger(__name__)

# A prefetch keeps this share of its deadline (at most FALLBACK_MAX_SECONDS) to read the
# frozen snapshot when no reply came, so that even the fallback ends within the deadline.
FALLBACK_SHARE, FALLBACK_MAX_SECONDS = 0.1, 0.1
BUILTIN_BLOCK = "builtin"  # the builtin provider's block of a prefetch reply
# How a tool result begins when the worker failed the call (not a verdict on its arguments).
SERVICE_ERROR = "Memory service error"
# what a degraded prefetch says of Redis refusing memsvc: Redis' own words (a user, its
# rights) are logged, not handed to whoever reads the context (a gateway's caller)
REFUSED = "Redis refuses memsvc; an operator must fix its access"
# What a tool call answers when the service did not take it: the model reads it and goes on.
TOOL_UNAVAILABLE: dict[str, Any] = {
    "success": False,
    "retryable": True,
    "error": "Memory is unavailable right now. Nothing was saved. Continue with your reply; "
    "the fact can be saved in a later turn.",
}
# What a tool call answers when Redis refuses memsvc until an operator acts.
TOOL_MISCONFIGURED: dict[str, Any] = {
    "success": False,
    "retryable": False,
    "error": "Memory is not set up correctly (an operator must fix it). Nothing was saved. "
    "Continue with your reply.",
}


def misconfigured(result: dict[str, Any]) -> bool:
    """Whether a tool result says Redis refuses the service (:data:`TOOL_MISCONFIGURED`)."""
    return result == TOOL_MISCONFIGURED


LOG_SCAN = 5000  # log records one page of a user's log looks through at most
MAX_LOG_PAGE = 200
# '+', a stream id (its parts are below 2**64) or a page token (see EventLog.user_page)
LOG_CURSOR = re.compile(rf"\+|[0-9]{{1,19}}-[0-9]{{1,19}}|{PAGE_TOKEN.pattern}")


@dataclass(frozen=True)
class PrefetchContext:
    """What to inject this turn; ``degraded`` when the worker did not answer in time."""

    text: str
    blocks: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    degraded: bool = False
    scrub_tag: str | None = DEFAULT_CONTEXT_TAG  # None: the user's config turned scrubbing off

    @property
    def snapshot(self) -> str:
        """The builtin block: frozen for the thread, so it belongs in the system prompt."""
        return self.blocks.get(BUILTIN_BLOCK, "")

    @property
    def recall(self) -> str:
        """The other providers' blocks (Hindsight's ``<memory-context>``), new every turn: they
        belong with this turn's user message, not in a prompt prefix meant to stay cached."""
        return "\n\n".join(
            text for name, text in self.blocks.items() if name != BUILTIN_BLOCK and text
        )

    def scrubber(self) -> StreamingScrubber | None:
        """A scrubber for this turn's streamed output (recalled memory never shown verbatim)."""
        return StreamingScrubber(self.scrub_tag) if self.scrub_tag else None


class ClientState(enum.Enum):
    """Where a client is in its life: a call is valid only while ``OPENED``."""

    UNOPENED = "unopened"
    OPENED = "opened"
    CLOSED = "closed"


class MemoryClient:
    """The agent side of memsvc: publishes events and waits for their replies.

    Use it as ``async with MemoryClient(...) as mem``: entering connects (or, without a
    Redis URL, starts an embedded worker) and starts the inbox listener, leaving closes
    what it opened. A client is opened once; a call outside the block raises
    :class:`ClientStateError`. A ``redis`` passed in stays the caller's to close.
    """

    def __init__(
        self,
        redis_url: str | None = None,
        *,
        settings: ServiceSettings | None = None,
        redis: Redis | None = None,
    ) -> None:
        keep_stdout_free()
        self._settings = settings or ServiceSettings()
        self._url = redis_url if redis_url is not None else self._settings.redis_url
        self._redis = redis
        self._embedded: EmbeddedService | None = None
        self._keys = Keys(self._settings.key_prefix)
        self._inbox = self._keys.inbox(uuid.uuid4().hex)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        # what Redis said when it last refused to let this client read its replies, for good
        self._inbox_refused: RedisError | None = None
        self._listener: asyncio.Task[None] | None = None
        # set when Redis takes a request: a listener backing off from an outage reads at once
        self._redis_back = asyncio.Event()
        self._outbox: Outbox | None = None
        self._owns_redis = redis is None
        self._state = ClientState.UNOPENED

    @classmethod
    def from_env(cls) -> MemoryClient:
        """Configured by ``MEMSVC_*``; embedded when ``MEMSVC_REDIS_URL`` is unset."""
        return cls(settings=ServiceSettings())

    @property
    def settings(self) -> ServiceSettings:
        return self._settings

    @property
    def embedded(self) -> EmbeddedService | None:
        return self._embedded

    @property
    def inbox_refusal(self) -> RedisError | None:
        """What Redis said when it refused, for good, to let this client read its replies
        (credentials, an ACL); None once a read goes through again."""
        return self._inbox_refused

    @property
    def bus(self) -> EventBus:
        """The bus this client publishes on: its backlog and live workers, for operators."""
        self._require_open()
        return self._bus

    async def __aenter__(self) -> MemoryClient:
        if self._state is not ClientState.UNOPENED:
            raise ClientStateError(f"this MemoryClient is {self._state.value}; open a new one")
        self._state = ClientState.OPENED
        if self._redis is None:
            if self._url:
                self._redis = connect(self._url, self._settings)
            else:  # the whole worker side, loaded only when this process is to run it
                from memsvc.service.embedded import EmbeddedService

                self._embedded = EmbeddedService(self._settings)
                self._redis = await self._embedded.start()
        self._bus = EventBus(self._redis, self._keys, EventLog(self._redis, self._keys))
        self._outbox = Outbox(self._bus, timeout=self._settings.redis_timeout_seconds)
        self._snapshots = RedisSnapshotCache(self._redis, self._keys)
        self._listener = asyncio.create_task(self._listen())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def unconfirmed(self) -> list[str]:
        """The event ids of writes answered as pending that were given up unconfirmed when
        the client closed: each may have reached Redis, or not (the event log tells)."""
        return [] if self._outbox is None else list(self._outbox.given_up)

    async def aclose(self) -> None:
        """Close; writes still waiting for Redis to confirm them get up to
        ``MEMSVC_REDIS_TIMEOUT_SECONDS`` first (see :mod:`memsvc.outbox`)."""
        if self._outbox is not None:
            await self._outbox.close(grace=self._settings.redis_timeout_seconds)
        self._state = ClientState.CLOSED
        if self._listener is not None:
            await cancel_and_wait(self._listener)
            self._listener = None
        if self._embedded is not None:
            await self._embedded.stop()
            self._embedded = None
        elif self._redis is not None and self._owns_redis:
            await self._redis.aclose()

    # -- the agent's calls --------------------------------------------------------

    async def prefetch(
        self,
        user_id: str,
        agent_id: str,
        thread_id: str,
        query: str = "",
        *,
        deadline: float | None = None,
    ) -> PrefetchContext:
        """The memory to inject before this turn's model call."""
        seconds = self._settings.prefetch_deadline_seconds if deadline is None else deadline
        ends = time.monotonic() + seconds
        event = PrefetchEvent(
            **self._envelope(user_id, agent_id, thread_id, seconds),
            payload=_valid(PrefetchPayload, query=query),
        )
        try:
            reply = await self._request(
                event, seconds - min(seconds * FALLBACK_SHARE, FALLBACK_MAX_SECONDS)
            )
        except MemoryUnavailableError as exc:
            return await self._fallback(event, str(exc), ends)
        except MemoryMisconfiguredError as exc:
            log.error("prefetch_refused", error=str(exc))
            said = f"{REFUSED} (the request was sent)" if exc.sent else REFUSED
            return await self._fallback(event, said, ends)
        if reply is None:
            return await self._fallback(event, f"no reply within {seconds:g}s", ends)
        if not reply.get("ok", False):
            return await self._fallback(event, str(reply.get("error", "worker error")), ends)
        return PrefetchContext(
            text=reply["text"],
            blocks=reply.get("blocks", {}),
            skipped=reply.get("skipped", {}),
            timings_ms=reply.get("timings_ms", {}),
            scrub_tag=reply.get("scrub_tag"),
        )

    async def queue_prefetch(
        self, user_id: str, agent_id: str, thread_id: str, query: str = ""
    ) -> None:
        """Ask the worker to prepare the next turn's context; returns at once.

        Raises :class:`MemoryUnavailableError` when Redis does not take the event.
        """
        event = PrefetchEvent(
            **self._envelope(user_id, agent_id, thread_id, None, reply=False),
            payload=_valid(PrefetchPayload, query=query, warm=True),
        )
        await self._publish(event)

    async def call_tool(
        self,
        user_id: str,
        agent_id: str,
        thread_id: str,
        name: str,
        args: dict[str, Any],
        *,
        deadline: float | None = None,
        mirror: bool = True,
    ) -> dict[str, Any]:
        """Run a memory tool; returns its result (the dict the model reads).

        ``mirror=False``: a ``memory`` write the external provider does not follow (a
        migration that keeps Hindsight out, or mirrors its entries itself); other tools
        ignore it.
        """
        seconds = self._settings.tool_deadline_seconds if deadline is None else deadline
        envelope = self._envelope(user_id, agent_id, thread_id, seconds)
        event: MemoryWriteEvent | ToolCallEvent
        try:
            if name == MEMORY_TOOL:
                payload = MemoryWritePayload(args=args, mirror=mirror)
                event = MemoryWriteEvent(**envelope, payload=payload)
            else:
                event = ToolCallEvent(**envelope, payload=ToolCallPayload(name=name, args=args))
        except ValidationError as exc:  # the model's arguments: it gets a result to act on
            return invalid_tool_args(name, describe(exc, root="args"))
        write = isinstance(event, MemoryWriteEvent)
        unconfirmed = f"Memory did not confirm within {seconds:g}s"
        try:
            # a memory write answered as queued is published until Redis takes it: its
            # event id makes a second copy harmless (another tool's call is not kept)
            reply = await self._request(event, seconds, keep=write)
        except MemoryUnavailableError as exc:
            if isinstance(exc.__cause__, SentThenLost):  # not a write: it may have run
                return _unconfirmed(event.id, "Memory lost the connection after the call left")
            return dict(TOOL_UNAVAILABLE)
        except MemoryMisconfiguredError as exc:
            log.error("memory_misconfigured", tool=name, error=str(exc))
            if not exc.sent:
                return dict(TOOL_MISCONFIGURED)
            reply = None  # sent, and its answer cannot be read: as if none came in time
            unconfirmed = "Memory cannot read its answer (an operator must fix it)"
        except InvalidInputError as exc:  # arguments too big for an event: nothing was sent
            return invalid_tool_args(name, str(exc))
        if reply is None and not write:
            return _unconfirmed(event.id, unconfirmed)
        if reply is None:
            return {
                "success": False,
                "pending": True,
                "event_id": event.id,
                "error": (
                    f"{unconfirmed}. The call is queued: it will be applied once (retried "
                    "while the file is busy), or its failure recorded; do not repeat it in "
                    "this turn."
                ),
            }
        if not reply.get("ok", False):
            return {"success": False, "error": f"{SERVICE_ERROR}: {reply.get('error')}"}
        result = reply if isinstance(event, MemoryWriteEvent) else reply.get("result", {})
        return {k: v for k, v in result.items() if k not in ("id", "ok")}

    async def write_outcome(self, user_id: str, event_id: str) -> dict[str, Any] | None:
        """How a ``memory`` call answered as pending ended: its result once it was applied
        or refused (``parked: true`` when it was given up on), ``None`` while it is queued."""
        self._require_open()
        assert self._redis is not None
        receipts = Receipts(self._redis, self._keys)
        with _redis_read():
            receipt = await receipts.for_event(validate_id("user_id", user_id), event_id).load()
        return None if receipt is None else receipt.result

    async def tool_schemas(
        self, user_id: str, agent_id: str, *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """OpenAI function schemas of the tools this user's agent may call.

        Raises :class:`MemoryUnavailableError` when Redis or the workers do not answer
        within the deadline, :class:`MemoryServiceError` when the worker fails.
        """
        seconds = self._seconds(deadline)
        event = ToolSchemasEvent(**self._envelope(user_id, agent_id, DEFAULT_THREAD, seconds))
        schemas: list[dict[str, Any]] = (await self._ask(event, seconds))["schemas"]
        return schemas

    async def sync_turn(
        self,
        user_id: str,
        agent_id: str,
        thread_id: str,
        *,
        user_content: str,
        assistant_content: str,
        turn_index: int | None = None,
        event_id: str | None = None,
    ) -> str:
        """Record a finished turn; returns the event id once it is durably in Redis.

        ``turn_index`` (1-based) is the agent's own numbering of the thread's turns;
        without it turns are numbered in the order they are processed. ``event_id``:
        the caller's own id for the turn (8 to 64 letters, digits, ``_`` or ``-``), for
        a caller that may send the turn again when it could not tell whether it was
        taken: the copies are recorded once. An id names one turn of its thread: a turn
        sent under an id the thread has had is taken for a copy (its text is not
        compared). Raises
        :class:`MemoryUnavailableError` when Redis does not take the event (sending it
        again is safe), :class:`WritePendingError` (one of those) when it may have:
        it is kept and published until Redis confirms it, and recorded once, so it must
        not be sent again; :class:`InvalidInputError` when the turn is not one an event
        can carry (over the caps, or over ``MAX_EVENT_BYTES`` in UTF-8).
        """
        envelope = self._envelope(user_id, agent_id, thread_id, None, reply=False)
        if event_id is not None:
            envelope["id"] = validate_event_id(event_id)
        event = SyncTurnEvent(
            **envelope,
            payload=_valid(
                SyncTurnPayload,
                user_content=user_content,
                assistant_content=assistant_content,
                turn_index=turn_index,
            ),
        )
        order = (
            None
            if turn_index is not None
            else self._keys.turn_queue(event.user_id, event.agent_id, event.thread_id)
        )
        await self._publish(event, order=order, keep=True)  # the turn ledger: once by id
        return event.id

    async def session_switch(
        self,
        user_id: str,
        agent_id: str,
        new_thread_id: str,
        *,
        parent_thread_id: str = "",
        reset: bool = True,
        deadline: float | None = None,
    ) -> str:
        """The agent moved to ``new_thread_id``; returns the event id once a worker applied it,
        or once the deadline has passed with the switch in Redis (logged
        ``session_switch_unconfirmed``: a worker applies it later).

        It waits so that the thread's next events find it applied: a prefetch published
        right after a switch that only sat in Redis could be taken by another worker
        first, and freeze the files where the switch meant the parent's snapshot (or
        keep the snapshot a reset meant to drop). Raises :class:`MemoryUnavailableError`
        when Redis does not take the event.
        """
        seconds = self._seconds(deadline)
        event = SessionSwitchEvent(
            **self._envelope(user_id, agent_id, new_thread_id, seconds),
            payload=SessionSwitchPayload(
                parent_thread_id=validate_optional_id("thread_id", parent_thread_id), reset=reset
            ),
        )
        reply = await self._request(event, seconds, must_land=True)
        if reply is None:
            log.warning("session_switch_unconfirmed", event_id=event.id, seconds=seconds)
        else:
            self._answered(reply, seconds)
        return event.id

    async def reload_snapshot(
        self, user_id: str, agent_id: str, thread_id: str, *, deadline: float | None = None
    ) -> str:
        """Refresh the thread's frozen snapshot from the files now; returns the new text.

        Raises :class:`MemoryUnavailableError` when Redis or the workers do not answer
        within the deadline, :class:`MemoryServiceError` when the worker fails.
        """
        seconds = self._seconds(deadline)
        event = SnapshotReloadEvent(**self._envelope(user_id, agent_id, thread_id, seconds))
        text: str = (await self._ask(event, seconds))["text"]
        return text

    # -- a person's view: the DeerFlow V2 methods ------------------------------------

    async def get_memory(
        self, user_id: str, agent_id: str = DEFAULT_AGENT, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """Both files as a person sees them: ``user_md`` and ``memory_md`` (entries with their
        ``index`` and ``hash``, blocked ones as placeholders), ``char_usage``,
        ``last_modified`` and ``hindsight_status``."""
        seconds = self._seconds(deadline)
        event = MemoryReadEvent(**self._envelope(user_id, agent_id, DEFAULT_THREAD, seconds))
        return await self._ask(event, seconds)

    async def add_memory_entry(
        self,
        user_id: str,
        agent_id: str,
        target: str,
        content: str,
        *,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Add an entry as the ``memory`` tool would; returns the tool's result.

        Raises :class:`WriteRefusedError` (its ``detail`` is the result) when the tool
        refuses it, :class:`WritePendingError` when it was queued but not confirmed (or
        set aside for an operator, who may still apply it).
        """
        edit = _valid(EntryEditPayload, target=target, action="add", content=content)
        return await self._edit(user_id, agent_id, edit, deadline)

    async def replace_memory_entry(
        self,
        user_id: str,
        agent_id: str,
        target: str,
        index: int,
        content: str,
        *,
        expect: str,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Replace the entry at ``index``, which must still have the hash ``expect``.

        Raises :class:`ConflictError` when it changed since it was read (nothing is
        edited), and what :meth:`add_memory_entry` raises.
        """
        edit = _valid(
            EntryEditPayload,
            target=target,
            action="replace",
            content=content,
            index=index,
            expect=expect,
        )
        return await self._edit(user_id, agent_id, edit, deadline)

    async def remove_memory_entry(
        self,
        user_id: str,
        agent_id: str,
        target: str,
        index: int,
        *,
        expect: str,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Remove the entry at ``index``, which must still have the hash ``expect``."""
        edit = _valid(EntryEditPayload, target=target, action="remove", index=index, expect=expect)
        return await self._edit(user_id, agent_id, edit, deadline)

    async def get_memory_config(
        self, user_id: str, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """The effective config (``config``), the source of every field (``sources``) and the
        fields a user may override (``writable``); secrets are never shown."""
        seconds = self._seconds(deadline)
        event = ConfigReadEvent(**self._envelope(user_id, DEFAULT_AGENT, DEFAULT_THREAD, seconds))
        return await self._ask(event, seconds)

    async def update_memory_config(
        self, user_id: str, changes: dict[str, Any], *, deadline: float | None = None
    ) -> dict[str, Any]:
        """Merge ``changes`` into the user's overrides (``null`` removes a field); returns
        what :meth:`get_memory_config` does. A field off the whitelist raises
        :class:`InvalidInputError` naming it, and nothing changes."""
        seconds = self._seconds(deadline)
        event = ConfigUpdateEvent(
            **self._envelope(user_id, DEFAULT_AGENT, DEFAULT_THREAD, seconds),
            payload=_valid(ConfigUpdatePayload, changes=changes),
        )
        return await self._ask(event, seconds)

    async def reset_memory_config(
        self, user_id: str, field: str, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """Remove one field (dotted, ``injection.enabled``) from the user's overrides."""
        changes: dict[str, Any] = {}
        *sections, leaf = field.split(".")
        level = changes
        for section in sections:
            level = level.setdefault(section, {})
        level[leaf] = None
        return await self.update_memory_config(user_id, changes, deadline=deadline)

    async def memory_status(
        self, user_id: str, agent_id: str = DEFAULT_AGENT, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """The providers, the Hindsight banks (reachable, the latest recall's hits), the
        queues and the dead letters."""
        seconds = self._seconds(deadline)
        event = StatusEvent(**self._envelope(user_id, agent_id, DEFAULT_THREAD, seconds))
        return await self._ask(event, seconds)

    async def search_memory(
        self,
        user_id: str,
        agent_id: str,
        query: str,
        *,
        mode: str = "recall",
        scope: str = "both",
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Hindsight recall (``results``) or reflect (``answer``) on the user's own banks.

        Raises :class:`NotFoundError` when the user has no Hindsight,
        :class:`DependencyUnavailableError` when it does not answer.
        """
        seconds = self._seconds(deadline)
        event = SearchEvent(
            **self._envelope(user_id, agent_id, DEFAULT_THREAD, seconds),
            payload=_valid(SearchPayload, query=query, mode=mode, scope=scope),
        )
        return await self._ask(event, seconds)

    async def clear_bank(
        self,
        user_id: str,
        agent_id: str,
        bank: str,
        *,
        confirm: str,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Empty one of the user's Hindsight banks; ``confirm`` must repeat its name.

        Raises :class:`ConfirmationError` when it does not, :class:`PermissionDeniedError`
        for a bank that is not theirs. The event log records it.
        """
        seconds = self._seconds(deadline)
        event = BankClearEvent(
            **self._envelope(user_id, agent_id, DEFAULT_THREAD, seconds),
            payload=_valid(BankClearPayload, bank=bank, confirm=confirm),
        )
        return await self._ask(event, seconds)

    async def explain_memory(
        self,
        user_id: str,
        text: str,
        *,
        agent_id: str | None = None,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """The logged writes that added, replaced or removed the user's entries holding
        ``text``, oldest first, as ``memsvc explain --json`` prints them: ``entries``
        (each with its ``steps``), ``unlogged`` (entries no logged write made), ``log``
        (how far back it reaches) and ``notes``. USER.md and ``agent_id``'s MEMORY.md;
        every agent's without one. Raises :class:`InvalidInputError` for an empty text."""
        seconds = self._seconds(deadline)
        event = ExplainEvent(
            **self._envelope(user_id, agent_id or DEFAULT_AGENT, DEFAULT_THREAD, seconds),
            payload=_valid(ExplainPayload, text=text, every_agent=agent_id is None),
        )
        return await self._ask(event, seconds)

    async def read_log(
        self, user_id: str, *, before: str = "+", limit: int = 50, event_type: str | None = None
    ) -> dict[str, Any]:
        """A page of the user's event log, newest first: ``entries`` and the cursor of the
        next page (``next``, ``None`` at the log's start). Read from Redis, no worker."""
        self._require_open()
        user_id = validate_id("user_id", user_id)
        if not 1 <= limit <= MAX_LOG_PAGE:
            raise InvalidInputError(f"limit must be between 1 and {MAX_LOG_PAGE}")
        if not LOG_CURSOR.fullmatch(before):
            raise InvalidInputError(
                "before must be '+', a log id such as 1700000000000-0, or a page's 'next'"
            )
        with _redis_read():
            entries, cursor = await self._bus.log.user_page(
                user_id, event_type=event_type, before=before, limit=limit, scan=LOG_SCAN
            )
        return {"entries": [_logged(entry) for entry in entries], "next": cursor}

    # -- plumbing -------------------------------------------------------------------

    def _envelope(
        self,
        user_id: str,
        agent_id: str,
        thread_id: str,
        seconds: float | None,
        *,
        reply: bool = True,
    ) -> dict[str, Any]:
        self._require_open()  # every call builds its event first
        return {
            **stamp(),
            "user_id": validate_id("user_id", user_id),
            "agent_id": validate_id("agent_id", agent_id),
            "thread_id": validate_id("thread_id", thread_id),
            "reply_to": self._inbox if reply else None,
            "deadline": time.time() + seconds if seconds is not None else None,
        }

    def _seconds(self, deadline: float | None) -> float:
        return self._settings.tool_deadline_seconds if deadline is None else deadline

    async def _ask(self, event: Any, seconds: float) -> dict[str, Any]:
        """A request a worker must answer: its reply, or the error that reply stands for."""
        return self._answered(await self._request(event, seconds), seconds)

    @staticmethod
    def _answered(reply: dict[str, Any] | None, seconds: float) -> dict[str, Any]:
        if reply is None:
            raise MemoryUnavailableError(f"no reply within {seconds:g}s")
        if not reply.get("ok", False):
            raise MemoryServiceError(str(reply.get("error")))
        if (error := refused(reply)) is not None:
            raise error
        return {k: v for k, v in reply.items() if k not in ("id", "ok")}

    async def _edit(
        self, user_id: str, agent_id: str, edit: EntryEditPayload, deadline: float | None
    ) -> dict[str, Any]:
        seconds = self._seconds(deadline)
        event = EntryEditEvent(
            **self._envelope(user_id, agent_id, DEFAULT_THREAD, seconds), payload=edit
        )
        unconfirmed = f"the write was not confirmed within {seconds:g}s"
        try:
            reply = await self._request(event, seconds, keep=True)
        except MemoryMisconfiguredError as exc:
            if not exc.sent:
                raise
            reply = None  # sent, and its answer cannot be read: as if none came in time
            unconfirmed = "memsvc cannot read the answer (an operator must fix it)"
        if reply is None:
            raise WritePendingError(
                f"{unconfirmed}; it is queued: it will be applied once, or its refusal "
                "recorded (see write_outcome)",
                event_id=event.id,
            )
        if reply.get("parked"):  # set aside for an operator, who may still apply it
            raise WritePendingError(str(reply.get("error")), event_id=event.id)
        result = self._answered(reply, seconds)
        if result.get("success"):
            return result
        if result.get("conflict"):
            raise ConflictError(str(result.get("error")), detail=result)
        raise WriteRefusedError(str(result.get("error")), detail=result)

    def _require_open(self) -> None:
        if self._state is ClientState.UNOPENED:
            raise ClientStateError("use MemoryClient as 'async with MemoryClient(...) as mem'")
        if self._state is ClientState.CLOSED:
            raise ClientStateError("this MemoryClient is closed; open a new one")

    async def _publish(
        self,
        event: Any,
        *,
        order: str | None = None,
        keep: bool = False,
        within: float | None = None,
    ) -> None:
        """Hand ``event`` to Redis, or raise :class:`MemoryUnavailableError`.

        ``within``: the caller's deadline, when it comes before Redis' timeout. ``keep``:
        an event whose id makes a second copy harmless (a write's receipt, a turn's
        ledger), which is kept when Redis does not confirm it in time, or the connection
        is lost after it was written (it may have run): the outbox then publishes it
        until Redis does, and :class:`WritePendingError` says so. A caller cancelled
        meanwhile was told nothing, and nothing is kept for it.
        """
        self._require_open()
        seconds = self._settings.redis_timeout_seconds
        if within is not None:
            seconds = min(seconds, within)
        attempt = asyncio.ensure_future(self._bus.publish(event, order=order)) if keep else None
        try:
            # the whole publish, also the wait for a pool connection other calls are opening
            async with asyncio.timeout(seconds):
                if attempt is not None:
                    await asyncio.shield(attempt)
                else:
                    await self._bus.publish(event, order=order)
        except (TimeoutError, RedisTimeoutError, SentThenLost) as exc:
            said = (
                f"Redis did not answer within {seconds:g}s"
                if isinstance(exc, TimeoutError)
                else f"Redis unavailable: {exc}"
            )
            # maybe sent, maybe never: kept until one is confirmed (not by a closing client)
            if attempt is not None and self._outbox is not None:
                if not self._outbox.keep(event, attempt, order=order):
                    raise MemoryUnavailableError(f"{said}; the client closed") from exc
                raise WritePendingError(
                    f"{said}; the event is queued in this process and published until Redis "
                    "takes it: it takes effect once, do not send it again",
                    event_id=event.id,
                ) from exc
            raise MemoryUnavailableError(said) from exc
        except asyncio.CancelledError:
            if attempt is not None:
                attempt.cancel()
            raise
        except RedisError as exc:  # down, or an error reply (OOM, NOPERM ...): not run
            raise _redis_failure(exc, "Redis refused the event") from exc

    async def _request(
        self, event: Any, seconds: float, *, keep: bool = False, must_land: bool = False
    ) -> dict[str, Any] | None:
        """Publish ``event`` and wait for its reply, both within ``seconds``.

        None when no reply came in time (a publish Redis did not confirm in time may
        still be delivered, and with ``keep`` it is published until it is: see
        :meth:`_publish`); :class:`MemoryUnavailableError` when Redis refused it.
        ``must_land``: the publish has Redis' own timeout, whatever ``seconds`` is, and
        one Redis did not confirm raises too (only the reply is waited for within
        ``seconds``). When
        Redis refuses, for good, to let this client read its replies while the request
        waits, the wait ends then: :class:`MemoryMisconfiguredError` with ``sent`` (it
        may still be done; with ``keep``, it is queued).
        """
        if self._inbox_refused is not None:  # no reply could be read: nothing is sent
            refusal = self._inbox_refused
            raise MemoryMisconfiguredError(f"Redis refuses memsvc: {refusal}") from refusal
        loop = asyncio.get_running_loop()
        ends = loop.time() + seconds
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[event.id] = future
        try:
            try:
                await self._publish(event, keep=keep, within=None if must_land else seconds)
                self._redis_back.set()
            except MemoryUnavailableError as exc:
                if must_land:
                    raise
                cause = exc.__cause__
                kept = keep and isinstance(cause, SentThenLost)  # another call hears at once
                if not (kept or isinstance(cause, RedisTimeoutError | TimeoutError)):
                    raise
                # maybe sent, not confirmed: Redis may still take it, and a reply come
            async with asyncio.timeout_at(ends):
                return await future
        except TimeoutError:
            return None
        except asyncio.CancelledError:  # never told its write is queued: nothing goes on
            if keep and self._outbox is not None:
                self._outbox.drop(event)
            raise
        finally:
            self._pending.pop(event.id, None)
            if future.done() and not future.cancelled():
                future.exception()  # read: a refusal heard while the publish failed is not news

    async def _listen(self) -> None:
        assert self._redis is not None
        outage = Outage("client_inbox_unavailable", cap=2.0)
        while True:
            try:
                # every reply waiting, up to a hundred, in one round trip
                inbox = self._inbox
                popped = await self._redis.blmpop(1, 1, inbox, direction="LEFT", count=100)  # type: ignore[arg-type,misc]
            except RedisError as exc:  # down, or refusing (an ACL, MISCONF): waited out alike
                refused = lasting_refusal(exc)
                if refused and self._inbox_refused is None:
                    log.error("client_inbox_refused", error=str(exc))
                if refused:  # kept through an outage, until a read goes through
                    self._inbox_refused = exc
                    self._refuse_waiting(exc)
                await outage.wait(exc, wake=self._redis_back)
                continue
            self._inbox_refused = None
            outage.over()
            for raw in popped[1] if popped else ():
                self._answer(raw)

    def _refuse_waiting(self, refusal: RedisError) -> None:
        """End the wait of every request sent: no reply of theirs can be read now."""
        for future in self._pending.values():
            if not future.done():
                refused = MemoryMisconfiguredError(
                    f"Redis refuses memsvc its replies, after the request was sent: {refusal}",
                    sent=True,
                )
                refused.__cause__ = refusal  # what a gateway keeps from its callers
                future.set_exception(refused)

    def _answer(self, raw: bytes) -> None:
        try:
            reply = json.loads(raw)
        except ValueError:
            log.warning("client_bad_reply", raw=raw[:200])
            return
        future = self._pending.get(reply.get("id", ""))
        if future is not None and not future.done():
            future.set_result(reply)

    async def _fallback(self, event: PrefetchEvent, reason: str, ends: float) -> PrefetchContext:
        """What is ready without a worker: the thread's frozen snapshot, if it has one."""
        try:
            async with asyncio.timeout(max(0.0, ends - time.monotonic())):
                read = await self._snapshots.look(event.user_id, event.agent_id, event.thread_id)
        except (RedisError, OSError) as exc:  # OSError: also the deadline's TimeoutError
            return PrefetchContext(
                text="",
                skipped={
                    "service": reason,
                    "builtin": REFUSED
                    if lasting_refusal(exc)
                    else str(exc) or "Redis did not answer before the deadline",
                },
                degraded=True,
            )
        if read.snapshot is None:
            why = WITHHELD if read.withheld else "no frozen snapshot yet"
            return PrefetchContext(
                text="", skipped={"service": reason, "builtin": why}, degraded=True
            )
        return PrefetchContext(
            text=read.snapshot.text,
            blocks={BUILTIN_BLOCK: read.snapshot.text},
            skipped={"service": reason},
            degraded=True,
        )


@contextlib.contextmanager
def _redis_read() -> Iterator[None]:
    """A read of Redis itself, no worker asked: an outage is :class:`MemoryUnavailableError`,
    as it is for every other call."""
    try:
        yield
    except (RedisError, OSError) as exc:
        raise _redis_failure(exc, "Redis refused the read") from exc


def _redis_failure(exc: Exception, refused: str) -> MemoryServiceError:
    """What a call tells its caller of a Redis error: an outage to wait out, or a refusal an
    operator must fix."""
    if lasting_refusal(exc):
        return MemoryMisconfiguredError(f"Redis refuses memsvc: {exc}")
    if isinstance(exc, REDIS_DOWN):
        return MemoryUnavailableError(f"Redis unavailable: {exc}")
    return MemoryUnavailableError(f"{refused}: {exc}")


def invalid_tool_args(name: str, problem: str) -> dict[str, Any]:
    """The result of a tool call whose arguments the model got wrong."""
    return {"success": False, "error": f"Invalid {name} arguments: {problem}. Nothing was written."}


def _valid(model: Any, **fields: Any) -> Any:
    """``model`` of ``fields``, or :class:`InvalidInputError` saying what is wrong."""
    try:
        return model(**fields)
    except ValidationError as exc:
        raise InvalidInputError(describe(exc)) from None


def _unconfirmed(event_id: str, what: str) -> dict[str, Any]:
    """A tool call other than a memory write (it is not published again) that may have run."""
    return {
        "success": False,
        "event_id": event_id,
        "error": f"{what}: it may still be done, or not. Do not repeat it in this turn.",
    }


# what a record's detail says of the service's own processes, for its operators (``memsvc
# log``), not for the user whose event it is
OPERATORS_DETAIL = ("worker",)


def _logged(entry: LogEntry) -> dict[str, Any]:
    return {
        "id": entry.stream_id,
        "at": entry.at,
        "type": entry.type,
        "outcome": entry.outcome,
        "event_id": entry.event_id,
        "agent_id": entry.agent_id,
        "thread_id": entry.thread_id,
        "payload": (entry.event or {}).get("payload"),
        "detail": {k: v for k, v in entry.detail.items() if k not in OPERATORS_DETAIL},
    }


def __getattr__(name: str) -> Any:
    """``MemoryHTTPClient`` (:mod:`memsvc.gateway.http_client`), loaded only when it is asked
    for: an agent process that talks to Redis never pays for an HTTP client."""
    if name == "MemoryHTTPClient":
        from memsvc.gateway import http_client

        return http_client.MemoryHTTPClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
