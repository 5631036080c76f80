"""The gateway's routes: ``/api/memory/v2`` over one ``MemoryClient``, behind bearer tokens.

The gateway is a client like any agent process: every route is a call of
:class:`memsvc.client.MemoryClient` (an event for the workers, or a read of the
event log), so a person's edit goes through the same store, lock, scanner,
limits and event log as the model's ``memory`` tool. Without
``MEMSVC_REDIS_URL`` the client runs its worker in this process.

Who a request acts for comes from its token alone: a ``user_id`` in the query or
the body must be the token's own user (else 403) unless the token is an admin's,
which may name any user. Errors of :mod:`memsvc.errors` become HTTP statuses in
one table (:mod:`memsvc.gateway.statuses`), always as ``{"detail": ...}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import TypeAdapter
from redis.exceptions import RedisError, ResponseError

from memsvc.builtin.replies import DUPLICATE
from memsvc.client import LOG_CURSOR, MemoryClient
from memsvc.errors import (
    AuthenticationError,
    InvalidInputError,
    MemoryMisconfiguredError,
    MemoryUnavailableError,
    MemsvcError,
    PermissionDeniedError,
    UnsafeFileError,
    WritePendingError,
)
from memsvc.events import ENTRY_HASH, EVENT_ID, MAX_ENTRY_INDEX, MAX_QUERY_CHARS
from memsvc.gateway import auth, metrics, models
from memsvc.gateway.auth import FileTokenStore, Principal, RedisTokenStore, Tokens
from memsvc.gateway.fastlane import BODY, FastLane, lane
from memsvc.gateway.page import router as page_router
from memsvc.gateway.statuses import detail_of, json_safe, status_of
from memsvc.heap import collect_in_full
from memsvc.ids import DEFAULT_AGENT, validate_id
from memsvc.keys import Keys
from memsvc.paths import DataLayout, Target
from memsvc.redisconn import (
    REDIS_DOWN,
    cancel_and_wait,
    connect,
    lasting_refusal,
    refused_user,
)
from memsvc.settings import ServiceSettings

log = structlog.get_logger(__name__)

PREFIX = "/api/memory/v2"
NO_AUTH_USER = "default"
# the calls an agent makes every turn, served by the fast lane (memsvc.gateway.fastlane)
AGENT_LANES = ("prefetch", "queue-prefetch", "tool", "sync-turn", "session-switch")
# the calls whose body may give a ``deadline``, which their token's lookup counts against too
TIMED_CALLS = (f"{PREFIX}/agent/prefetch", f"{PREFIX}/agent/tool")
PENDING_WORDS = (
    "Redis did not confirm the event; the gateway keeps it and publishes it until Redis "
    "takes it: it takes effect once, do not send it again"
)
_ANSWER_BY = "memsvc.answer_by"  # the scope key of when such a call is due (the loop's clock)
_DEADLINE: TypeAdapter[float | None] = TypeAdapter(models.Deadline)
# a deadline shorter than this still lets a healthy Redis answer the token's lookup
LOOKUP_FLOOR_SECONDS = 0.05


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error statuses a route may answer, for its OpenAPI entry."""
    # 400: a body that is not UTF-8 (not JSON: 422); 500: Redis refuses the gateway's user
    always = (400, 401, 403, 422, 500, 503)
    return {code: {"model": models.Error} for code in sorted({*always, *codes})}


@dataclasses.dataclass
class Gateway:
    """What the routes share: the client, the tokens and whether auth is off."""

    mem: MemoryClient
    tokens: Tokens
    no_auth: bool
    ready_within_ms: int  # a worker that beat or read the stream this recently is alive
    refused: str | None = None  # the refusal the readiness check logged last
    refused_by: str = "gateway_redis"  # whose: Redis, or the token file

    def note_refusal(self, refusal: Exception | None) -> None:
        """Log a refusal the readiness check meets when it starts or changes, and its end,
        under the name of what refuses: a probe every few seconds would otherwise repeat it."""
        said = None if refusal is None else str(refusal)
        if said == self.refused:
            return
        token_file = isinstance(refusal, UnsafeFileError)
        by = "gateway_token_store" if token_file else "gateway_redis"
        if self.refused is not None and (refusal is None or by != self.refused_by):
            log.info(f"{self.refused_by}_refusal_over")  # over, or another took its place
        if refusal is not None:
            event = "gateway_token_store_unreadable" if token_file else "gateway_redis_refuses"
            log.error(event, error=said)
            self.refused_by = by
        self.refused = said


def _gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.gateway
    return gateway


bearer = HTTPBearer(auto_error=False, description="a token from `memsvc token add`")


async def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    """The token's principal; a missing, unknown or revoked token is refused (logged, never
    with the token itself)."""
    gateway = _gateway(request)
    if gateway.no_auth:
        return Principal(NO_AUTH_USER)
    client = request.client.host if request.client else None
    if credentials is None:
        log.warning(
            "gateway_auth_failed", reason="no bearer token", path=request.url.path, client=client
        )
        raise AuthenticationError("a bearer token is required")
    deadline = None
    token_id = auth.token_id(credentials.credentials)
    if token_id is not None:  # else not looked up
        deadline = await _deadline_of(request)
    if deadline is not None:
        request.scope[_ANSWER_BY] = asyncio.get_running_loop().time() + deadline
        deadline = max(deadline, LOOKUP_FLOOR_SECONDS)
    try:
        principal = await gateway.tokens.authenticate(credentials.credentials, within=deadline)
    except UnsafeFileError as exc:  # the token file, hand-edited or cut short
        log.error("gateway_token_store_unreadable", error=str(exc))
        said = "the gateway's token store cannot be read; an operator must fix it"
        raise MemoryMisconfiguredError(said) from None
    if principal is None:
        log.warning(
            "gateway_auth_failed",
            reason="unknown, revoked or malformed token",
            token_id=token_id,
            path=request.url.path,
            client=client,
        )
        raise AuthenticationError("the token is not valid")
    return principal


async def _deadline_of(request: Request) -> float | None:
    """The ``deadline`` a timed call's body gives, read as its route reads it (``None``:
    none, or one the route refuses, after the token)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or route.path not in TIMED_CALLS:
        return None
    body = request.scope.get(BODY)
    if body is not None:  # as the fast lane parsed it
        deadline: float | None = body.deadline
        return deadline
    if not _json_body(request):  # FastAPI parsed no JSON: nothing is parsed here either
        return None
    try:
        parsed = await request.json()  # what FastAPI parsed, kept by the request
        return _DEADLINE.validate_python(parsed.get("deadline"))
    except Exception:  # not an object, a deadline out of range: the route's to refuse
        return None


def _json_body(request: Request) -> bool:
    """Whether FastAPI read the body as JSON: declared ``application/json`` or ``+json``."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


def _left(request: Request, deadline: float | None) -> float | None:
    """What is left of a timed call's ``deadline`` once its token was looked up."""
    due: float | None = request.scope.get(_ANSWER_BY)
    if deadline is None or due is None:
        return deadline
    return max(due - asyncio.get_running_loop().time(), 0.001)


async def admin(principal: Annotated[Principal, Depends(caller)]) -> Principal:
    if not principal.admin:
        raise PermissionDeniedError("this route needs an admin token")
    return principal


Caller = Annotated[Principal, Depends(caller)]
UserQuery = Annotated[
    str | None,
    Query(max_length=128, description="another user (admin tokens only); default the token's"),
]
AgentQuery = Annotated[str, Query(max_length=128)]


def acting_user(principal: Principal, *named: str | None) -> str:
    """The user a request acts for: the token's, or the one it names if it may."""
    names = {validate_id("user_id", name) for name in named if name is not None}
    if len(names) > 1:
        raise InvalidInputError("the query and the body name different users")
    if not names:
        return principal.user_id
    (name,) = names
    if name != principal.user_id and not principal.admin:
        log.warning("gateway_forbidden", token_id=principal.token_id, named_user=name)
        raise PermissionDeniedError("this token reaches only its own user's memory")
    return name


router = APIRouter(prefix=PREFIX)


def _mem(request: Request) -> MemoryClient:
    return _gateway(request).mem


# -- a person's view ----------------------------------------------------------------------


@router.get("", response_model=models.MemoryView, responses=_errors())
async def get_memory(
    request: Request, who: Caller, agent_id: AgentQuery = DEFAULT_AGENT, user_id: UserQuery = None
) -> dict[str, Any]:
    """Both files (entries with their index and hash), their usage and last change, Hindsight."""
    return await _mem(request).get_memory(acting_user(who, user_id), agent_id)


@router.post("/reload", response_model=models.Snapshot, responses=_errors())
async def reload(
    request: Request, body: models.Reload, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Refresh a thread's frozen snapshot from the files now."""
    user = acting_user(who, user_id, body.user_id)
    return {"text": await _mem(request).reload_snapshot(user, body.agent_id, body.thread_id)}


@router.get("/config", response_model=models.ConfigView, responses=_errors())
async def get_config(request: Request, who: Caller, user_id: UserQuery = None) -> dict[str, Any]:
    """The effective config, the source of every field, the fields a user may override."""
    return await _mem(request).get_memory_config(acting_user(who, user_id))


@router.patch("/config", response_model=models.ConfigView, responses=_errors())
async def patch_config(
    request: Request, changes: dict[str, Any], who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Merge whitelisted fields into the user's overrides (``null`` removes one)."""
    return await _mem(request).update_memory_config(acting_user(who, user_id), changes)


@router.delete("/config/{field}", response_model=models.ConfigView, responses=_errors())
async def delete_config_field(
    request: Request,
    who: Caller,
    field: Annotated[str, Path(pattern=r"^[a-z_]{1,40}(\.[a-z_]{1,40}){0,3}$")],
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """Remove one field (``injection.enabled``) from the user's overrides."""
    return await _mem(request).reset_memory_config(acting_user(who, user_id), field)


@router.get("/status", response_model=models.Status, responses=_errors())
async def status(
    request: Request, who: Caller, agent_id: AgentQuery = DEFAULT_AGENT, user_id: UserQuery = None
) -> dict[str, Any]:
    """Providers, banks, Hindsight reachable and its latest recall's hits; the service's
    queues and dead letters for an admin token (they count every user's events)."""
    body = await _mem(request).memory_status(acting_user(who, user_id), agent_id)
    if not (who.admin or _gateway(request).no_auth):
        body = {**body, "queue": None, "dead_letters": None}
    return body


@router.post(
    "/entries",
    status_code=201,
    response_model=models.WriteResult,
    responses={
        **_errors(),
        200: {"model": models.WriteResult, "description": "already there: nothing added"},
    },
)
async def add_entry(
    request: Request,
    response: Response,
    body: models.EntryAdd,
    who: Caller,
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """Add an entry, as the ``memory`` tool would: 201 when it was added, 200 when the
    file holds it already (an exact duplicate is a no-op, as for the tool)."""
    user = acting_user(who, user_id)
    result = await _mem(request).add_memory_entry(user, body.agent_id, body.target, body.content)
    if result.get("message") == DUPLICATE:
        response.status_code = 200
    return result


Index = Annotated[int, Path(ge=0, le=MAX_ENTRY_INDEX)]


@router.put("/entries/{target}/{idx}", response_model=models.WriteResult, responses=_errors(409))
async def replace_entry(
    request: Request,
    target: Target,
    idx: Index,
    body: models.EntryReplace,
    who: Caller,
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """Replace the entry at ``idx``; 409 if it no longer has the hash ``expect``."""
    return await _mem(request).replace_memory_entry(
        acting_user(who, user_id), body.agent_id, target, idx, body.content, expect=body.expect
    )


@router.delete("/entries/{target}/{idx}", response_model=models.WriteResult, responses=_errors(409))
async def remove_entry(
    request: Request,
    target: Target,
    idx: Index,
    who: Caller,
    expect: Annotated[str, Query(pattern=ENTRY_HASH)],
    agent_id: AgentQuery = DEFAULT_AGENT,
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """Remove the entry at ``idx``; 409 if it no longer has the hash ``expect``."""
    return await _mem(request).remove_memory_entry(
        acting_user(who, user_id), agent_id, target, idx, expect=expect
    )


@router.post("/search", response_model=models.SearchResult, responses=_errors(404))
async def search(
    request: Request, body: models.SearchRequest, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Hindsight recall (or ``mode: reflect``) on the caller's own banks."""
    return await _mem(request).search_memory(
        acting_user(who, user_id), body.agent_id, body.query, mode=body.mode, scope=body.scope
    )


@router.post("/bank/clear", response_model=models.Cleared, responses=_errors(400, 404))
async def clear_bank(
    request: Request, body: models.BankClear, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Empty one of the caller's banks; ``confirm`` must repeat ``bank``. Logged."""
    return await _mem(request).clear_bank(
        acting_user(who, user_id), body.agent_id, body.bank, confirm=body.confirm
    )


@router.get("/explain", response_model=models.Explanation, responses=_errors())
async def explain(
    request: Request,
    who: Caller,
    text: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS)],
    agent_id: Annotated[
        str | None, Query(max_length=128, description="default: every agent's MEMORY.md")
    ] = None,
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """The logged writes behind the caller's entries that hold ``text``, oldest first."""
    return await _mem(request).explain_memory(acting_user(who, user_id), text, agent_id=agent_id)


@router.get("/log", response_model=models.LogPage, responses=_errors())
async def read_log(
    request: Request,
    who: Caller,
    before: Annotated[str, Query(pattern=f"^({LOG_CURSOR.pattern})$")] = "+",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    event_type: Annotated[str | None, Query(alias="type", max_length=32)] = None,
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """The caller's records of the event log, newest first; ``next`` pages on."""
    return await _mem(request).read_log(
        acting_user(who, user_id), before=before, limit=limit, event_type=event_type
    )


# -- agents not written in Python ---------------------------------------------------------


@router.post("/agent/prefetch", response_model=models.PrefetchContext, responses=_errors())
async def agent_prefetch(
    request: Request, body: models.Prefetch, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """The memory to inject this turn; never fails because a provider is slow or down."""
    ctx = await _mem(request).prefetch(
        acting_user(who, user_id, body.user_id),
        body.agent_id,
        body.thread_id,
        body.query,
        deadline=_left(request, body.deadline),
    )
    return vars(ctx)  # its fields, flat: the response model copies what it reads


@router.post(
    "/agent/queue-prefetch", status_code=202, response_model=models.Published, responses=_errors()
)
async def agent_queue_prefetch(
    request: Request, body: models.QueuePrefetch, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Prepare the next turn's recall now; answers once the request is queued."""
    user = acting_user(who, user_id, body.user_id)
    await _mem(request).queue_prefetch(user, body.agent_id, body.thread_id, body.query)
    return {"event_id": None}


@router.get("/agent/tools", response_model=models.ToolSchemas, responses=_errors())
async def agent_tools(
    request: Request, who: Caller, agent_id: AgentQuery, user_id: UserQuery = None
) -> dict[str, Any]:
    """The tools the agent may offer its model (OpenAI function schemas)."""
    return {"schemas": await _mem(request).tool_schemas(acting_user(who, user_id), agent_id)}


@router.post("/agent/tool", response_model=dict[str, Any], responses=_errors())
async def agent_tool(
    request: Request, body: models.ToolCall, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Run a memory tool; its result is what the model reads (never an HTTP error)."""
    return await _mem(request).call_tool(
        acting_user(who, user_id, body.user_id),
        body.agent_id,
        body.thread_id,
        body.name,
        body.args,
        deadline=_left(request, body.deadline),
        mirror=body.mirror,
    )


@router.get("/agent/writes/{event_id}", response_model=models.WriteOutcome, responses=_errors())
async def agent_write_outcome(
    request: Request,
    who: Caller,
    event_id: Annotated[str, Path(pattern=EVENT_ID)],
    user_id: UserQuery = None,
) -> dict[str, Any]:
    """How a write answered as pending ended; ``result`` is null while it is queued."""
    result = await _mem(request).write_outcome(acting_user(who, user_id), event_id)
    return {"event_id": event_id, "result": result}


@router.post(
    "/agent/sync-turn", status_code=202, response_model=models.Published, responses=_errors()
)
async def agent_sync_turn(
    request: Request, body: models.SyncTurn, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """Record a finished turn; answers once it is durably queued. Sent again with the
    ``event_id`` it was first sent with (or answered), it is recorded once."""
    event_id = await _mem(request).sync_turn(
        acting_user(who, user_id, body.user_id),
        body.agent_id,
        body.thread_id,
        user_content=body.user_content,
        assistant_content=body.assistant_content,
        turn_index=body.turn_index,
        event_id=body.event_id,
    )
    return {"event_id": event_id}


@router.post("/agent/session-switch", response_model=models.Published, responses=_errors())
async def agent_session_switch(
    request: Request, body: models.SessionSwitch, who: Caller, user_id: UserQuery = None
) -> dict[str, Any]:
    """The agent moved to ``thread_id`` (``reset``: from the files; else keep the parent's);
    answered once a worker applied it, so the thread's next call finds it applied (or
    once ``deadline`` has passed with it in Redis)."""
    event_id = await _mem(request).session_switch(
        acting_user(who, user_id, body.user_id),
        body.agent_id,
        body.thread_id,
        parent_thread_id=body.parent_thread_id,
        reset=body.reset,
        deadline=body.deadline,
    )
    return {"event_id": event_id}


# -- admin --------------------------------------------------------------------------------

Admin = Annotated[Principal, Depends(admin)]


@router.get("/admin/tokens", response_model=list[models.TokenInfo], responses=_errors())
async def list_tokens(request: Request, _: Admin) -> list[dict[str, object]]:
    """Every token's record (never a token or its hash)."""
    return [record.public() for record in await _gateway(request).tokens.list()]


@router.post("/admin/tokens", status_code=201, response_model=models.NewToken, responses=_errors())
async def add_token(request: Request, body: models.TokenAdd, _: Admin) -> dict[str, object]:
    """A new token, shown once in the answer."""
    record, token = await _gateway(request).tokens.add(body.user_id, admin=body.admin)
    return {**record.public(), "token": token}


@router.delete("/admin/tokens/{token_id}", status_code=204, responses=_errors(404))
async def revoke_token(
    request: Request, _: Admin, token_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")]
) -> Response:
    """Revoke a token by its id: refused here from the next request on, by other gateways
    as soon as they read the announcement."""
    await _gateway(request).tokens.revoke(token_id)
    return Response(status_code=204)


# -- operations ---------------------------------------------------------------------------

ops = APIRouter()


@ops.get("/healthz", response_model=dict[str, str])
async def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@ops.get("/readyz", response_model=dict[str, Any], responses={503: {"model": dict[str, Any]}})
async def readyz(request: Request) -> JSONResponse:
    """Ready: Redis answers, does not refuse this gateway's user (its credentials, an ACL
    refusing the events' publish, the replies' read or the token store's reads) and a
    worker is alive (it beat or read the event stream lately). ``writable: false`` (out
    of memory, a read-only replica ...) does not take readiness away: every gateway
    sharing the Redis meets it alike, and the calls it fails say so. ``refused`` and
    ``writable`` are ``null`` when Redis did not say. Why Redis refuses is in the
    gateway's log, not in this answer, which needs no token."""
    gateway = _gateway(request)
    inbox = gateway.mem.inbox_refusal
    tokens: Exception | None = None  # what the token store's reads were refused with, for good
    try:
        async with asyncio.timeout(gateway.mem.settings.redis_timeout_seconds):
            state = await gateway.mem.bus.readiness(gateway.ready_within_ms)
            if not gateway.no_auth:
                try:
                    await gateway.tokens.probe()
                except ResponseError as exc:  # a passing one is the calls' to meet
                    tokens = exc if lasting_refusal(exc) else None
                except UnsafeFileError as exc:  # the token file cannot be read: no call can
                    tokens = exc
    except REDIS_DOWN as exc:  # TimeoutError is an OSError: the deadline's too
        said = exc if refused_user(exc) else inbox  # a refused password is an answer
        if said is not None:
            gateway.note_refusal(said)
        body = {
            "ready": False,
            "redis": False,
            "workers": 0,
            "refused": True if said is not None else None,
            "writable": None,
        }
        return JSONResponse(body, status_code=503)
    publish = state.publish
    publish_refused = publish is not None and lasting_refusal(publish)  # writes not known
    lasting = [
        r
        for r in (publish if publish_refused else None, state.reads, inbox, tokens)
        if r is not None
    ]
    gateway.note_refusal(lasting[0] if lasting else publish)  # a refused publish is said first
    body = {
        "ready": state.workers > 0 and not lasting,
        "redis": True,
        "workers": state.workers,
        "refused": bool(lasting),
        "writable": None if publish_refused else publish is None,
    }
    return JSONResponse(body, status_code=200 if body["ready"] else 503)


@ops.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus metrics"}},
)
async def prometheus(request: Request) -> Response:
    """Prometheus metrics of this gateway (and of its in-process worker, without Redis)."""
    gateway = _gateway(request)
    if gateway.tokens.watching is not None:
        metrics.TOKEN_WATCH.set(int(gateway.tokens.watching))
    body = await metrics.render(gateway.mem.bus)
    return Response(body, media_type=metrics.CONTENT_TYPE)


# -- the application ----------------------------------------------------------------------


QUOTED_INPUT = 256  # characters of a refused input (or a field's name) an error quotes back
QUOTED_ERRORS = 20  # errors a 422 lists; the rest are counted


def validation_detail(errors: Iterable[Mapping[str, Any]]) -> list[Any]:
    """FastAPI's validation errors as strict JSON, at most ``QUOTED_ERRORS`` of them, each
    quoting at most ``QUOTED_INPUT`` characters of what it refuses and of a field's name: a
    body that is not UTF-8 (sent as text, not JSON) spelt out, a body of megabytes (a huge
    field, thousands of unknown ones) not sent back whole."""
    errors = list(errors)
    detail = []
    for error in errors[:QUOTED_ERRORS]:
        error = dict(error)
        error["loc"] = [_cut(part) if isinstance(part, str) else part for part in error["loc"]]
        if "input" in error:
            quoted = error["input"]
            if isinstance(quoted, bytes | bytearray):
                quoted = bytes(quoted).decode("utf-8", "backslashreplace")
            quoted = json_safe(jsonable_encoder(quoted))
            text = quoted if isinstance(quoted, str) else json.dumps(quoted, ensure_ascii=False)
            error["input"] = quoted if len(text) <= QUOTED_INPUT else _cut(text)
        detail.append(json_safe(jsonable_encoder(error)))
    if len(errors) > QUOTED_ERRORS:
        left_out = len(errors) - QUOTED_ERRORS
        detail.append({"loc": [], "msg": f"{left_out} more errors", "type": "more_errors"})
    return detail


def _cut(text: str) -> str:
    return text if len(text) <= QUOTED_INPUT else text[:QUOTED_INPUT] + "…"


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemsvcError)
    if isinstance(exc, WritePendingError) and isinstance(exc.__cause__, RedisError | OSError):
        # queued in the gateway: said so (a retry would count twice), not in Redis' words
        log.warning("gateway_redis_unavailable", path=request.url.path, error=str(exc.__cause__))
        exc = WritePendingError(PENDING_WORDS, event_id=exc.event_id)
    elif isinstance(exc, MemoryUnavailableError | MemoryMisconfiguredError) and isinstance(
        exc.__cause__, RedisError | OSError
    ):  # its words name the server, or a user
        sent = isinstance(exc, MemoryMisconfiguredError) and exc.sent
        return await _redis_down(request, exc.__cause__, sent=sent)
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, AuthenticationError) else None
    return JSONResponse({"detail": detail_of(exc)}, status_code=status_of(exc), headers=headers)


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422, with the input it quotes made JSON-safe and short."""
    assert isinstance(exc, RequestValidationError)
    return JSONResponse({"detail": validation_detail(exc.errors())}, status_code=422)


async def _redis_down(request: Request, exc: Exception, *, sent: bool = False) -> JSONResponse:
    """Redis away where the gateway reads it itself (a token's record): 503 as for any call,
    without the server's address; Redis refusing the gateway's user: 500, without its
    words (the user, its rights), and ``sent`` when the request went out before."""
    if lasting_refusal(exc):
        log.error("gateway_redis_refuses", path=request.url.path, error=str(exc))
        said = "Redis refuses the gateway; an operator must fix its access"
        if sent:
            said += " (the request was sent before: it may be done)"
        return await _refused(request, MemoryMisconfiguredError(said, sent=sent))
    log.warning("gateway_redis_unavailable", path=request.url.path, error=str(exc))
    return await _refused(request, MemoryUnavailableError("Redis unavailable; retry later"))


def create_app(
    settings: ServiceSettings, *, no_auth: bool = False, client: MemoryClient | None = None
) -> FastAPI:
    """The gateway for ``settings``: its client, tokens and worker start with the app's lifespan.

    ``no_auth``: every request acts for the user ``default``, without a token.
    ``client``: an open client to serve through (the caller's to close), for a
    process that has one already; by default the app opens its own.
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        metrics.install()
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(cancel_and_wait, asyncio.create_task(collect_in_full()))
            mem = client
            if mem is None:
                mem = await stack.enter_async_context(MemoryClient(settings=settings))
            store: FileTokenStore | RedisTokenStore
            if settings.redis_url:
                redis = connect(settings.redis_url, settings)
                stack.push_async_callback(redis.aclose)
                store = RedisTokenStore(
                    redis,
                    Keys(settings.key_prefix),
                    keep_seconds=settings.gateway_token_cache_seconds,
                )
                stack.push_async_callback(cancel_and_wait, asyncio.create_task(store.watch()))
            else:
                store = FileTokenStore(DataLayout.at(settings.data_dir))
            app.state.gateway = Gateway(
                mem, Tokens(store), no_auth, int(settings.claim_idle_seconds * 1000)
            )
            if no_auth:
                log.warning(
                    "gateway_auth_disabled",
                    note=f"every request acts for user '{NO_AUTH_USER}', with no token",
                )
            log.info("gateway_started", embedded=mem.embedded is not None, auth=not no_auth)
            yield

    app = FastAPI(
        title="memsvc gateway",
        version="2",
        description="Long-term memory for LLM agents: the DeerFlow Memory V2 API.",
        lifespan=lifespan,
        # FastAPI's docs pages load their script from a CDN, outside the web page's policy
        docs_url=None,
        redoc_url=None,
        # the routes themselves, not the routers (each an extra level to match every request
        # through); matched in order, the agents' calls first, the web page last
        routes=[*router.routes, *ops.routes, *page_router.routes],
    )
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(MemsvcError, _refused)
    app.add_exception_handler(RedisError, _redis_down)
    agent_lanes = {f"{PREFIX}/agent/{name}" for name in AGENT_LANES}
    app.add_middleware(
        FastLane,
        lanes=[
            lane(route, caller)
            for route in router.routes
            if isinstance(route, APIRoute) and route.path in agent_lanes
        ],
        bearer=bearer,
        caller=caller,
        handlers=app.exception_handlers,
    )
    app.add_middleware(metrics.RequestTimer)
    return app
