"""The Hindsight client: the routes, typed errors, only known fields on the wire."""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from memsvc.hindsight.client import (
    HindsightClient,
    HindsightRejected,
    HindsightUnavailable,
    RetainItem,
    Timeouts,
    _retry_after,
)
from memsvc.hindsight.fake import FakeHindsight


@pytest.fixture
async def client(fake: FakeHindsight) -> AsyncIterator[HindsightClient]:
    c = HindsightClient(
        "http://hindsight", transport=fake.transport(), timeouts=Timeouts(recall=0.2)
    )
    yield c
    await c.aclose()


async def test_retain_then_recall_finds_the_fact(client: HindsightClient) -> None:
    await client.upsert_bank("b1", reflect_mission="be brief", retain_mission="facts only")
    await client.retain(
        "b1",
        [
            RetainItem(
                content="the user name is Zhang San",
                document_id="d1",
                tags=["t"],
                metadata={"k": "v"},
                timestamp="2026-01-02T03:04:05Z",
            )
        ],
    )
    (found,) = await client.recall("b1", "what is the user name")
    assert found.text == "the user name is Zhang San" and found.document_id == "d1"
    assert found.mentioned_at == "2026-01-02T03:04:05Z" and found.tags == ["t"]
    assert client.ignored_params == []


async def test_every_request_sends_only_fields_hindsight_knows(
    client: HindsightClient, fake: FakeHindsight
) -> None:
    await client.upsert_bank("b", reflect_mission="m")
    await client.retain("b", [RetainItem(content="x y")], run_async=True)
    await client.recall("b", "x", budget="high", max_tokens=100, types=["world"], tags=["a"])
    await client.reflect("b", "x", context="c")
    await client.delete_document("b", "nope")
    await client.delete_bank("b")
    assert client.ignored_params == []
    assert fake.bank_settings["b"] == {"reflect_mission": "m"}


async def test_ignored_params_are_noticed(fake: FakeHindsight) -> None:
    async def sneaky(request: httpx.Request) -> httpx.Response:
        response = await fake.handle(request)
        response.headers["X-Ignored-Params"] = "top_k"
        return response

    c = HindsightClient("http://h", transport=httpx.MockTransport(sneaky))
    await c.recall("b", "q")
    assert c.ignored_params == [("/v1/default/banks/b/memories/recall", "top_k")]
    await c.aclose()


async def test_a_bank_that_does_not_exist_recalls_nothing(client: HindsightClient) -> None:
    assert await client.recall("never-created", "anything") == []


async def test_deleting_a_missing_document_is_not_an_error(client: HindsightClient) -> None:
    await client.retain("b", [RetainItem(content="c", document_id="d")])
    assert await client.delete_document("b", "d") is True
    assert await client.delete_document("b", "d") is False


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_throttling_and_server_errors_are_retryable(
    client: HindsightClient, fake: FakeHindsight, status: int
) -> None:
    fake.fail("retain", status=status)
    with pytest.raises(HindsightUnavailable) as info:
        await client.retain("b", [RetainItem(content="c")])
    assert info.value.status == status and info.value.retry_after == 0.0


async def test_a_refused_request_is_not_retryable(
    client: HindsightClient, fake: FakeHindsight
) -> None:
    fake.fail("retain", status=422)
    with pytest.raises(HindsightRejected) as info:
        await client.retain("b", [RetainItem(content="c")])
    assert info.value.status == 422


async def test_connection_errors_and_timeouts_are_retryable(
    client: HindsightClient, fake: FakeHindsight
) -> None:
    fake.down = True
    with pytest.raises(HindsightUnavailable, match="ConnectError"):
        await client.recall("b", "q")
    assert await client.health() is False
    fake.down = False
    assert await client.health() is True
    fake.hang_banks.add("slow")
    with pytest.raises(HindsightUnavailable, match=r"timed out after 0\.2s"):
        await client.recall("slow", "q")


async def test_the_api_key_is_sent_as_a_bearer_token(fake: FakeHindsight) -> None:
    seen: list[str | None] = []

    async def capture(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return await fake.handle(request)

    c = HindsightClient("http://h", api_key="s3cret", transport=httpx.MockTransport(capture))
    await c.recall("b", "q")
    assert seen == ["Bearer s3cret"]
    await c.aclose()


async def test_bank_and_document_ids_are_escaped_in_paths(
    client: HindsightClient, fake: FakeHindsight
) -> None:
    await client.retain("a/b", [RetainItem(content="x", document_id="t1:3")])
    assert list(fake.documents("a/b")) == ["t1:3"]
    assert await client.delete_document("a/b", "t1:3") is True


def test_retry_after_understands_seconds_and_dates() -> None:
    assert _retry_after("7") == 7.0
    assert _retry_after(None) is None and _retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (_retry_after(later) or 0) <= 31


async def test_an_async_retain_returns_once_hindsight_has_processed_it(
    client: HindsightClient, fake: FakeHindsight
) -> None:
    result = await client.retain("b", [RetainItem(content="c", document_id="d")], run_async=True)
    assert result["operation_id"] and list(fake.documents("b")) == ["d"]
    assert fake.count("operation") == 1  # it asked how the operation went


async def test_an_async_retain_that_fails_in_hindsight_is_not_taken_for_done(
    client: HindsightClient, fake: FakeHindsight
) -> None:
    fake.failed_processing = 1  # accepted, then its embeddings fail
    with pytest.raises(HindsightUnavailable, match="failed: Failed to generate batch embeddings"):
        await client.retain("b", [RetainItem(content="c", document_id="d")], run_async=True)
    assert fake.documents("b") == {}
