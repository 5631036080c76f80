"""Bodies the gateway cannot take, answered as the README's list of errors says."""

from __future__ import annotations

import json

import httpx
import pytest

from memsvc.errors import InvalidInputError
from memsvc.events import MAX_EVENT_BYTES, MAX_TURN_CHARS, MAX_TURN_INDEX
from memsvc.gateway.app import PREFIX, QUOTED_ERRORS, QUOTED_INPUT
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


def _strict_json(response: httpx.Response) -> object:
    """The body as strict JSON reads it: UTF-8, no NaN."""

    def refuse(constant: str) -> object:
        raise ValueError(constant)

    return json.loads(response.content.decode("utf-8"), parse_constant=refuse)


# Values JSON parsers take but strict JSON cannot carry back: each is refused with a 422
# whose detail quotes them spelt out (the agents' fast path leaves a body its model refuses
# to FastAPI, so one handler answers both).
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/agent/prefetch", b'{"agent_id": "a1", "deadline": NaN}'),
        ("/agent/prefetch", b'{"agent_id": "a1", "deadline": Infinity}'),
        ("/agent/prefetch", b'{"agent_id": "a1", "deadline": 1e400}'),
        ("/agent/prefetch", b'{"agent_id": "a1", "query": "\\ud800"}'),
        ("/entries", b'{"target": "user", "content": "\\ud800"}'),
    ],
)
async def test_input_that_json_cannot_carry_back_is_422_not_500(
    gateway: Gateway, path: str, body: bytes
) -> None:
    headers = {**gateway.auth("alice"), "Content-Type": "application/json"}
    answer = await gateway.http.post(PREFIX + path, content=body, headers=headers)
    assert answer.status_code == 422, answer.text
    detail = _strict_json(answer)["detail"]  # type: ignore[index]
    assert detail and all("loc" in error for error in detail)
    assert (await gateway.call("GET", "")).json()["user_md"] == []


# A body sent as text rather than JSON reaches the body model as bytes, which the 422
# quotes: bytes that are not UTF-8 must be spelt out, not turned into a 500.
@pytest.mark.parametrize("path", ["/entries", "/agent/prefetch", "/agent/sync-turn", "/agent/tool"])
@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream", None])
async def test_a_body_not_in_utf8_sent_as_text_is_422_not_500(
    gateway: Gateway, path: str, content_type: str | None
) -> None:
    headers = gateway.auth("alice")
    if content_type is not None:
        headers["Content-Type"] = content_type
    answer = await gateway.http.post(PREFIX + path, content=b"\xff\xed\xa0\x80", headers=headers)
    assert answer.status_code == 422, answer.text
    detail = _strict_json(answer)["detail"]  # type: ignore[index]
    assert [error["input"] for error in detail] == ["\\xff\\xed\\xa0\\x80"]
    assert (await gateway.call("GET", "")).json()["user_md"] == []


async def test_a_refused_field_of_megabytes_is_quoted_short(gateway: Gateway) -> None:
    body = {"agent_id": "a1", "thread_id": "t1", "assistant_content": "a"}
    body["user_content"] = "x" * (MAX_TURN_CHARS + 1)
    answer = await gateway.call("POST", "/agent/sync-turn", json={**body, "turn_index": 1})
    assert answer.status_code == 422
    assert len(answer.content) < 4_000
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", "user_content"]
    assert error["input"] == "x" * QUOTED_INPUT + "…"
    many = {"target": "user", "content": "x", **{f"f{n}": 1 for n in range(50)}, "k" * 5000: 1}
    refused = await gateway.call("POST", "/entries", json=many)
    assert refused.status_code == 422 and len(refused.content) < 8_000
    detail = refused.json()["detail"]
    assert len(detail) == QUOTED_ERRORS + 1 and detail[-1]["msg"] == "31 more errors"
    long_name = (await gateway.call("POST", "/entries", json={"k" * 5000: 1})).json()["detail"]
    assert ["body", "k" * QUOTED_INPUT + "…"] in [e["loc"] for e in long_name]
    whole = await gateway.call("POST", "/entries", json={"target": "user", "content": 7})
    assert whole.json()["detail"][0]["input"] == 7  # short inputs are quoted as they are


# The model wrote these arguments: like MemoryClient, the route answers with a result the
# model can act on, never an HTTP error, and the answer is strict JSON.
@pytest.mark.parametrize(
    "args",
    [
        b'{"action": "add", "target": "memory", "content": NaN}',
        b'{"action": "add", "target": "memory", "content": "x \\ud800 y"}',
        b"[1, 2]",
        b'"add"',
        b'{"a": ' * 40 + b"1" + b"}" * 40,
    ],
)
async def test_arguments_the_tool_refuses_get_a_result_not_an_http_error(
    gateway: Gateway, args: bytes
) -> None:
    headers = {**gateway.auth("alice"), "Content-Type": "application/json"}
    body = b'{"agent_id": "a1", "name": "memory", "args": ' + args + b"}"
    answer = await gateway.http.post(PREFIX + "/agent/tool", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    result = _strict_json(answer)
    assert isinstance(result, dict) and result["success"] is False
    assert result["error"].startswith("Invalid memory arguments"), result
    direct = await gateway.service.client.call_tool("alice", "a1", "t", "memory", json.loads(args))
    assert direct == result  # what MemoryClient answers the same arguments
    assert (await gateway.call("GET", "", params={"agent_id": "a1"})).json()["memory_md"] == []


async def test_a_turn_number_past_what_redis_counts_exactly_is_422(gateway: Gateway) -> None:
    turn = {"agent_id": "a1", "thread_id": "t1", "user_content": "q", "assistant_content": "a"}
    refused = await gateway.call("POST", "/agent/sync-turn", json={**turn, "turn_index": 2**63})
    assert refused.status_code == 422
    assert [e["loc"] for e in refused.json()["detail"]] == [["body", "turn_index"]]
    last = {**turn, "turn_index": MAX_TURN_INDEX}
    assert (await gateway.call("POST", "/agent/sync-turn", json=last)).status_code == 202
    with pytest.raises(InvalidInputError):
        await gateway.service.client.sync_turn(
            "alice", "a1", "t1", user_content="q", assistant_content="a", turn_index=2**53 + 1
        )


async def test_an_event_over_the_size_workers_take_is_refused_to_its_sender(
    gateway: Gateway,
) -> None:
    """Text within the character limits can still be over an event's bytes (four bytes a
    character): it is refused when sent, not accepted and then parked by the worker."""
    wide = "😀" * MAX_TURN_CHARS
    turn = {"agent_id": "a1", "thread_id": "t1", "user_content": wide, "assistant_content": wide}
    refused = await gateway.call("POST", "/agent/sync-turn", json=turn)
    assert refused.status_code == 422 and f"{MAX_EVENT_BYTES:,}" in refused.json()["detail"]
    args = {"action": "add", "target": "memory", "content": "z" * MAX_EVENT_BYTES}
    body = {"agent_id": "a1", "thread_id": "t1", "name": "memory", "args": args}
    result = (await gateway.call("POST", "/agent/tool", json=body)).json()
    assert result["success"] is False and "Invalid memory arguments" in result["error"]
    assert "pending" not in result
    assert not [e for e in await gateway.service.log() if e.outcome != "ok"]
