"""``MemoryMiddleware``: memsvc for a LangChain v1 agent (``create_agent``) in one line.

```python
agent = create_agent(model, tools=[...], middleware=[MemoryMiddleware(mem)],
                     context_schema=MemoryContext, checkpointer=InMemorySaver())
await agent.ainvoke({"messages": [HumanMessage("hi")]},
                    config={"configurable": {"thread_id": "t1"}},
                    context=MemoryContext(user_id="alice", agent_id="coder"))
```

One ``ainvoke`` is one turn:

- ``abefore_agent`` prefetches once, with the latest human message as the query, and
  asks for the user's memory tools at the same time.
- ``awrap_model_call``, on every step of the tool loop, appends the builtin snapshot to
  the system message (the same bytes all session, so the prompt prefix stays cached)
  and the recall (``<memory-context>``) to the request's copy of the latest human
  message, and offers the memory tools.
- ``awrap_tool_call`` runs those tools through ``MemoryClient.call_tool``.
- ``aafter_agent`` records the turn with one ``sync_turn``: the human text and the
  final answer, without tool calls and scrubbed of recalled memory.

Ids come from the run alone (``runtime.context``; the thread from the context, else
the checkpointer's thread, else ``config["configurable"]["thread_id"]``, which, being
the application's, may have any shape: :func:`memsvc.ids.id_for` stands for it), so one
middleware serves concurrent runs of many users. What a turn fetched is held until
the turn ends, keyed by (user, agent, thread, human message id), and never put in
graph state: LangGraph streams even an untracked, private state channel (``values``,
``updates``, ``tasks``, ``debug``, ``checkpoints`` modes), so recalled memory in state
would reach whoever streams the run. The state carries two private markers only:
the thread its history was recorded under (a run on another thread is a branch of
it) and the human message whose turn was recorded (a retried run records nothing
twice). A turn is sent under an event id drawn from these ids and its human
message's: a turn the service may have taken without confirming it (a gateway's
answer lost) is sent again under that id by the retried run, and recorded once.

Memory never breaks a run: a prefetch past its deadline leaves its block out, a tool
call that cannot be served answers the model with a result saying so, a turn that
cannot be recorded is logged. A run that names no user is refused.

Synchronous ``invoke`` / ``stream`` raise :class:`~memsvc.errors.AsyncOnlyError`: the
client lives on the event loop that opened it, and a bridge from a worker thread back
to that loop deadlocks when the caller blocks the loop itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Annotated, Any, NotRequired, TypeGuard, TypeVar

import structlog
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel

from memsvc.client import MemoryClient, PrefetchContext
from memsvc.errors import (
    AsyncOnlyError,
    InvalidInputError,
    MemoryServiceError,
    MemoryUnavailableError,
    WritePendingError,
)
from memsvc.events import MAX_EVENT_BYTES, MAX_QUERY_CHARS, MAX_TURN_CHARS
from memsvc.ids import DEFAULT_THREAD, InvalidIdError, id_for, validate_id
from memsvc.security.scrubber import DEFAULT_CONTEXT_TAG, scrub

__all__ = ["MemoryContext", "MemoryMiddleware", "MemoryState"]

log = structlog.get_logger(__name__)

DEFAULT_AGENT = "default"
MAX_OPEN_TURNS = 1024  # turns fetched and not ended yet: a run that died never ends its own
SUMMARY_SOURCE = "summarization"  # how SummarizationMiddleware marks the summary it writes

M = TypeVar("M", bound=BaseMessage)
TurnKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class MemoryContext:
    """Whose memory a run uses, passed as ``context=``; any object or mapping with these
    fields works too. ``thread_id`` names the memory session when it is not the graph's."""

    user_id: str
    agent_id: str = DEFAULT_AGENT
    thread_id: str | None = None


class MemoryState(AgentState[Any]):
    """The middleware's markers in the agent state: checkpointed, never in input or output."""

    memsvc_thread: NotRequired[Annotated[str, PrivateStateAttr]]  # history recorded under it
    # the exchange recorded last (its turn's event id): a state forked after it, the answer
    # taken out and run again, records its new answer
    memsvc_synced: NotRequired[Annotated[str, PrivateStateAttr]]


@dataclass(frozen=True)
class _Ids:
    """A run's ids, resolved and checked."""

    user_id: str
    agent_id: str
    thread_id: str


@dataclass(frozen=True)
class _Turn:
    """What one turn fetched, reused on every step of its tool loop."""

    snapshot: str
    recall: str
    tools: list[dict[str, Any]]
    scrub_tag: str

    @property
    def tool_names(self) -> set[str]:
        return {tool["name"] for tool in self.tools}


class MemoryMiddleware(AgentMiddleware[MemoryState, Any]):
    """memsvc in a ``create_agent`` graph: prefetch, tools and ``sync_turn`` at the right
    hooks, with the ids of each run.

    ``default_user_id`` serves runs that name no user; without it such a run is refused,
    never given some default user's memory. ``deadline`` overrides the client's prefetch
    deadline (``MEMSVC_PREFETCH_DEADLINE_SECONDS``); a run that opens a branch shares it
    between the branch's announcement (at most half) and the prefetch.
    """

    state_schema = MemoryState

    def __init__(
        self,
        client: MemoryClient,
        *,
        default_user_id: str | None = None,
        deadline: float | None = None,
    ) -> None:
        self._client = client
        self._default_user = (
            None if default_user_id is None else validate_id("user_id", default_user_id)
        )
        self._deadline = deadline
        self._turns: dict[TurnKey, _Turn] = {}

    def before_agent(self, state: MemoryState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        raise AsyncOnlyError(
            "MemoryMiddleware uses an asyncio MemoryClient: run the agent with "
            "'await agent.ainvoke(...)' or 'agent.astream(...)', not invoke() or stream()"
        )

    async def abefore_agent(
        self, state: MemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        ids = self._ids(runtime)
        stamped = state.get("memsvc_thread")
        deadline = self._turn_deadline()
        if stamped and stamped != ids.thread_id:
            # before the prefetch, which takes the snapshot; the two share the turn's deadline
            started = time.monotonic()
            await self._branch(ids, parent=stamped, deadline=deadline / 2)
            deadline -= time.monotonic() - started
        human = _latest_human(state["messages"])
        self._remember(_key(ids, human), await self._fetch(ids, human, deadline))
        return None if stamped == ids.thread_id else {"memsvc_thread": ids.thread_id}

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        turn = await self._turn(self._ids(request.runtime), request.state["messages"])
        return await handler(_with_memory(request, turn))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        if request.tool is not None:  # one of the agent's own tools
            return await handler(request)
        ids = self._ids(request.runtime)
        turn = await self._turn(ids, request.state["messages"])
        if call["name"] not in turn.tool_names:
            return await handler(request)  # the tool node answers an unknown tool
        result = await self._client.call_tool(
            ids.user_id, ids.agent_id, ids.thread_id, call["name"], call["args"]
        )
        return ToolMessage(
            content=json.dumps(result, ensure_ascii=False),
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error" if result.get("success") is False else "success",
        )

    async def aafter_agent(
        self, state: MemoryState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        ids = self._ids(runtime)
        human = _latest_human(state["messages"])
        turn = self._turns.pop(_key(ids, human), None)
        if human is None:
            return None
        answer = _final_answer(
            state["messages"],
            state.get("structured_response"),
            ours=turn.tool_names if turn is not None else set(),
        )
        if answer is None:
            log.info("memory_turn_not_recorded", **asdict(ids), reason="the run gave no answer")
            return None
        turn_id = _turn_id(ids, human, answer)
        if turn_id is not None and state.get("memsvc_synced") == turn_id:
            log.info("memory_turn_already_recorded", **asdict(ids), message_id=human.id)
            return None
        tag = turn.scrub_tag if turn is not None else DEFAULT_CONTEXT_TAG
        try:
            await self._client.sync_turn(
                ids.user_id,
                ids.agent_id,
                ids.thread_id,
                user_content=_plain(scrub(human.text, tag), MAX_TURN_CHARS),
                assistant_content=_plain(scrub(answer, tag), MAX_TURN_CHARS),
                event_id=turn_id,
            )
        except WritePendingError as exc:  # queued, recorded once: a retried run sends none
            log.warning("memory_turn_pending", **asdict(ids), event_id=exc.event_id)
        except (MemoryServiceError, InvalidInputError) as exc:
            log.warning("memory_turn_not_recorded", **asdict(ids), error=str(exc))
            return None
        return None if turn_id is None else {"memsvc_synced": turn_id}

    # -- helpers --------------------------------------------------------------------

    def _turn_deadline(self) -> float:
        return self._deadline or self._client.settings.prefetch_deadline_seconds

    def _ids(self, runtime: Runtime[Any] | ToolRuntime[Any, Any]) -> _Ids:
        context = runtime.context
        user = _field(context, "user_id") or self._default_user
        if user is None:
            raise InvalidIdError(
                "user_id",
                None,
                "the run names no user: pass context=MemoryContext(user_id=...) to "
                "ainvoke, or build MemoryMiddleware(client, default_user_id=...)",
            )
        info = runtime.execution_info
        graph_thread = (info.thread_id if info is not None else None) or get_config().get(
            "configurable", {}
        ).get("thread_id")
        if named := _field(context, "thread_id"):
            thread = validate_id("thread_id", named)
        elif graph_thread:  # the application's, in any shape: memsvc's id stands for it
            thread = id_for("thread_id", str(graph_thread))
        else:
            thread = DEFAULT_THREAD
        return _Ids(
            user_id=validate_id("user_id", user),
            agent_id=validate_id("agent_id", _field(context, "agent_id") or DEFAULT_AGENT),
            thread_id=thread,
        )

    async def _turn(self, ids: _Ids, messages: Sequence[AnyMessage]) -> _Turn:
        """The turn's memory as ``abefore_agent`` fetched it, or fetched now for a run resumed
        in another process (after an interrupt or a failure)."""
        human = _latest_human(messages)
        key = _key(ids, human)
        turn = self._turns.get(key)
        if turn is None:
            turn = await self._fetch(ids, human, self._turn_deadline())
            self._remember(key, turn)
        return turn

    def _remember(self, key: TurnKey, turn: _Turn) -> None:
        self._turns.pop(key, None)  # re-inserted last: the oldest turn is evicted first
        self._turns[key] = turn
        while len(self._turns) > MAX_OPEN_TURNS:
            del self._turns[next(iter(self._turns))]

    async def _fetch(self, ids: _Ids, human: HumanMessage | None, deadline: float) -> _Turn:
        query = _plain(human.text, MAX_QUERY_CHARS) if human is not None else ""
        context, tools = await asyncio.gather(
            self._prefetch(ids, query, deadline), self._tools(ids, deadline)
        )
        return _Turn(
            snapshot=context.snapshot,
            recall=context.recall,
            tools=tools,
            scrub_tag=context.scrub_tag or DEFAULT_CONTEXT_TAG,
        )

    async def _prefetch(self, ids: _Ids, query: str, deadline: float) -> PrefetchContext:
        context = await self._client.prefetch(
            ids.user_id, ids.agent_id, ids.thread_id, query=query, deadline=deadline
        )
        if context.skipped:  # degraded: the service did not answer, only the snapshot is left
            report = log.warning if context.degraded else log.info
            report("memory_context_skipped", **asdict(ids), skipped=context.skipped)
        return context

    async def _tools(self, ids: _Ids, deadline: float) -> list[dict[str, Any]]:
        """The user's memory tools, under the prefetch's deadline: a turn without them still
        runs."""
        try:
            return await self._client.tool_schemas(ids.user_id, ids.agent_id, deadline=deadline)
        except MemoryServiceError as exc:
            log.warning("memory_tools_unavailable", **asdict(ids), error=str(exc))
            return []

    async def _branch(self, ids: _Ids, *, parent: str, deadline: float) -> None:
        """The history was recorded under ``parent`` (a copied checkpoint, a summary carried
        into a new thread): the new thread keeps the parent's snapshot."""
        try:
            await self._client.session_switch(
                ids.user_id,
                ids.agent_id,
                ids.thread_id,
                parent_thread_id=parent,
                reset=False,
                deadline=deadline,
            )
        except MemoryUnavailableError as exc:  # published maybe: it may still be applied
            log.warning("memory_branch_unconfirmed", **asdict(ids), parent=parent, error=str(exc))
        except MemoryServiceError as exc:
            log.warning("memory_branch_not_announced", **asdict(ids), parent=parent, error=str(exc))


def _with_memory(request: ModelRequest[Any], turn: _Turn) -> ModelRequest[Any]:
    """The request the model gets; the state it came from stays as it was."""
    if turn.snapshot:
        system = request.system_message
        request = request.override(
            system_message=_appended(system, turn.snapshot)
            if system is not None
            else SystemMessage(content=turn.snapshot)
        )
    if turn.recall:
        messages = list(request.messages)
        for index in range(len(messages) - 1, -1, -1):
            if _is_human(messages[index]):
                messages[index] = _appended(messages[index], turn.recall)
                request = request.override(messages=messages)
                break
    taken = {_tool_name(tool) for tool in request.tools}
    offered = [tool for tool in turn.tools if tool["name"] not in taken]  # the agent's own win
    if offered:
        request = request.override(tools=[*request.tools, *offered])
    return request


def _appended(message: M, text: str) -> M:
    content = message.content
    if isinstance(content, str):
        new: str | list[Any] = f"{content}\n\n{text}" if content else text
    else:
        new = [*content, {"type": "text", "text": text}]
    return message.model_copy(update={"content": new})


def _is_human(message: BaseMessage) -> TypeGuard[HumanMessage]:
    """A message the user wrote (a summary of earlier turns is not one)."""
    return (
        isinstance(message, HumanMessage)
        and message.additional_kwargs.get("lc_source") != SUMMARY_SOURCE
    )


def _latest_human(messages: Sequence[AnyMessage]) -> HumanMessage | None:
    for message in reversed(messages):
        if _is_human(message):
            return message
    return None


def _final_answer(
    messages: Sequence[AnyMessage], structured: object = None, *, ours: set[str]
) -> str | None:
    """What the run answered: the structured response it gave (``response_format``), the
    result of one of the agent's tools it ended on (``return_direct``), or the text of its
    last AI message when that answers rather than calls a tool. memsvc's own tools never
    end a run: a run stopped after one (a call limit) answered nothing."""
    if structured is not None:
        return _as_text(structured)
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return None
        if isinstance(message, ToolMessage):
            return (message.text or None) if message.name not in ours else None
        if isinstance(message, AIMessage):
            return message.text if message.text and not message.tool_calls else None
    return None


def _as_text(structured: object) -> str:
    """A structured response as JSON (a pydantic model, a dataclass, a dict ...)."""
    if isinstance(structured, BaseModel):
        return structured.model_dump_json()
    if is_dataclass(structured) and not isinstance(structured, type):
        structured = asdict(structured)
    return json.dumps(structured, ensure_ascii=False, default=str)


def _key(ids: _Ids, human: HumanMessage | None) -> TurnKey:
    message_id = human.id if human is not None and human.id is not None else ""
    return (ids.user_id, ids.agent_id, ids.thread_id, message_id)


def _turn_id(ids: _Ids, human: HumanMessage, answer: str) -> str | None:
    """The turn's event id, the same every time its exchange is run on its thread: a turn
    whose answer was lost (the service may have taken it) is sent again by a retried run
    under that id, and recorded once. Both texts are in it: a message edited under its id
    (a checkpoint forked, the message replaced) and an answer regenerated for it are
    exchanges of their own, recorded as new turns. ``None`` (a new id) for a message with
    no id."""
    if human.id is None:
        return None
    named = "\0".join((ids.user_id, ids.agent_id, ids.thread_id, human.id, human.text, answer))
    return hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _field(context: object, name: str) -> Any:
    return context.get(name) if isinstance(context, Mapping) else getattr(context, name, None)


def _tool_name(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(tool.get("name") or tool.get("function", {}).get("name", ""))


# Each side of a turn at most this many bytes as JSON, so that both and the envelope fit in
# one event: within the character cap, emoji or CJK text (three or four bytes a character)
# could be over it.
_TURN_SIDE_BYTES = (MAX_EVENT_BYTES - 64 * 1024) // 2


def _plain(text: str, limit: int) -> str:
    """At most ``limit`` characters with a UTF-8 form, cut to fit half an event: an event
    never refuses a turn's text."""
    text = text[:limit].encode("utf-8", "replace").decode("utf-8")
    if _json_bytes(text) <= _TURN_SIDE_BYTES:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest start of it that fits
        middle = (low + high + 1) // 2
        if _json_bytes(text[:middle]) <= _TURN_SIDE_BYTES:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def _json_bytes(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8"))
