"""Bodies the gateway cannot take, answered as the README's list of errors says."""

from __future__ import annotations

import httpx

from memsvc.gateway.app import PREFIX
from tests.unit.gateway.conftest import Gateway


async def test_a_body_that_is_not_json_is_422_and_one_that_is_not_utf8_is_400(
    gateway: Gateway,
) -> None:
    json_type = {**gateway.auth("alice"), "Content-Type": "application/json"}

    async def post(body: bytes) -> httpx.Response:
        return await gateway.http.post(PREFIX + "/entries", content=body, headers=json_type)

    not_json = await post(b"target=user")
    assert not_json.status_code == 422 and not_json.json()["detail"][0]["type"] == "json_invalid"
    unreadable = await post(b'{"target": "user", "content": "\xff"}')
    assert unreadable.status_code == 400 and isinstance(unreadable.json()["detail"], str)
    assert (await gateway.call("GET", "")).json()["user_md"] == []


async def test_a_bank_clear_without_confirm_is_422_naming_it(gateway: Gateway) -> None:
    unconfirmed = await gateway.call("POST", "/bank/clear", json={"bank": "b"})
    assert unconfirmed.status_code == 422
    assert [e["loc"] for e in unconfirmed.json()["detail"]] == [["body", "confirm"]]


async def test_a_user_id_in_a_body_that_has_none_is_422_not_403(gateway: Gateway) -> None:
    body = {"target": "user", "content": "x", "user_id": "bob"}
    refused = await gateway.call("POST", "/entries", json=body)
    assert refused.status_code == 422
    assert [e["type"] for e in refused.json()["detail"]] == ["extra_forbidden"]
    other = await gateway.call("POST", "/reload", json={"agent_id": "default", "user_id": "bob"})
    assert other.status_code == 403  # a body that names a user names the token's own
