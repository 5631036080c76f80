"""``MemoryHTTPClient``: the interface of ``MemoryClient``, over the gateway's HTTP API.

For agents that should not talk to Redis (another network, no credentials for
it): the same methods with the same arguments, results and errors, sent to
``memsvc serve`` with a bearer token. It brings httptools (``pip install
'memsvc[http]'``) and nothing of the worker side or the gateway's server.

```python
async with MemoryHTTPClient("http://memsvc:8731", token) as mem:
    ctx = await mem.prefetch(user_id, agent_id, thread_id, query="...")
```

The same bounds hold: ``prefetch`` never raises because the gateway is down or
slow (it gives an empty, ``degraded`` context within the deadline), ``call_tool``
answers with a result for the model, and the other calls raise errors of
:mod:`memsvc.errors` (:class:`MemoryUnavailableError` when the gateway does not
answer). The user id is sent with every call; with a user's token it must be
that user's own: a token refused or another user's id raises
(:class:`AuthenticationError`, :class:`PermissionDeniedError`) from every call, as
an invalid id does from ``MemoryClient``'s.
"""

from __future__ import annotations

import dataclasses
import json
import os
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlencode

try:
    from memsvc.gateway.http11 import Origin, Unanswered
except ImportError as missing:  # pragma: no cover - an install without the extra
    raise ModuleNotFoundError(
        "MemoryHTTPClient needs httptools: pip install 'memsvc[http]'", name=missing.name
    ) from missing

from memsvc.client import (
    TOOL_MISCONFIGURED,
    TOOL_UNAVAILABLE,
    PrefetchContext,
    invalid_tool_args,
)
from memsvc.errors import (
    AuthenticationError,
    ClientStateError,
    InvalidInputError,
    MemoryMisconfiguredError,
    MemoryUnavailableError,
    MemsvcError,
    PermissionDeniedError,
    WritePendingError,
)
from memsvc.events import MAX_DEADLINE_SECONDS, new_id, validate_event_id
from memsvc.gateway.statuses import error_of
from memsvc.ids import DEFAULT_AGENT, validate_id
from memsvc.settings import ServiceSettings

API = "/api/memory/v2"
# of a caller's deadline, what the gateway is not given: the trip there and back
MARGIN_SHARE, MARGIN_MAX_SECONDS = 0.2, 0.2
SLACK_SECONDS = 2.0  # over the gateway's own deadline for the calls a worker answers
MAX_CONNECTIONS = 100
# a proxy's answers that may come after it passed the request on (Bad Gateway, Gateway Timeout)
PROXY_TIMEOUTS = (502, 504)
# An idle connection is dropped before the gateway drops it (uvicorn: after 5 s), so a
# request is not written onto a connection the server is closing.
KEEPALIVE_SECONDS = 4.0
# Refusals of the caller itself (a closed client, a token, another user's id): raised by
# every call, also those that answer an outage with a result.
_CALLERS_MISTAKES = (ClientStateError, AuthenticationError, PermissionDeniedError)
_CONTEXT_FIELDS = frozenset(field.name for field in dataclasses.fields(PrefetchContext))


class MemoryHTTPClient:
    """``MemoryClient``'s interface over HTTP: see the module docstring.

    Its connections (at most ``MAX_CONNECTIONS``, kept alive between calls) are opened
    by the first call, on that call's event loop; ``aclose`` (or leaving ``async with``)
    closes them, and a call after it raises :class:`ClientStateError`.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        settings: ServiceSettings | None = None,
    ) -> None:
        """``token`` may be ``None`` only for a gateway run with ``--no-auth``."""
        self._settings = settings or ServiceSettings()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._origin = Origin(
            base_url, limit=MAX_CONNECTIONS, keepalive=KEEPALIVE_SECONDS, headers=headers
        )
        self._timeout = self._settings.tool_deadline_seconds + SLACK_SECONDS

    @classmethod
    def from_env(cls) -> MemoryHTTPClient:
        """The gateway at ``MEMSVC_GATEWAY_URL``, with the token in ``MEMSVC_GATEWAY_TOKEN``."""
        token = os.environ.get("MEMSVC_GATEWAY_TOKEN")
        # a token kept in a file and exported with its line break
        return cls(os.environ["MEMSVC_GATEWAY_URL"], token.strip() if token else None)

    async def __aenter__(self) -> MemoryHTTPClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._origin.close()

    # -- the agent's calls --------------------------------------------------------------

    async def prefetch(
        self,
        user_id: str,
        agent_id: str,
        thread_id: str,
        query: str = "",
        *,
        deadline: float | None = None,
    ) -> PrefetchContext:
        """The memory to inject before this turn's model call; never raises because the
        gateway is down or slow, only for the caller's own mistakes (see the module)."""
        seconds = self._settings.prefetch_deadline_seconds if deadline is None else deadline
        body = {"agent_id": agent_id, "thread_id": thread_id, "query": query}
        try:
            reply = await self._call(
                "POST",
                "/agent/prefetch",
                user_id,
                body=body,
                within=seconds,
                pass_on=True,
                retry=True,
            )
        except (*_CALLERS_MISTAKES, InvalidInputError):
            raise  # as MemoryClient raises for an id it refuses
        except MemsvcError as exc:
            return PrefetchContext(text="", skipped={"service": str(exc)}, degraded=True)
        if not isinstance(reply.get("text"), str):  # a 2xx answer from something else
            skipped = {"service": f"the answer is not the gateway's: {reply!r}"[:500]}
            return PrefetchContext(text="", skipped=skipped, degraded=True)
        # the fields this client knows of: a newer gateway may answer with more
        return PrefetchContext(**{k: v for k, v in reply.items() if k in _CONTEXT_FIELDS})

    async def queue_prefetch(
        self, user_id: str, agent_id: str, thread_id: str, query: str = ""
    ) -> None:
        """Ask the workers to prepare the next turn's context; returns once it is queued."""
        body = {"agent_id": agent_id, "thread_id": thread_id, "query": query}
        await self._call("POST", "/agent/queue-prefetch", user_id, body=body, retry=True)

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
        """Run a memory tool; returns its result (the dict the model reads). See
        :meth:`MemoryClient.call_tool` for ``mirror``."""
        seconds = self._settings.tool_deadline_seconds if deadline is None else deadline
        # the host's ids, checked here as MemoryClient checks them: a 422 below is then the
        # model's arguments, answered with a result, never the host's mistake handed to it
        validate_id("user_id", user_id)
        validate_id("agent_id", agent_id)
        validate_id("thread_id", thread_id)
        body: dict[str, Any] = {
            "agent_id": agent_id,
            "thread_id": thread_id,
            "name": name,
            "args": args,
        }
        if not mirror:  # only then: a gateway older than the field still takes the rest
            body["mirror"] = False
        try:
            result = await self._call(
                "POST", "/agent/tool", user_id, body=body, within=seconds, pass_on=True
            )
            if "success" not in result:  # a 2xx answer from something else, which had the call
                raise Unanswered(f"the answer is not the gateway's: {result!r}"[:500])
            return result
        except InvalidInputError as exc:  # the model's arguments: it gets a result to act on
            return invalid_tool_args(name, str(exc))
        except Unanswered as exc:
            return {
                "success": False,
                "pending": True,
                "error": f"Memory did not confirm the call ({exc}). It may still be "
                "applied: do not repeat it in this turn.",
            }
        except _CALLERS_MISTAKES:
            raise  # not the model's mistake nor an outage: never worth a retry
        except MemoryMisconfiguredError:
            return dict(TOOL_MISCONFIGURED)
        except MemsvcError:
            return dict(TOOL_UNAVAILABLE)

    async def write_outcome(self, user_id: str, event_id: str) -> dict[str, Any] | None:
        """How a ``memory`` call answered as pending ended; ``None`` while it is queued."""
        reply = await self._call("GET", f"/agent/writes/{_segment(event_id)}", user_id)
        result: dict[str, Any] | None = reply["result"]
        return result

    async def tool_schemas(
        self, user_id: str, agent_id: str, *, deadline: float | None = None
    ) -> list[dict[str, Any]]:
        """OpenAI function schemas of the tools this user's agent may call."""
        params = {"agent_id": agent_id}
        reply = await self._call("GET", "/agent/tools", user_id, params=params, within=deadline)
        schemas: list[dict[str, Any]] = reply["schemas"]
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
        """Record a finished turn; returns the event id once it is durably queued.

        The turn goes under ``event_id`` (one is chosen when none is given), so a turn
        the gateway did not answer for raises :class:`MemoryUnavailableError` with that
        ``event_id``: sent again under it, the turn is recorded once, whether or not
        the first copy arrived. Needs a gateway that takes ``event_id``.
        """
        event_id = new_id() if event_id is None else validate_event_id(event_id)
        body = {
            "agent_id": agent_id,
            "thread_id": thread_id,
            "user_content": user_content,
            "assistant_content": assistant_content,
            "turn_index": turn_index,
            "event_id": event_id,
        }
        try:
            reply = await self._call("POST", "/agent/sync-turn", user_id, body=body, retry=True)
        except WritePendingError:  # the gateway keeps it: nothing to send again
            raise
        except MemoryUnavailableError as exc:  # not sent, or sent and not answered
            raise MemoryUnavailableError(
                f"{exc}: send the turn again with event_id={event_id!r} (it is recorded once)",
                event_id=event_id,
            ) from exc
        taken: str = reply["event_id"]
        return taken

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
        """The agent moved to ``new_thread_id``; returns the event id once a worker applied it
        (see :meth:`MemoryClient.session_switch`)."""
        body = {
            "agent_id": agent_id,
            "thread_id": new_thread_id,
            "parent_thread_id": parent_thread_id,
            "reset": reset,
        }
        reply = await self._call(
            "POST", "/agent/session-switch", user_id, body=body, within=deadline, pass_on=True
        )
        event_id: str = reply["event_id"]
        return event_id

    async def reload_snapshot(
        self, user_id: str, agent_id: str, thread_id: str, *, deadline: float | None = None
    ) -> str:
        """Refresh the thread's frozen snapshot from the files now; returns the new text."""
        body = {"agent_id": agent_id, "thread_id": thread_id}
        reply = await self._call("POST", "/reload", user_id, body=body, within=deadline, retry=True)
        text: str = reply["text"]
        return text

    # -- a person's view: the DeerFlow V2 methods --------------------------------------

    async def get_memory(
        self, user_id: str, agent_id: str = DEFAULT_AGENT, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.get_memory`."""
        return await self._call("GET", "", user_id, params={"agent_id": agent_id}, within=deadline)

    async def add_memory_entry(
        self,
        user_id: str,
        agent_id: str,
        target: str,
        content: str,
        *,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.add_memory_entry`."""
        body = {"target": target, "content": content, "agent_id": agent_id}
        return await self._call("POST", "/entries", user_id, body=body, within=deadline)

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
        """See :meth:`MemoryClient.replace_memory_entry`."""
        body = {"content": content, "expect": expect, "agent_id": agent_id}
        path = f"/entries/{_segment(target)}/{_segment(str(index))}"
        return await self._call("PUT", path, user_id, body=body, within=deadline)

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
        """See :meth:`MemoryClient.remove_memory_entry`."""
        params = {"expect": expect, "agent_id": agent_id}
        path = f"/entries/{_segment(target)}/{_segment(str(index))}"
        return await self._call("DELETE", path, user_id, params=params, within=deadline)

    async def get_memory_config(
        self, user_id: str, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.get_memory_config`."""
        return await self._call("GET", "/config", user_id, within=deadline)

    async def update_memory_config(
        self, user_id: str, changes: dict[str, Any], *, deadline: float | None = None
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.update_memory_config`."""
        return await self._call("PATCH", "/config", user_id, body=changes, within=deadline)

    async def reset_memory_config(
        self, user_id: str, field: str, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.reset_memory_config`."""
        return await self._call("DELETE", f"/config/{_segment(field)}", user_id, within=deadline)

    async def memory_status(
        self, user_id: str, agent_id: str = DEFAULT_AGENT, *, deadline: float | None = None
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.memory_status`."""
        params = {"agent_id": agent_id}
        return await self._call("GET", "/status", user_id, params=params, within=deadline)

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
        """See :meth:`MemoryClient.search_memory`."""
        body = {"query": query, "mode": mode, "scope": scope, "agent_id": agent_id}
        return await self._call("POST", "/search", user_id, body=body, within=deadline, retry=True)

    async def clear_bank(
        self,
        user_id: str,
        agent_id: str,
        bank: str,
        *,
        confirm: str,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.clear_bank`."""
        body = {"bank": bank, "confirm": confirm, "agent_id": agent_id}
        return await self._call("POST", "/bank/clear", user_id, body=body, within=deadline)

    async def explain_memory(
        self,
        user_id: str,
        text: str,
        *,
        agent_id: str | None = None,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.explain_memory`."""
        params = {"text": text} if agent_id is None else {"text": text, "agent_id": agent_id}
        return await self._call("GET", "/explain", user_id, params=params, within=deadline)

    async def read_log(
        self, user_id: str, *, before: str = "+", limit: int = 50, event_type: str | None = None
    ) -> dict[str, Any]:
        """See :meth:`MemoryClient.read_log`."""
        params: dict[str, Any] = {"before": before, "limit": limit}
        if event_type is not None:
            params["type"] = event_type
        return await self._call("GET", "/log", user_id, params=params)

    # -- plumbing -------------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        user_id: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        within: float | None = None,
        pass_on: bool = False,
        retry: bool = False,
    ) -> dict[str, Any]:
        """One request; its JSON body, or the error its status stands for.

        ``within``: the caller's deadline for the whole exchange. With ``pass_on``
        the gateway is given it less the trip (``deadline`` in the body), so that its
        own answer (a fallback, a pending result) arrives in time. ``retry``: a call
        that changes nothing (as every GET), which may be sent twice.
        """
        seconds = within if within is not None else self._timeout
        if pass_on and body is not None:
            # a longer deadline than the gateway takes: it answers by its own (a fallback,
            # a pending result), as a worker does for MemoryClient
            margin = min(seconds * MARGIN_SHARE, MARGIN_MAX_SECONDS)
            body = {**body, "deadline": min(seconds - margin, MAX_DEADLINE_SECONDS)}
        origin = self._origin
        query = _query({**(params or {}), "user_id": user_id})
        target = f"{origin.path}{API}{_quoted(path)}?{query}"
        data = None if body is None else json.dumps(body).encode()
        status, raw = await origin.request(
            method, target, data, within=seconds, retry=method == "GET" or retry
        )
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = raw.decode(errors="replace")[:500]
        if 200 <= status < 300:
            if not isinstance(answer, dict):  # not the gateway's (a proxy's page, an empty body)
                raise Unanswered(f"the answer (HTTP {status}) is not the gateway's: {answer!r}")
            return answer
        if status in PROXY_TIMEOUTS:  # a proxy's: the gateway may have had the request
            raise Unanswered(f"HTTP {status} from a proxy before the gateway: {answer!r}"[:500])
        raise error_of(status, answer.get("detail") if isinstance(answer, dict) else answer)


def _segment(value: str) -> str:
    """One path segment of the caller's: a dot segment (a proxy would resolve it) or a
    slash (another route) is refused here, as MemoryClient refuses what names nothing."""
    if not isinstance(value, str) or "/" in value or value in ("", ".", ".."):
        raise InvalidInputError(f"{value!r} cannot name a path segment")
    return value


def _quoted(path: str) -> str:
    try:
        return quote(path)
    except UnicodeEncodeError as exc:  # a lone surrogate: no URL holds it
        raise InvalidInputError(f"'{path}' is not valid Unicode text") from exc


def _query(params: dict[str, Any]) -> str:
    for name, value in params.items():
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    try:
        return urlencode(params, quote_via=quote)
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{params} holds text that is not valid Unicode") from exc
