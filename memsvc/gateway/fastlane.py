"""ASGI middleware: the agents' per-turn calls served without FastAPI's per-request machinery.

An agent makes a ``prefetch`` and a ``memory`` call or two every turn, and the
gateway's CPU is what an HTTP caller pays over ``MemoryClient``: about half of
it went to FastAPI's routing, dependency solving and request handling. For the
routes given, a request in the plain form an agent sends (``Content-Type:
application/json``, a body that fits the route's model, no query but
``user_id``) is served here by the route's own parts: the same bearer parsing,
``caller`` dependency, endpoint, response model and exception handlers, so it
is answered as FastAPI would answer it. Any other request (a body that does not
fit, another query, another content type, a root path, a body still streaming
past an event's size) goes on to FastAPI untouched, so every refusal of a
malformed request keeps its one form.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi.datastructures import DefaultPlaceholder
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer
from pydantic import BaseModel, TypeAdapter
from starlette.requests import Request
from starlette.responses import Response

from memsvc.events import MAX_EVENT_BYTES

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
# the app's exception handlers, keyed by exception type (or status code: never matched here)
Handlers = Mapping[Any, Callable[[Request, Exception], Response | Awaitable[Response]]]

# a body still streaming in past an event's size goes the long way (FastAPI sets no limit)
MAX_BODY_BYTES = MAX_EVENT_BYTES
# a user id as agents send it: one that needs no escape (other ids go the long way)
_PLAIN_USER_QUERY = re.compile(rb"user_id=([A-Za-z0-9._@-]{1,128})")
ENDPOINT = ("request", "body", "who", "user_id")
JSON = b"application/json"  # other spellings FastAPI takes as JSON go the long way
BODY = "memsvc.body"  # the scope key of the body as a lane parsed it, for the route's dependency


@dataclass(frozen=True)
class Lane:
    """One route served here: its endpoint, the model its body must fit and how its answer
    is serialised (the route's ``response_model``)."""

    route: APIRoute
    body: type[BaseModel]
    answer: TypeAdapter[Any]


def lane(route: APIRoute, caller: Callable[..., Awaitable[Any]]) -> Lane:
    """The lane of a route that is served by exactly what the lane does: an endpoint taking
    ``(request, body, who, user_id)``, ``caller`` its one dependency, ``user_id`` its one
    query parameter, its answer serialised as FastAPI does by default. Any other route is
    refused (``TypeError``), so a dependency added to it later cannot be skipped here."""
    dependant = route.dependant
    fits = (
        list(inspect.signature(route.endpoint).parameters) == list(ENDPOINT)
        and not route.dependencies
        and [dependency.call for dependency in dependant.dependencies] == [caller]
        and [param.name for param in dependant.query_params] == ["user_id"]
        and not (dependant.path_params or dependant.header_params or dependant.cookie_params)
        and len(dependant.body_params) == 1
        and isinstance(route.response_class, DefaultPlaceholder)
        and route.response_model_include is None
        and route.response_model_exclude is None
        and route.response_model_by_alias
        and not route.response_model_exclude_unset
        and not route.response_model_exclude_defaults
        and not route.response_model_exclude_none
    )
    model = dependant.body_params[0].field_info.annotation if fits else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{route.path} is not served as a lane serves it")
    return Lane(route, model, TypeAdapter(route.response_model))


class FastLane:
    """See the module docstring. ``caller`` resolves a bearer credential to a principal
    (raising what the route's dependency raises); ``handlers`` are the app's exception
    handlers by exception type."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        lanes: list[Lane],
        bearer: HTTPBearer,
        caller: Callable[..., Awaitable[Any]],
        handlers: Handlers,
    ) -> None:
        self._app = app
        self._lanes = {one.route.path: one for one in lanes}
        self._bearer = bearer
        self._caller = caller
        self._handlers = handlers

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # under a root path the router matches another path: that is the router's to do
        plain_path = scope["type"] == "http" and not scope.get("root_path")
        lane = self._lanes.get(scope["path"]) if plain_path else None
        user_id = _user_id(scope["query_string"]) if lane is not None else False
        if lane is None or user_id is False or scope["method"] != "POST" or not _json(scope):
            await self._app(scope, receive, send)
            return
        messages, complete = await _read(receive)
        body = _parse(lane.body, messages) if complete else None
        if body is None:
            await self._app(scope, _replay(messages, receive), send)
            return
        scope["route"] = lane.route  # as FastAPI's router sets it: the metrics label by it
        scope[BODY] = body
        request = Request(scope, receive)
        try:
            who = await self._caller(request, await self._bearer(request))
            result = await lane.route.endpoint(request, body, who, user_id)
            response = Response(
                # validated again and serialised as FastAPI does
                lane.answer.dump_json(
                    lane.answer.validate_python(result, from_attributes=True), by_alias=True
                ),
                status_code=lane.route.status_code or 200,
                media_type="application/json",
            )
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise  # as FastAPI leaves it: a 500 from the outer middleware
            answer = handler(request, exc)
            response = await answer if inspect.isawaitable(answer) else answer
        await response(scope, receive, send)

    def _handler(
        self, exc: Exception
    ) -> Callable[[Request, Exception], Response | Awaitable[Response]] | None:
        for kind in type(exc).__mro__:
            if kind is Exception:  # the outer middleware's: it logs the error, then answers
                return None
            if kind in self._handlers:
                return self._handlers[kind]
        return None


def _json(scope: dict[str, Any]) -> bool:
    """Whether the body is declared as JSON in the plain form an agent sends."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bool(value.partition(b";")[0].strip().lower() == JSON)
    return False


def _user_id(query: bytes) -> str | bool | None:
    """The query's ``user_id``; ``None`` for no query, ``False`` for a query this lane leaves
    to FastAPI (anything but one ``user_id`` spelt without escapes)."""
    if not query:
        return None
    plain = _PLAIN_USER_QUERY.fullmatch(query)
    return False if plain is None else plain[1].decode("ascii")


async def _read(receive: Any) -> tuple[list[dict[str, Any]], bool]:
    """The messages of the body as received, and whether they are all of it (not when the
    body outgrew the lane or the client left)."""
    messages: list[dict[str, Any]] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, False
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            return messages, True
        if size > MAX_BODY_BYTES:
            return messages, False


def _parse(model: type[BaseModel], messages: list[dict[str, Any]]) -> BaseModel | None:
    """The body as the route's model, parsed as FastAPI parses it; ``None`` when it does
    not fit, for FastAPI to refuse in its own words."""
    try:
        return model.model_validate(json.loads(b"".join(m.get("body", b"") for m in messages)))
    except Exception:  # any refusal is FastAPI's to phrase
        return None


def _replay(messages: list[dict[str, Any]], receive: Any) -> Any:
    """``receive`` with the messages already read given back first."""
    pending = iter(messages)

    async def again() -> dict[str, Any]:
        return next(pending, None) or await receive()

    return again
