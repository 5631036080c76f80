"""Events: the envelope every agent turn publishes, and one model per event type.

The envelope carries identity (``user_id``, ``agent_id``, ``thread_id``) - the
only identity a worker trusts; tool arguments written by the model never name a
user. ``id`` is unique per event and is the idempotency key of its effects:
delivery is at-least-once, effects are exactly-once.

An event that does not decode (unknown type or schema version, a failed field)
raises :class:`InvalidEvent`, which keeps the raw bytes so the event can be
recorded and inspected instead of dropped.
"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from memsvc.errors import REFUSALS, InvalidInputError, MemsvcError, RequestRefusedError
from memsvc.ids import validate_id, validate_optional_id
from memsvc.paths import Target
from memsvc.validation import describe

SCHEMA_VERSION = 1
MAX_EVENT_BYTES = 1024 * 1024
# The longest deadline the gateway holds a request for; a caller's longer one is answered by it.
MAX_DEADLINE_SECONDS = 60.0
# A turn number, and the next one counted from it, stay exact in Redis' Lua numbers (doubles).
MAX_TURN_INDEX = 2**31 - 1
MAX_QUERY_CHARS = 32_768
MAX_TURN_CHARS = 256 * 1024
MEMORY_TOOL = "memory"  # the builtin tool's name, as the model calls it
MAX_ARGS_DEPTH = 32  # far beyond any tool's arguments; deeper is an attack or a bug
MAX_ENTRY_CHARS = 64 * 1024  # far above any file's limit: the tool says why it does not fit
ENTRY_HASH = r"^[0-9a-f]{12}$"  # memsvc.store.memfile.entry_hash
EVENT_ID = r"^[A-Za-z0-9_\-]{8,64}$"  # new_id() makes 32 hex digits; a caller may give its own
MAX_ENTRY_INDEX = 100_000  # far past any file: a 1 MiB file holds fewer entries

UserId = Annotated[str, AfterValidator(lambda v: validate_id("user_id", v))]
AgentId = Annotated[str, AfterValidator(lambda v: validate_id("agent_id", v))]
ThreadId = Annotated[str, AfterValidator(lambda v: validate_id("thread_id", v))]
OptionalThreadId = Annotated[str, AfterValidator(lambda v: validate_optional_id("thread_id", v))]


def _utf8(value: str) -> str:
    """Refuse text that has no UTF-8 form (a lone surrogate, from JSON ``"\\ud800"`` or
    from undecodable bytes) here, with a clear error, not halfway through a publish."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text is not valid Unicode (it holds a lone surrogate)") from None
    return value


def _plain_json(value: Any) -> Any:
    """Arguments that survive the trip as JSON unchanged: text with a UTF-8 form, finite
    numbers (NaN would arrive as ``null``) and at most ``MAX_ARGS_DEPTH`` levels of
    nesting. Walked without recursion, so no depth can overflow the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _utf8(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{item!r} is not a number JSON can carry")
        elif isinstance(item, dict | list):
            if depth > MAX_ARGS_DEPTH:
                raise ValueError(f"nested deeper than {MAX_ARGS_DEPTH} levels")
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str):
                    _utf8(key)
                stack.append((child, depth + 1))
    return value


Text = Annotated[str, AfterValidator(_utf8)]
Args = Annotated[dict[str, Any], BeforeValidator(_plain_json)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PrefetchPayload(_Model):
    query: Text = Field(default="", max_length=MAX_QUERY_CHARS)
    warm: bool = False  # queue_prefetch: prepare the next turn, nobody waits for a reply


class MemoryWritePayload(_Model):
    args: Args  # the memory tool's arguments; the tool validates them
    # False: no external provider follows this write (a migration that keeps Hindsight out,
    # or mirrors its entries itself and waits for them)
    mirror: bool = True

    @model_serializer(mode="wrap")
    def _leave_out_the_default(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A write that is mirrored as every write was is sent as it always was: workers
        that predate ``mirror`` take it during a rolling upgrade."""
        data: dict[str, Any] = handler(self)
        if self.mirror:
            data.pop("mirror", None)
        return data


class ToolCallPayload(_Model):
    """A provider's own tool; the ``memory`` tool has one event of its own, ``memory_write``."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    args: Args = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _not_the_memory_tool(cls, name: str) -> str:
        if name == MEMORY_TOOL:
            raise ValueError(f"the {MEMORY_TOOL} tool is called with a memory_write event")
        return name


class SyncTurnPayload(_Model):
    user_content: Text = Field(max_length=MAX_TURN_CHARS)
    assistant_content: Text = Field(max_length=MAX_TURN_CHARS)
    # the agent's own numbering, if any
    turn_index: int | None = Field(default=None, ge=1, le=MAX_TURN_INDEX)


class SessionSwitchPayload(_Model):
    parent_thread_id: OptionalThreadId = ""
    reset: bool = True
    detected: bool = False  # raised by a worker that saw a new thread, not by the agent


class EmptyPayload(_Model):
    pass


class EntryEditPayload(_Model):
    """A person's edit of one entry: an add, or a replace / remove of the entry at ``index``
    that still has the hash ``expect`` (as it was read)."""

    target: Target
    action: Literal["add", "replace", "remove"]
    content: Text = Field(default="", max_length=MAX_ENTRY_CHARS)
    index: int | None = Field(default=None, ge=0, le=MAX_ENTRY_INDEX)
    expect: str | None = Field(default=None, pattern=ENTRY_HASH)

    @model_validator(mode="after")
    def _named_by_position(self) -> EntryEditPayload:
        positional = self.index is not None and self.expect is not None
        if self.action == "add" and (self.index is not None or self.expect is not None):
            raise ValueError("an add names no index (entries are appended)")
        if self.action != "add" and not positional:
            raise ValueError(f"a {self.action} needs the entry's index and its hash (expect)")
        return self


class ConfigUpdatePayload(_Model):
    """A merge patch of the user's override file: a value sets a field, ``null`` removes it."""

    changes: Args


class SearchPayload(_Model):
    query: Text = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    mode: Literal["recall", "reflect"] = "recall"
    scope: Literal["user", "work", "both"] = "both"  # a reflect asks one bank: "both" is work


class BankClearPayload(_Model):
    """``confirm`` repeats ``bank``: a bank is emptied only when it is named twice."""

    bank: str = Field(min_length=1, max_length=200)
    confirm: str = Field(max_length=200)


class ExplainPayload(_Model):
    """The text an entry holds (at any step); ``every_agent``: every agent's MEMORY.md, not
    only the envelope agent's."""

    text: Text = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    every_agent: bool = False

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("the text to explain is empty")
        return text


class _Envelope(_Model):
    id: str = Field(pattern=EVENT_ID)
    user_id: UserId
    agent_id: AgentId
    thread_id: ThreadId
    ts: float
    schema_version: Literal[1] = 1
    reply_to: str | None = Field(default=None, max_length=200)  # inbox of the waiting caller
    deadline: float | None = None  # unix time after which nobody waits for the reply


class PrefetchEvent(_Envelope):
    """The start of a turn: the snapshot plus recall, answered within the caller's deadline."""

    type: Literal["prefetch"] = "prefetch"
    payload: PrefetchPayload = PrefetchPayload()


class MemoryWriteEvent(_Envelope):
    """One call of the ``memory`` tool: applied once however often delivered (its id is its
    receipt).
    """

    type: Literal["memory_write"] = "memory_write"
    payload: MemoryWritePayload


class ToolCallEvent(_Envelope):
    """A call of an external provider's tool (``hindsight_*``)."""

    type: Literal["tool_call"] = "tool_call"
    payload: ToolCallPayload


class ToolSchemasEvent(_Envelope):
    type: Literal["tool_schemas"] = "tool_schemas"
    payload: EmptyPayload = EmptyPayload()


class SyncTurnEvent(_Envelope):
    """A finished turn, published without waiting: numbered, then retained in the background."""

    type: Literal["sync_turn"] = "sync_turn"
    payload: SyncTurnPayload


class SessionSwitchEvent(_Envelope):
    """An agent moved to another thread: flush the old one's turns, freeze a new snapshot."""

    type: Literal["session_switch"] = "session_switch"
    payload: SessionSwitchPayload = SessionSwitchPayload()


class SnapshotReloadEvent(_Envelope):
    type: Literal["snapshot_reload"] = "snapshot_reload"
    payload: EmptyPayload = EmptyPayload()


class MemoryReadEvent(_Envelope):
    """The files as a person sees them: entries with their index and hash, usage, times."""

    type: Literal["memory_read"] = "memory_read"
    payload: EmptyPayload = EmptyPayload()


class EntryEditEvent(_Envelope):
    """A person's edit of an entry: the ``memory`` tool's write path, applied once."""

    type: Literal["entry_edit"] = "entry_edit"
    payload: EntryEditPayload


class ConfigReadEvent(_Envelope):
    type: Literal["config_read"] = "config_read"
    payload: EmptyPayload = EmptyPayload()


class ConfigUpdateEvent(_Envelope):
    """A change of the user's per-user overrides (whitelisted fields only)."""

    type: Literal["config_update"] = "config_update"
    payload: ConfigUpdatePayload


class StatusEvent(_Envelope):
    type: Literal["status"] = "status"
    payload: EmptyPayload = EmptyPayload()


class SearchEvent(_Envelope):
    """A recall (or reflect) on the user's own Hindsight banks, whatever the memory mode."""

    type: Literal["search"] = "search"
    payload: SearchPayload


class BankClearEvent(_Envelope):
    """Emptying one of the user's Hindsight banks; its record in the log is the audit trail."""

    type: Literal["bank_clear"] = "bank_clear"
    payload: BankClearPayload


class ExplainEvent(_Envelope):
    """The logged writes behind the user's entries that hold a text (``memsvc explain``)."""

    type: Literal["explain"] = "explain"
    payload: ExplainPayload


Event = Annotated[
    PrefetchEvent
    | MemoryWriteEvent
    | ToolCallEvent
    | ToolSchemasEvent
    | SyncTurnEvent
    | SessionSwitchEvent
    | SnapshotReloadEvent
    | MemoryReadEvent
    | EntryEditEvent
    | ConfigReadEvent
    | ConfigUpdateEvent
    | StatusEvent
    | SearchEvent
    | BankClearEvent
    | ExplainEvent,
    Field(discriminator="type"),
]
EVENT_TYPES = (
    "prefetch",
    "memory_write",
    "tool_call",
    "tool_schemas",
    "sync_turn",
    "session_switch",
    "snapshot_reload",
    "memory_read",
    "entry_edit",
    "config_read",
    "config_update",
    "status",
    "search",
    "bank_clear",
    "explain",
)
INVALID = "invalid"  # the refusal kind of an InvalidInputError
_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


class InvalidEvent(InvalidInputError):
    """An event that cannot be processed; ``raw`` is kept for the record."""

    def __init__(self, reason: str, raw: bytes) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw

    def field(self, name: str) -> str | None:
        """A top-level string field of the raw event, if it has one that is text (for the
        record): a lone surrogate (``"\\udcff"`` is valid JSON) cannot be sent to Redis."""
        try:
            value = json.loads(self.raw).get(name)
            if isinstance(value, str):
                value.encode("utf-8")
        except (ValueError, AttributeError, RecursionError):  # UnicodeError is a ValueError
            return None
        return value if isinstance(value, str) else None


def new_id() -> str:
    return uuid.uuid4().hex


def validate_event_id(value: object) -> str:
    """An event id a caller gives (to send an event again under it), or
    :class:`InvalidInputError` saying what it must be."""
    if not isinstance(value, str) or re.fullmatch(EVENT_ID, value) is None:
        raise InvalidInputError(
            f"event_id {value!r:.80} must be 8 to 64 letters, digits, '_' or '-'"
        )
    return value


def encode(event: _Envelope) -> bytes:
    """The event as published; :class:`InvalidInputError` when it is over the size every
    worker refuses, so that it is refused to its sender, not parked after being accepted."""
    raw = event.model_dump_json().encode("utf-8")
    if len(raw) > MAX_EVENT_BYTES:
        raise InvalidInputError(
            f"the event is {len(raw):,} bytes in UTF-8, over the {MAX_EVENT_BYTES:,} an event "
            "may have: send less text"
        )
    return raw


def decode(raw: bytes) -> Event:
    """Parse one event; raise :class:`InvalidEvent` saying exactly what is wrong."""
    if not raw:
        raise InvalidEvent("empty event (a stream entry without the event field)", raw)
    if len(raw) > MAX_EVENT_BYTES:
        raise InvalidEvent(f"event is {len(raw):,} bytes, over {MAX_EVENT_BYTES:,}", raw[:4096])
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidEvent(f"not UTF-8 JSON: {exc}", raw) from None
    except RecursionError:
        raise InvalidEvent("JSON nested too deeply", raw[:4096]) from None
    if not isinstance(data, dict):
        raise InvalidEvent("not a JSON object", raw)
    if data.get("type") not in EVENT_TYPES:
        raise InvalidEvent(f"unknown event type {data.get('type')!r}", raw)
    if data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise InvalidEvent(f"unsupported schema_version {data.get('schema_version')!r}", raw)
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise InvalidEvent(describe(exc, root="event", skip=1), raw) from None
    except RecursionError:
        raise InvalidEvent("event nested too deeply", raw[:4096]) from None


def stamp() -> dict[str, Any]:
    """The fields every new event starts with."""
    return {"id": new_id(), "ts": time.time()}


def refusal(exc: RequestRefusedError | InvalidInputError) -> dict[str, Any]:
    """A worker's reply that refuses the request; the client raises it again as ``exc``'s kind."""
    if isinstance(exc, RequestRefusedError):
        return {"refused": {"kind": exc.kind, "error": str(exc), "detail": exc.detail}}
    return {"refused": {"kind": INVALID, "error": str(exc), "detail": str(exc)}}


def refused(reply: dict[str, Any]) -> MemsvcError | None:
    """The error a reply made by :func:`refusal` stands for; ``None`` for any other reply."""
    refused = reply.get("refused")
    if not isinstance(refused, dict):
        return None
    message = str(refused.get("error", "refused"))
    if refused.get("kind") == INVALID:
        return InvalidInputError(message)
    kind = REFUSALS.get(str(refused.get("kind")), RequestRefusedError)
    return kind(message, detail=refused.get("detail"))
