"""Every way a request is refused before it reaches memory: no token, a wrong or revoked
one, another user's id, a user's token on an admin route."""

from __future__ import annotations

import json
from typing import Any

import pytest
import structlog.testing

from memsvc.gateway.app import PREFIX
from memsvc.paths import DataLayout
from memsvc.store.memfile import entry_hash
from tests.unit.gateway.conftest import Gateway

IDS = {"agent_id": "default", "thread_id": "default"}
# One valid request per route: a refusal is the only reason it could fail.
REQUESTS: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", ""): {},
    ("POST", "/reload"): {"json": IDS},
    ("GET", "/config"): {},
    ("PATCH", "/config"): {"json": {"injection": {"enabled": False}}},
    ("DELETE", "/config/{field}"): {"path": "/config/injection.enabled"},
    ("GET", "/status"): {},
    ("POST", "/entries"): {"json": {"target": "user", "content": "planted"}},
    ("PUT", "/entries/{target}/{idx}"): {
        "path": "/entries/user/0",
        "json": {"content": "planted", "expect": entry_hash("Name: Bob")},
    },
    ("DELETE", "/entries/{target}/{idx}"): {
        "path": "/entries/user/0",
        "params": {"expect": entry_hash("Name: Bob")},
    },
    ("POST", "/search"): {"json": {"query": "tea"}},
    ("POST", "/bank/clear"): {"json": {"bank": "b", "confirm": "b"}},
    ("GET", "/log"): {},
    ("GET", "/explain"): {"params": {"text": "Bob"}},
    ("POST", "/agent/prefetch"): {"json": IDS},
    ("POST", "/agent/queue-prefetch"): {"json": IDS},
    ("GET", "/agent/tools"): {"params": {"agent_id": "default"}},
    ("POST", "/agent/tool"): {
        "json": {
            **IDS,
            "name": "memory",
            "args": {"action": "add", "target": "user", "content": "planted"},
        }
    },
    ("GET", "/agent/writes/{event_id}"): {"path": "/agent/writes/0123456789abcdef"},
    ("POST", "/agent/sync-turn"): {"json": {**IDS, "user_content": "q", "assistant_content": "a"}},
    ("POST", "/agent/session-switch"): {"json": IDS},
    ("GET", "/admin/tokens"): {},
    ("POST", "/admin/tokens"): {"json": {"user_id": "mallory", "admin": True}},
    ("DELETE", "/admin/tokens/{token_id}"): {"path": "/admin/tokens/0123456789ab"},
}
ADMIN_ONLY = {key for key in REQUESTS if key[1].startswith("/admin")}


def api_routes(gateway: Gateway) -> set[tuple[str, str]]:
    """Every operation the served OpenAPI documents under the API prefix."""
    return {
        (method.upper(), path.removeprefix(PREFIX))
        for path, operations in gateway.app.openapi()["paths"].items()
        if path.startswith(PREFIX)
        for method in operations
    }


async def send(
    gateway: Gateway, key: tuple[str, str], headers: dict[str, str], **extra: Any
) -> Any:
    request = REQUESTS[key]
    path = request.get("path", key[1])
    params = {**request.get("params", {}), **extra.get("params", {})}
    body = {**request["json"], **extra.get("json", {})} if "json" in request else None
    return await gateway.http.request(
        key[0], PREFIX + path, headers=headers, params=params, json=body
    )


def test_every_route_has_a_request_here(gateway: Gateway) -> None:
    assert api_routes(gateway) == set(REQUESTS)


@pytest.mark.parametrize(
    "credentials",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
        {"Authorization": "Bearer msv_0123456789ab_" + "x" * 43},  # well formed, unknown
        {"Authorization": "Bearer not-a-token"},
    ],
    ids=["no header", "no token", "not bearer", "unknown", "malformed"],
)
async def test_a_missing_or_wrong_token_is_401_on_every_route(
    gateway: Gateway, credentials: dict[str, str]
) -> None:
    for key in sorted(REQUESTS):
        response = await send(gateway, key, credentials)
        assert response.status_code == 401, key
        assert response.headers["www-authenticate"] == "Bearer"
        assert "detail" in response.json()


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/json"])
@pytest.mark.parametrize("token", ["msv_0123456789ab_" + "x" * 43, "not-a-token"])
async def test_a_wrong_token_is_401_whatever_body_a_timed_call_carries(
    gateway: Gateway, content_type: str | None, token: str
) -> None:
    """A timed call's deadline is read from its body before the token's lookup: a body
    nested too deep for a JSON reader is refused as before (sent as JSON, 400: FastAPI
    could not parse it; sent as anything else, 401: the token), never a 500."""
    headers = {"Authorization": f"Bearer {token}"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    for path in ("/agent/prefetch", "/agent/tool"):
        for body in (b"[" * 100_000, b'{"deadline": ' + b"[" * 100_000 + b"]}"):
            response = await gateway.http.post(PREFIX + path, content=body, headers=headers)
            status = 400 if content_type == "application/json" else 401
            assert response.status_code == status, (path, content_type, response.text[:200])


async def test_a_revoked_token_is_401_on_every_route(gateway: Gateway) -> None:
    for key in sorted(REQUESTS):
        assert (await send(gateway, key, gateway.auth("revoked"))).status_code == 401, key


async def test_failed_auth_is_logged_without_the_token(gateway: Gateway) -> None:
    with structlog.testing.capture_logs() as logs:
        await send(gateway, ("GET", ""), gateway.auth("revoked"))
        await send(gateway, ("GET", ""), {})
    failures = [line for line in logs if line["event"] == "gateway_auth_failed"]
    assert len(failures) == 2
    assert failures[0]["token_id"] == gateway.tokens["revoked"].split("_")[1]
    secret = gateway.tokens["revoked"].split("_", 2)[2]
    assert secret not in json.dumps(logs, default=str)


async def test_another_users_id_in_the_query_is_403_and_reaches_nothing(
    gateway: Gateway,
) -> None:
    await gateway.call(
        "POST", "/entries", as_="bob", json={"target": "user", "content": "Name: Bob"}
    )
    before = (await gateway.call("GET", "", as_="bob")).json()
    for key in sorted(REQUESTS.keys() - ADMIN_ONLY):
        response = await send(gateway, key, gateway.auth("alice"), params={"user_id": "bob"})
        assert response.status_code == 403, key
        assert response.json() == {"detail": "this token reaches only its own user's memory"}
    assert (await gateway.call("GET", "", as_="bob")).json() == before
    assert (await gateway.call("GET", "/config", as_="bob")).json()["sources"][
        "injection.enabled"
    ] == "default"


async def test_another_users_id_in_the_body_is_403(gateway: Gateway) -> None:
    bodies = [
        key
        for key, request in REQUESTS.items()
        if key[1] in ("/reload",) or (key[1].startswith("/agent/") and "json" in request)
    ]
    assert len(bodies) == 6
    for key in bodies:
        response = await send(gateway, key, gateway.auth("alice"), json={"user_id": "bob"})
        assert response.status_code == 403, key
    own = await send(
        gateway, ("POST", "/agent/prefetch"), gateway.auth("alice"), json={"user_id": "alice"}
    )
    assert own.status_code == 200
    unknown = await gateway.call(
        "POST", "/entries", json={"target": "user", "content": "x", "user_id": "bob"}
    )
    assert unknown.status_code == 422  # an entry's body names no user at all


async def test_a_path_cannot_name_another_users_file(gateway: Gateway) -> None:
    await gateway.call(
        "POST", "/entries", as_="bob", json={"target": "user", "content": "Name: Bob"}
    )
    for path in ("/entries/bob/0", "/entries/..%2Fbob/0", "/entries/users%2Fbob%2FUSER.md/0"):
        response = await gateway.call("DELETE", path, params={"expect": entry_hash("Name: Bob")})
        assert response.status_code in (404, 422), path
    bob = (await gateway.call("GET", "", as_="bob")).json()
    assert [entry["content"] for entry in bob["user_md"]] == ["Name: Bob"]


async def test_a_users_token_on_an_admin_route_is_403(gateway: Gateway) -> None:
    for key in sorted(ADMIN_ONLY):
        response = await send(gateway, key, gateway.auth("alice"))
        assert response.status_code == 403, key
        assert response.json() == {"detail": "this route needs an admin token"}
    listed = await send(gateway, ("GET", "/admin/tokens"), gateway.auth("root"))
    assert "mallory" not in [record["user_id"] for record in listed.json()]


@pytest.mark.parametrize("no_auth", [True])
async def test_without_auth_every_request_is_user_default_and_names_no_other(
    gateway: Gateway,
) -> None:
    added = await gateway.http.post(
        PREFIX + "/entries", json={"target": "user", "content": "Name: Default"}
    )
    assert added.status_code == 201
    alice = await gateway.http.get(PREFIX, params={"user_id": "alice"})
    assert alice.status_code == 403
    admin = await gateway.http.get(PREFIX + "/admin/tokens")
    assert admin.status_code == 403
    seen = await gateway.call("GET", "", as_="alice")  # a token changes nothing either
    assert [entry["content"] for entry in seen.json()["user_md"]] == ["Name: Default"]


async def test_a_broken_token_file_is_a_500_that_says_so_in_json(gateway: Gateway) -> None:
    path = DataLayout.at(gateway.service.settings.data_dir).gateway_tokens()
    path.write_bytes(b'{"x": ')
    with structlog.testing.capture_logs() as logs:
        response = await gateway.call("GET", "", params={"agent_id": "coder"})
    assert response.status_code == 500
    assert response.json() == {
        "detail": {
            "error": "the gateway's token store cannot be read; an operator must fix it",
            "misconfigured": True,
        }
    }
    (logged,) = [e for e in logs if e["event"] == "gateway_token_store_unreadable"]
    assert "gateway_tokens.json" in logged["error"]
