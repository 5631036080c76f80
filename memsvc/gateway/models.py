"""The gateway's request and response bodies: what ``/openapi.json`` documents.

Ids are checked by the same rules as everywhere (:mod:`memsvc.ids`); bodies
refuse unknown fields, so a misspelt field is an error, not a silent default.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from memsvc.events import (
    ENTRY_HASH,
    EVENT_ID,
    MAX_DEADLINE_SECONDS,
    MAX_ENTRY_CHARS,
    MAX_QUERY_CHARS,
    MAX_TURN_CHARS,
    MAX_TURN_INDEX,
    AgentId,
    OptionalThreadId,
    Text,
    ThreadId,
    UserId,
)
from memsvc.ids import DEFAULT_AGENT, DEFAULT_THREAD
from memsvc.paths import Target


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    """A reply whose fields the service may add to: clients ignore what they do not know."""

    model_config = ConfigDict(extra="allow")


class Error(BaseModel):
    """Every refusal: a message, or for a write the tool refused, the tool's result."""

    detail: Any


# -- a person's view ------------------------------------------------------------------


class Entry(BaseModel):
    index: int
    hash: str = Field(description="what PUT and DELETE name as `expect`")
    content: str = Field(description="the entry, or a [BLOCKED: ...] placeholder")
    blocked: bool


class Usage(BaseModel):
    chars: int
    limit: int
    percent: int


class HindsightStatus(_Open):
    enabled: bool
    memory_mode: str | None = None
    banks: dict[str, str] | None = None


class MemoryView(BaseModel):
    user_md: list[Entry]
    memory_md: list[Entry]
    char_usage: dict[Target, Usage]
    last_modified: dict[Target, float | None] = Field(description="unix seconds; null: no file")
    hindsight_status: HindsightStatus


class EntryAdd(_Body):
    target: Target
    content: Text = Field(max_length=MAX_ENTRY_CHARS)
    agent_id: AgentId = DEFAULT_AGENT


class EntryReplace(_Body):
    content: Text = Field(max_length=MAX_ENTRY_CHARS)
    expect: str = Field(pattern=ENTRY_HASH, description="the hash of the entry as it was read")
    agent_id: AgentId = DEFAULT_AGENT


class WriteResult(_Open):
    """The ``memory`` tool's result."""

    success: bool
    message: str | None = None
    usage: str | None = None
    entry_count: int | None = None


class ConfigView(BaseModel):
    config: dict[str, Any]
    sources: dict[str, str]
    writable: list[str]


class Status(BaseModel):
    providers: list[str]
    hindsight: HindsightStatus
    # service-wide, every user's: shown to admin tokens (and with --no-auth), else null
    queue: dict[str, int] | None
    dead_letters: dict[str, int] | None


class SearchRequest(_Body):
    query: Text = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    mode: Literal["recall", "reflect"] = "recall"
    scope: Literal["user", "work", "both"] = "both"
    agent_id: AgentId = DEFAULT_AGENT


class Recalled(BaseModel):
    text: str
    date: str | None


class SearchResult(BaseModel):
    results: list[Recalled] | None = None
    answer: Any = None


class BankClear(_Body):
    bank: str = Field(min_length=1, max_length=200)
    confirm: str = Field(max_length=200, description="the bank's name again")
    agent_id: AgentId = DEFAULT_AGENT


class Cleared(BaseModel):
    cleared: str


class Reload(_Body):
    agent_id: AgentId = DEFAULT_AGENT
    thread_id: ThreadId = DEFAULT_THREAD
    user_id: UserId | None = None


class Snapshot(BaseModel):
    text: str


class LogEntry(BaseModel):
    id: str
    at: float
    type: str
    outcome: str
    event_id: str
    agent_id: str
    thread_id: str
    payload: Any
    detail: dict[str, Any]


class LogPage(BaseModel):
    entries: list[LogEntry]
    next: str | None = Field(
        description="`before` of the next page (a record id, or a token kept a day); "
        "null at the log's start"
    )


class ExplainStep(BaseModel):
    """One logged write that changed the entry: its text before and after (null: none)."""

    event_id: str
    agent_id: str
    thread_id: str
    at: float = Field(description="unix seconds")
    action: Literal["add", "replace", "remove"]
    before: str | None
    after: str | None


class ExplainedEntry(BaseModel):
    file: str = Field(description="`USER.md` or `agents/{agent}/MEMORY.md`")
    now: str | None = Field(description="its text in the file now; null: no longer there")
    reaches_back: bool = Field(description="false: the log starts after the write that made it")
    steps: list[ExplainStep] = Field(description="oldest first")


class UnloggedEntry(BaseModel):
    """An entry in a file that no logged write made (older than the log, or written by hand)."""

    file: str
    entry: str


class LogReach(BaseModel):
    records: int = Field(description="the caller's own records in the log")
    trimmed: bool = Field(description="the log has trimmed away older records")
    oldest_at: float | None = Field(description="the time of the caller's oldest record in it")


class Explanation(BaseModel):
    """What ``memsvc explain --json`` prints, for the caller's own entries."""

    user_id: str
    agent_id: str | None = Field(description="null: every agent's MEMORY.md was searched")
    text: str
    entries: list[ExplainedEntry]
    unlogged: list[UnloggedEntry]
    log: LogReach
    notes: list[str]


# -- agents ---------------------------------------------------------------------------


class _Agent(_Body):
    """What every agent call names, as ``MemoryClient``'s arguments do; ``user_id`` may be
    left out (the token's user) and never names another user with a user's token."""

    user_id: UserId | None = None
    agent_id: AgentId
    thread_id: ThreadId = DEFAULT_THREAD


# seconds the caller gives the call (its token's lookup included)
Deadline = Annotated[float | None, Field(gt=0, le=MAX_DEADLINE_SECONDS)]


class Prefetch(_Agent):
    query: Text = Field(default="", max_length=MAX_QUERY_CHARS)
    deadline: Deadline = None


class QueuePrefetch(_Agent):
    query: Text = Field(default="", max_length=MAX_QUERY_CHARS)


class PrefetchContext(BaseModel):
    text: str
    blocks: dict[str, str]
    skipped: dict[str, str]
    timings_ms: dict[str, float]
    degraded: bool
    scrub_tag: str | None


class ToolCall(_Agent):
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    # any JSON: arguments the tool refuses (not an object, a lone surrogate, NaN, too deep)
    # are answered with a result for the model, as MemoryClient answers them
    args: Any = Field(default_factory=dict, description="the tool's arguments (an object)")
    deadline: Deadline = None
    mirror: bool = Field(
        default=True, description="false: Hindsight does not follow this `memory` write"
    )


class SyncTurn(_Agent):
    user_content: Text = Field(max_length=MAX_TURN_CHARS)
    assistant_content: Text = Field(max_length=MAX_TURN_CHARS)
    turn_index: int | None = Field(default=None, ge=1, le=MAX_TURN_INDEX)
    event_id: str | None = Field(
        default=None,
        pattern=EVENT_ID,
        description="the caller's own id for the turn: sent again under it, it is recorded once",
    )


class SessionSwitch(_Agent):
    parent_thread_id: OptionalThreadId = ""
    reset: bool = True
    deadline: Deadline = None


class Published(BaseModel):
    event_id: str | None = Field(description="null for a queued prefetch")


class ToolSchemas(BaseModel):
    schemas: list[dict[str, Any]]


class WriteOutcome(BaseModel):
    event_id: str
    result: dict[str, Any] | None = Field(description="null while the write is still queued")


# -- admin ----------------------------------------------------------------------------


class TokenAdd(_Body):
    user_id: UserId
    admin: StrictBool = False  # "yes" is refused, not read as true


class TokenInfo(BaseModel):
    id: str
    user_id: str
    admin: bool
    created_at: float


class NewToken(TokenInfo):
    token: str = Field(description="shown this once; only its hash is kept")
