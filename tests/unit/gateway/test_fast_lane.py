"""The agents' per-turn calls answer the same through the fast lane as through FastAPI's
routing, and the requests the lane does not take still reach FastAPI whole."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse
from fastapi.routing import APIRoute

from memsvc.gateway import fastlane, models
from memsvc.gateway.app import (
    AGENT_LANES,
    PREFIX,
    Admin,
    Caller,
    UserQuery,
    admin,
    caller,
    create_app,
)
from memsvc.gateway.auth import FileTokenStore, Tokens
from memsvc.paths import DataLayout
from tests.conftest import until
from tests.unit.conftest import Service
from tests.unit.gateway.conftest import Gateway, issue_tokens

IDS = {"agent_id": "coder", "thread_id": "t1"}
VARIABLE = {"event_id", "timings_ms"}  # fresh on every call, whichever way it went


def long_ways(gateway: Gateway) -> Counter[str]:
    """Requests that FastAPI's router handed to an agent route, by route path."""
    handled: Counter[str] = Counter()
    for route in gateway.app.router.routes:
        if isinstance(route, APIRoute) and route.path.startswith(PREFIX + "/agent/"):
            handle = route.handle

            async def counted(scope: Any, receive: Any, send: Any, handle=handle) -> None:  # type: ignore[no-untyped-def]
                handled[scope["route"].path] += 1
                await handle(scope, receive, send)

            route.handle = counted  # type: ignore[method-assign]
    return handled


def comparable(response: httpx.Response) -> tuple[int, Any, str | None]:
    body = response.json()
    if isinstance(body, dict):
        body = {k: (k if k in VARIABLE else v) for k, v in body.items()}
    return response.status_code, body, response.headers.get("www-authenticate")


# (path, body, query, token) of requests an agent sends, refusals included
PLAIN: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    ("prefetch", {**IDS, "query": "build"}, {}, "alice"),
    ("prefetch", {**IDS, "query": "build"}, {"user_id": "alice"}, "alice"),
    ("prefetch", {**IDS, "user_id": "alice"}, {"user_id": "alice"}, "alice"),
    ("prefetch", IDS, {"user_id": "bob"}, "alice"),  # another user's memory: 403
    ("prefetch", {**IDS, "user_id": "bob"}, {}, "alice"),
    ("prefetch", IDS, {"user_id": "alice"}, "root"),  # an admin may name a user
    ("prefetch", {**IDS, "user_id": "alice"}, {"user_id": "bob"}, "root"),  # two users: 400
    ("prefetch", IDS, {}, "revoked"),  # 401, with its challenge
    ("prefetch", IDS, {}, "nobody"),
    ("queue-prefetch", {**IDS, "query": "next"}, {}, "alice"),
    ("tool", {**IDS, "name": "memory", "args": {"x": 1}}, {}, "alice"),  # refused, for the model
    ("tool", {**IDS, "name": "recall", "args": {}}, {}, "alice"),
    ("sync-turn", {**IDS, "user_content": "q", "assistant_content": "a"}, {}, "alice"),
    ("sync-turn", {**IDS, "user_content": "q", "assistant_content": "a"}, {}, "bob"),
    ("session-switch", {"agent_id": "coder", "thread_id": "t2"}, {}, "alice"),
    ("session-switch", {"agent_id": "coder", "thread_id": "t2"}, {"user_id": "bob"}, "alice"),
]


def headers(gateway: Gateway, token: str) -> dict[str, str]:
    value = gateway.tokens.get(token, "memsvc_0123456789ab_unknown")
    return {"Authorization": f"Bearer {value}", "Content-Type": "application/json"}


async def test_lanes_cover_the_agents_calls_that_carry_a_body(gateway: Gateway) -> None:
    posted = {
        route.path.removeprefix(PREFIX + "/agent/")
        for route in gateway.app.router.routes
        if isinstance(route, APIRoute)
        and route.path.startswith(PREFIX + "/agent/")
        and "POST" in (route.methods or ())
    }
    assert set(AGENT_LANES) == posted


@pytest.mark.parametrize(("name", "body", "query", "token"), PLAIN)
async def test_a_plain_call_is_answered_as_the_router_answers_it(
    gateway: Gateway, name: str, body: dict[str, Any], query: dict[str, str], token: str
) -> None:
    handled = long_ways(gateway)
    path = f"{PREFIX}/agent/{name}"
    fast = await gateway.http.post(path, json=body, params=query, headers=headers(gateway, token))
    assert handled[path] == 0, "a plain call went the long way"
    # an extra query parameter (ignored by the route) sends the same call the long way
    slow = await gateway.http.post(
        path, json=body, params={**query, "via": "router"}, headers=headers(gateway, token)
    )
    assert handled[path] == 1
    assert comparable(fast) == comparable(slow)


async def test_a_memory_write_through_the_lane_lands_once(gateway: Gateway) -> None:
    handled = long_ways(gateway)
    args = {"action": "add", "target": "memory", "content": "Build with uv"}
    written = await gateway.http.post(
        PREFIX + "/agent/tool",
        json={**IDS, "name": "memory", "args": args},
        headers=headers(gateway, "alice"),
    )
    assert written.status_code == 200 and written.json()["success"] is True
    memory = (await gateway.call("GET", "?agent_id=coder")).json()["memory_md"]
    assert [entry["content"] for entry in memory] == ["Build with uv"]
    ctx = await gateway.http.post(
        PREFIX + "/agent/prefetch", json=IDS, headers=headers(gateway, "alice")
    )
    assert "Build with uv" in ctx.json()["text"]
    assert sum(handled.values()) == 0


@pytest.mark.parametrize(
    ("content", "query", "body", "status"),
    [
        (b'{"agent_id": "coder", "thread_id": "t1", "extra": 1}', {}, None, 422),
        (b'{"agent_id": "../etc", "thread_id": "t1"}', {}, None, 422),
        (b"agent_id=coder", {}, None, 422),  # not JSON
        (b'{"agent_id": "coder", "query": "\xff"}', {}, None, 400),  # not UTF-8
        (b"", {}, None, 422),
        (None, {"user_id": "al ice"}, IDS, 422),  # escaped in the query
        (None, {"user_id": "alice", "other": "x"}, IDS, 200),  # ignored by the route
    ],
)
async def test_what_the_lane_does_not_take_reaches_the_router_whole(
    gateway: Gateway,
    content: bytes | None,
    query: dict[str, str],
    body: dict[str, Any] | None,
    status: int,
) -> None:
    handled = long_ways(gateway)
    path = PREFIX + "/agent/prefetch"
    response = await gateway.http.post(
        path, content=content, json=body, params=query, headers=headers(gateway, "alice")
    )
    assert handled[path] == 1
    assert response.status_code == status, response.text


@pytest.mark.parametrize("content_type", ["text/plain", "application/vnd.api+json", None])
async def test_other_content_types_go_the_long_way(
    gateway: Gateway, content_type: str | None
) -> None:
    handled = long_ways(gateway)
    auth = gateway.auth("alice")
    sent = {**auth, "Content-Type": content_type} if content_type else auth
    path = PREFIX + "/agent/queue-prefetch"
    response = await gateway.http.post(path, content=b'{"agent_id": "coder"}', headers=sent)
    assert handled[path] == 1
    # FastAPI reads JSON only when it is declared so
    assert response.status_code == (202 if content_type and "json" in content_type else 422)


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_a_body_sent_in_chunks_is_read_whole_and_a_large_one_replayed(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    handled = long_ways(gateway)
    path = PREFIX + "/agent/sync-turn"
    turn = (
        b'{"agent_id": "coder", "thread_id": "t1", "user_content": "%s", "assistant_content": "a"}'
    )
    parts = (turn % (b"q" * 3000)).partition(b"q" * 1000)
    small = await gateway.http.post(path, content=chunks(*parts), headers=headers(gateway, "alice"))
    assert small.status_code == 202 and handled[path] == 0
    monkeypatch.setattr(fastlane, "MAX_BODY_BYTES", 500)
    large = await gateway.http.post(path, content=chunks(*parts), headers=headers(gateway, "alice"))
    assert large.status_code == 202 and handled[path] == 1

    async def logged() -> list[Any]:
        return [e.event for e in await gateway.service.log() if e.type == "sync_turn"]

    async def both() -> bool:
        return len(await logged()) == 2

    await until(both)
    for event in await logged():
        assert event["payload"]["user_content"]["chars"] == 3000  # all of the body, both times


async def test_under_a_root_path_the_router_matches(service: Service) -> None:
    """The router strips a root path before it matches (uvicorn ``--root-path``, a mount); the
    lane leaves such requests to it."""
    tokens = Tokens(FileTokenStore(DataLayout.at(service.settings.data_dir)))
    token = (await issue_tokens(tokens))["alice"]
    app = create_app(service.settings, client=service.client)
    root = "/api/memory"  # a root that the API's own prefix also starts with
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, root_path=root)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
            sent = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            path = PREFIX + "/agent/prefetch"
            mounted = await http.post(root + path, json=IDS, headers=sent)
            assert mounted.status_code == 200 and mounted.json()["degraded"] is False
            # the root stripped, what is left is no route of the app
            assert (await http.post(path, json=IDS, headers=sent)).status_code == 404


def lane_for(*, admin_only: bool = False, **decorator: Any) -> APIRoute:
    """A route shaped like the agents' ones, with its decorator given ``decorator``."""
    router = APIRouter()
    if admin_only:

        @router.post("/x", **decorator)
        async def for_admins(
            request: Request, body: models.SessionSwitch, who: Admin, user_id: UserQuery = None
        ) -> dict[str, Any]:
            return {}

    else:

        @router.post("/x", **decorator)
        async def for_callers(
            request: Request, body: models.SessionSwitch, who: Caller, user_id: UserQuery = None
        ) -> dict[str, Any]:
            return {}

    (only,) = router.routes
    assert isinstance(only, APIRoute)
    return only


def test_a_route_the_lane_would_serve_differently_is_refused_one() -> None:
    assert fastlane.lane(lane_for(), caller).route.path == "/x"
    refused = [
        lane_for(admin_only=True),  # another dependency than the caller
        lane_for(dependencies=[Depends(admin)]),
        lane_for(response_model_exclude_none=True),
        lane_for(response_class=PlainTextResponse),
    ]
    for route in refused:
        with pytest.raises(TypeError, match="not served as a lane serves it"):
            fastlane.lane(route, caller)


@pytest.mark.parametrize("long_way", [False, True])
async def test_a_timed_call_gets_what_its_token_lookup_left_of_its_deadline(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, long_way: bool
) -> None:
    tokens, mem = gateway.app.state.gateway.tokens, gateway.service.client
    given: list[float | None] = []
    authenticate, prefetch, call_tool = tokens.authenticate, mem.prefetch, mem.call_tool

    async def slow_lookup(token: str, **kw: Any) -> Any:
        await asyncio.sleep(0.5)
        return await authenticate(token, **kw)

    async def noting_prefetch(*args: Any, deadline: float | None = None, **kw: Any) -> Any:
        given.append(deadline)
        return await prefetch(*args, deadline=deadline, **kw)

    async def noting_tool(*args: Any, deadline: float | None = None, **kw: Any) -> Any:
        given.append(deadline)
        return await call_tool(*args, deadline=deadline, **kw)

    monkeypatch.setattr(tokens, "authenticate", slow_lookup)
    monkeypatch.setattr(mem, "prefetch", noting_prefetch)
    monkeypatch.setattr(mem, "call_tool", noting_tool)
    params = {"trace": "1"} if long_way else None  # another query: FastAPI's routing
    args = {"action": "add", "content": "Prefers tea"}
    for path, body in [
        ("/agent/prefetch", {**IDS, "deadline": 30}),
        ("/agent/tool", {**IDS, "name": "memory", "args": args, "deadline": 30}),
        ("/agent/prefetch", IDS),  # no deadline: none is made up
    ]:
        response = await gateway.call("POST", path, json=body, params=params)
        assert response.status_code == 200, response.text
    first, second, third = given
    assert first is not None and second is not None and third is None
    assert 0 < first <= 29.5 and 0 < second <= 29.5  # the lookup's half second is spent
