"""Events: the envelope, one model per type, and errors that say what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from memsvc.events import (
    MAX_EVENT_BYTES,
    InvalidEvent,
    MemoryWriteEvent,
    MemoryWritePayload,
    PrefetchEvent,
    SessionSwitchEvent,
    SyncTurnEvent,
    decode,
    encode,
    stamp,
)

BASE = {"user_id": "u1", "agent_id": "a1", "thread_id": "t1"}


def raw(**overrides: Any) -> bytes:
    data = {"id": "e" * 32, "ts": 1.0, "type": "prefetch", **BASE, **overrides}
    return json.dumps(data).encode()


def test_every_event_round_trips_through_its_bytes() -> None:
    events = [
        PrefetchEvent(**stamp(), **BASE),
        MemoryWriteEvent(**stamp(), **BASE, payload=MemoryWritePayload(args={"action": "add"})),
        SyncTurnEvent(**stamp(), **BASE, payload={"user_content": "hi", "assistant_content": "yo"}),
        SessionSwitchEvent(**stamp(), **BASE, payload={"parent_thread_id": "t0", "reset": False}),
    ]
    for event in events:
        assert decode(encode(event)) == event


def test_the_envelope_carries_identity_version_and_time() -> None:
    event = decode(raw())
    assert (event.user_id, event.agent_id, event.thread_id) == ("u1", "a1", "t1")
    assert event.schema_version == 1 and event.ts == 1.0


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (raw(type="telepathy"), "unknown event type 'telepathy'"),
        (raw(schema_version=2), "unsupported schema_version 2"),
        (raw(user_id="../etc"), "user_id"),
        (raw(thread_id=""), "thread_id"),
        (raw(colour="red"), "colour: Extra inputs are not permitted"),
        (raw(payload={"query": 5}), "payload.query"),
        (raw(payload={"query": "x", "why": 1}), "payload.why"),
        (raw(type="memory_write"), "payload: Field required"),
        # one wire format per operation: the memory tool is a memory_write event
        (
            raw(type="tool_call", payload={"name": "memory", "args": {}}),
            "payload.name: Value error, the memory tool is called with a memory_write event",
        ),
        (raw(id="../../"), "id"),
        (b"\xff\xfe", "not UTF-8 JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"type": "prefetch"', "not UTF-8 JSON"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_events_are_refused_with_the_reason(data: bytes, reason: str) -> None:
    with pytest.raises(InvalidEvent) as info:
        decode(data)
    assert reason in info.value.reason
    assert info.value.raw  # kept for the record


def test_a_stream_entry_without_an_event_says_so() -> None:
    with pytest.raises(InvalidEvent, match="empty event"):
        decode(b"")


def test_oversized_events_are_refused_without_parsing() -> None:
    with pytest.raises(InvalidEvent, match="over"):
        decode(b"x" * (MAX_EVENT_BYTES + 1))


def test_an_invalid_event_still_yields_its_readable_fields() -> None:
    with pytest.raises(InvalidEvent) as info:
        decode(raw(type="telepathy", reply_to="svc:inbox:abc"))
    assert info.value.field("reply_to") == "svc:inbox:abc"
    assert info.value.field("user_id") == "u1"
    assert info.value.field("nothing") is None


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"action": "add", "content": float("nan")}, "nan is not a number JSON can carry"),
        ({"action": "add", "content": float("inf")}, "inf is not a number JSON can carry"),
        ({"operations": [{"content": "\ud800"}]}, "lone surrogate"),
    ],
)
def test_arguments_that_json_would_change_are_refused_saying_why(
    args: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ValidationError, match=reason):
        MemoryWritePayload(args=args)


def test_arguments_nested_thousands_deep_are_refused_without_recursion() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValidationError, match="nested deeper than 32 levels"):
        MemoryWritePayload(args={"action": "add", "content": deep})
    shallow: Any = "x"
    for _ in range(30):
        shallow = {"k": shallow}
    assert MemoryWritePayload(args={"x": shallow}).args == {"x": shallow}


async def test_the_client_refuses_nan_and_deep_nesting_before_publishing(
    service: Any,
) -> None:
    deep: Any = "x"
    for _ in range(3000):
        deep = [deep]
    for args in ({"action": "add", "target": "user", "content": float("nan")}, {"x": deep}):
        result = await service.client.call_tool("u1", "a1", "t1", "memory", args)
        assert result["success"] is False and "Nothing was written" in result["error"]
    assert await service.runtime.bus.pending_count() == 0
    assert await service.log() == []


def test_a_mirrored_write_is_encoded_as_before_the_mirror_flag_existed() -> None:
    # a worker that predates the flag refuses unknown fields: during a rolling upgrade it
    # must still take every ordinary write a new client sends
    args = {"action": "add", "target": "memory", "content": "x"}
    usual = MemoryWriteEvent(
        **stamp(), user_id="u", agent_id="a", thread_id="t", payload=MemoryWritePayload(args=args)
    )
    assert json.loads(encode(usual))["payload"] == {"args": args}
    kept_out = MemoryWriteEvent(
        **stamp(),
        user_id="u",
        agent_id="a",
        thread_id="t",
        payload=MemoryWritePayload(args=args, mirror=False),
    )
    decoded = decode(encode(kept_out))
    assert isinstance(decoded, MemoryWriteEvent) and decoded.payload.mirror is False
