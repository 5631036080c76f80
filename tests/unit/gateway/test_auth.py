"""Gateway tokens: shown once, kept only as hashes, compared in constant time, revocable."""

from __future__ import annotations

import asyncio
import hmac
import os
import stat
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import structlog
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import NoPermissionError, ResponseError

from memsvc.errors import NotFoundError, UnsafeFileError
from memsvc.gateway import auth
from memsvc.gateway.auth import FileTokenStore, RedisTokenStore, Tokens
from memsvc.keys import Keys
from memsvc.paths import DataLayout
from memsvc.redisconn import cancel_and_wait
from tests.conftest import until


@pytest.fixture(params=["file", "redis"])
def process(
    request: pytest.FixtureRequest, layout: DataLayout, fake_redis: Redis
) -> Callable[[], Tokens]:
    """A process's tokens: each call is another process on the same store."""
    if request.param == "file":
        return lambda: Tokens(FileTokenStore(layout))
    return lambda: Tokens(RedisTokenStore(fake_redis, Keys("gw")))


@pytest.fixture
def tokens(process: Callable[[], Tokens]) -> Tokens:
    return process()


async def stored(layout: DataLayout, fake_redis: Redis) -> bytes:
    path = layout.gateway_tokens()
    on_file = path.read_bytes() if path.exists() else b""
    return on_file + b"".join(await fake_redis.hvals(Keys("gw").tokens))  # type: ignore[misc]


async def test_a_token_names_its_user_and_only_its_hash_is_kept(
    tokens: Tokens, layout: DataLayout, fake_redis: Redis
) -> None:
    record, token = await tokens.add("alice")
    admin_record, admin_token = await tokens.add("root", admin=True)
    assert await tokens.authenticate(token) == auth.Principal("alice", False, record.id)
    assert await tokens.authenticate(admin_token) == auth.Principal("root", True, admin_record.id)
    kept = await stored(layout, fake_redis)
    assert token.encode() not in kept and admin_token.encode() not in kept
    assert token.split("_", 2)[2].encode() not in kept  # nor its secret part
    assert record.sha256.encode() in kept
    assert [r.public() for r in await tokens.list()] == [record.public(), admin_record.public()]
    assert "sha256" not in record.public()


async def test_a_revoked_token_is_refused_by_every_process_from_then_on(
    tokens: Tokens, process: Callable[[], Tokens]
) -> None:
    record, token = await tokens.add("alice")
    _, other = await tokens.add("alice")
    assert await tokens.authenticate(token) is not None  # cached by this process
    await process().revoke(record.id)  # `memsvc token revoke` in another process
    assert await tokens.authenticate(token) is None
    assert await tokens.authenticate(other) is not None
    for unknown in (record.id, "\udcff", "../" + record.id, record.id.upper()):
        with pytest.raises(NotFoundError, match="no token with id"):
            await tokens.revoke(unknown)


@pytest.mark.parametrize(
    "presented",
    ["", "msv_", "Bearer x", "msv_0123456789ab_" + "x" * 43, "msv_0123456789AB_" + "x" * 43],
)
async def test_a_malformed_or_unknown_token_names_nobody(tokens: Tokens, presented: str) -> None:
    await tokens.add("alice")
    assert await tokens.authenticate(presented) is None


async def test_a_token_with_a_known_id_and_a_wrong_secret_is_refused_in_constant_time(
    tokens: Tokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, token = await tokens.add("alice")
    compared: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", spy)
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert await tokens.authenticate(forged) is None
    assert await tokens.authenticate("msv_0123456789ab_" + "x" * 43) is None
    assert len(compared) == 2 and compared[0][0] == record.sha256  # an unknown id compares too


async def test_the_token_file_is_private(layout: DataLayout) -> None:
    await Tokens(FileTokenStore(layout)).add("alice")
    mode = stat.S_IMODE(os.stat(layout.gateway_tokens()).st_mode)
    assert mode == 0o600
    assert Path(layout.gateway_tokens()).parent == layout.root


@pytest.mark.parametrize(
    "broken",
    [
        b'{"x": ',
        b"[]",
        b'{"abc": {"id": "abc"}}',
        b'{"abc": 1}',
        b'{"abc": {"id": 1, "user_id": "u", "admin": false, "created_at": 0, "sha256": "x"}}',
        b'{"abc": {"id": "abc", "user_id": "u", "admin": false, "created_at": "yesterday", '
        + b'"sha256": "'
        + b"0" * 64
        + b'"}}',
        b'{"abc": {"id": "abc", "user_id": "u", "admin": false, "created_at": 0, '
        + '"sha256": "é"}}'.encode(),
    ],
    ids=[
        "cut short",
        "no object",
        "fields missing",
        "no record",
        "a field's type",
        "a time that is text",
        "no digest",
    ],
)
async def test_a_broken_token_file_is_named_not_a_traceback(
    layout: DataLayout, broken: bytes
) -> None:
    tokens = Tokens(FileTokenStore(layout))
    _, token = await tokens.add("alice")
    layout.gateway_tokens().write_bytes(broken)
    for call in (tokens.list(), tokens.authenticate(token), tokens.add("bob")):
        with pytest.raises(
            UnsafeFileError, match=r"'gateway_tokens\.json' in the data dir is not a token store"
        ):
            await call
    assert layout.gateway_tokens().read_bytes() == broken  # left for a person to mend


async def test_an_unreadable_record_in_redis_refuses_its_token_and_holds_up_no_other(
    fake_redis: Redis,
) -> None:
    tokens = Tokens(RedisTokenStore(fake_redis, Keys("gw")))
    record, token = await tokens.add("alice")
    broken_id = "aaaaaaaaaaaa"
    await fake_redis.hset(Keys("gw").tokens, broken_id, "not json")  # type: ignore[misc]
    with structlog.testing.capture_logs() as logs:
        assert [r.id for r in await tokens.list()] == [record.id]
        assert await tokens.authenticate(f"msv_{broken_id}_{'x' * 43}") is None
    assert [e["token_id"] for e in logs if e["event"] == "token_record_unreadable"] == [
        broken_id
    ] * 2
    assert await tokens.authenticate(token) == auth.Principal("alice", False, record.id)
    await tokens.revoke(broken_id)  # an operator can remove it
    assert await fake_redis.hkeys(Keys("gw").tokens) == [record.id.encode()]  # type: ignore[misc]


@pytest.fixture
async def watching(fake_redis: Redis) -> AsyncIterator[RedisTokenStore]:
    """A gateway's store that keeps the records it reads, subscribed to their changes."""
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=3600)
    task = asyncio.create_task(store.watch())
    await until(subscribed(store))
    yield store
    await cancel_and_wait(task)


def subscribed(store: RedisTokenStore) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return store.watching

    return check


def refused(tokens: Tokens, token: str) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return await tokens.authenticate(token) is None

    return check


async def forget(fake_redis: Redis, record: auth.TokenRecord) -> None:
    """Delete a record without announcing it: only what a gateway keeps still knows it."""
    await fake_redis.hdel(Keys("gw").tokens, record.id)  # type: ignore[misc]


def elsewhere(fake_redis: Redis) -> Tokens:
    """Another process's tokens (``memsvc token revoke``)."""
    return Tokens(RedisTokenStore(fake_redis, Keys("gw")))


async def test_a_watching_gateway_keeps_a_record_until_a_revocation_elsewhere_is_announced(
    watching: RedisTokenStore, fake_redis: Redis
) -> None:
    tokens = Tokens(watching)
    record, token = await tokens.add("alice")
    other, _ = await tokens.add("bob")
    assert await tokens.authenticate(token) is not None
    await forget(fake_redis, record)
    assert await tokens.authenticate(token) is not None  # kept: Redis is not asked again
    await elsewhere(fake_redis).revoke(other.id)  # the announcement drops all that is kept
    await until(refused(tokens, token))


async def test_a_revocation_in_the_same_process_drops_what_is_kept_at_once(
    watching: RedisTokenStore,
) -> None:
    tokens = Tokens(watching)
    record, token = await tokens.add("alice")
    assert await tokens.authenticate(token) is not None
    await tokens.revoke(record.id)
    assert await tokens.authenticate(token) is None  # not a moment later: now


async def test_nothing_is_kept_while_not_subscribed(fake_redis: Redis) -> None:
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=3600)
    tokens = Tokens(store)
    record, token = await tokens.add("alice")
    assert await tokens.authenticate(token) is not None  # before the watch began
    task = asyncio.create_task(store.watch())
    await until(subscribed(store))
    assert await tokens.authenticate(token) is not None  # kept from here on
    await cancel_and_wait(task)  # unsubscribed: changes could be missed
    await forget(fake_redis, record)
    assert await tokens.authenticate(token) is None


async def test_a_lookup_that_began_before_an_announcement_is_not_kept(
    watching: RedisTokenStore, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = Tokens(watching)
    record, token = await tokens.add("alice")
    other, _ = await tokens.add("bob")
    signal, signal_token = await tokens.add("carol")
    assert await tokens.authenticate(signal_token) is not None
    await forget(fake_redis, signal)  # kept only: refused once an announcement is read
    read, answer = asyncio.Event(), asyncio.Event()
    execute = watching._commands.execute

    async def slow(build: Any) -> Any:
        replies = await execute(build)
        read.set()
        await answer.wait()  # the record read; its answer held past the announcement
        return replies

    monkeypatch.setattr(watching._commands, "execute", slow)
    lookup = asyncio.create_task(tokens.authenticate(token))
    await read.wait()
    monkeypatch.setattr(watching._commands, "execute", execute)
    await elsewhere(fake_redis).revoke(other.id)
    await until(refused(tokens, signal_token))
    answer.set()
    assert await lookup is not None  # read before: answered with what it read ...
    await forget(fake_redis, record)
    assert await tokens.authenticate(token) is None  # ... and not kept


class Clock:
    """``time.monotonic`` as the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_record_is_kept_no_longer_than_its_bound_from_its_lookup(
    watching: RedisTokenStore, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(auth, "time", SimpleNamespace(monotonic=clock, time=time.time))
    watching._keep_seconds = 10.0
    tokens = Tokens(watching)
    record, token = await tokens.add("alice")
    execute = watching._commands.execute

    async def slow(build: Any) -> Any:
        clock.now += 6.0  # the answer handled late: the bound runs from the lookup
        return await execute(build)

    monkeypatch.setattr(watching._commands, "execute", slow)
    assert await tokens.authenticate(token) is not None
    monkeypatch.setattr(watching._commands, "execute", execute)
    await forget(fake_redis, record)  # a revocation whose message was missed
    clock.now += 3.0  # 9 s after the lookup
    assert await tokens.authenticate(token) is not None  # kept
    clock.now += 1.5  # 10.5 s after it
    assert await tokens.authenticate(token) is None


async def unwatched(store: RedisTokenStore, count: int) -> list[dict[str, Any]]:
    """The first ``count`` times ``store``'s watch gave its channel up, as logged."""
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(store.watch())

        async def logged() -> bool:
            return len([log for log in logs if log["event"] == "gateway_tokens_unwatched"]) >= count

        try:
            await until(logged)
        finally:
            await cancel_and_wait(task)
    return [log for log in logs if log["event"] == "gateway_tokens_unwatched"][:count]


async def test_a_channel_that_does_not_answer_a_ping_is_given_up(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinging(monkeypatch, dropped=10**6)  # a dead connection: no ping is ever answered
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=0.2)
    [failure] = await unwatched(store, 1)
    assert "answered no ping" in failure["error"]


async def test_a_quiet_channel_that_answers_its_pings_stays_watched(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = pinging(monkeypatch, dropped=0)
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=0.2)
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(store.watch())
        try:
            await until(subscribed(store))
            await until(lambda: at_least(pings, 3))  # each answered
            assert store.watching
        finally:
            await cancel_and_wait(task)
    assert not [log for log in logs if log["event"] == "gateway_tokens_unwatched"]


async def test_one_ping_unanswered_is_not_a_dead_channel(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = pinging(monkeypatch, dropped=1)  # as if the loop stalled past its answer
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=0.2)
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(store.watch())
        try:
            await until(subscribed(store))
            await until(lambda: at_least(pings, 4))
            assert store.watching
        finally:
            await cancel_and_wait(task)
    assert not [log for log in logs if log["event"] == "gateway_tokens_unwatched"]


def pinging(monkeypatch: pytest.MonkeyPatch, *, dropped: int) -> list[int]:
    """Count the watch's pings; the first ``dropped`` of them are never sent."""
    ping = PubSub.ping
    sent: list[int] = []

    async def counted(self: PubSub, message: Any = None) -> Any:
        sent.append(1)
        if len(sent) <= dropped:
            return None
        return await ping(self, message)

    monkeypatch.setattr(PubSub, "ping", counted)
    return sent


async def at_least(pings: list[int], count: int) -> bool:
    return len(pings) >= count


async def test_a_failure_after_each_subscription_backs_off_further_each_time(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refused(self: PubSub, message: Any = None) -> None:
        raise ResponseError("NOPERM this user has no permissions to run the 'ping' command")

    monkeypatch.setattr(PubSub, "ping", refused)
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=0.2)
    failures = [log["failures"] for log in await unwatched(store, 3)]
    assert failures == [1, 2, 4]  # each subscription worked, yet the outage goes on (logged 2**n)


async def test_a_revocation_that_cannot_be_announced_still_revokes(
    watching: RedisTokenStore, fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokens = Tokens(watching)
    record, token = await tokens.add("alice")
    assert await tokens.authenticate(token) is not None

    async def refused(channel: str, message: str) -> int:
        raise NoPermissionError("this user has no permissions to access one of the channels")

    monkeypatch.setattr(fake_redis, "publish", refused)
    with structlog.testing.capture_logs() as logs:
        await tokens.revoke(record.id)
    assert await tokens.authenticate(token) is None
    assert not await fake_redis.hexists(Keys("gw").tokens, record.id)  # type: ignore[misc]
    assert [log["token_id"] for log in logs] == [record.id]
    assert logs[0]["event"] == "gateway_token_revocation_unannounced"


async def test_a_subscription_refused_is_retried_not_given_up(
    fake_redis: Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    subscribe = PubSub.subscribe
    refusals = [ResponseError("NOPERM this user has no permissions to access a channel")]

    async def refused_once(self: PubSub, *args: Any, **kwargs: Any) -> Any:
        if refusals:
            raise refusals.pop()
        return await subscribe(self, *args, **kwargs)

    monkeypatch.setattr(PubSub, "subscribe", refused_once)
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=3600)
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(store.watch())
        try:
            await until(subscribed(store))
        finally:
            await cancel_and_wait(task)
    assert [log["error"] for log in logs if log["event"] == "gateway_tokens_unwatched"] == [
        "NOPERM this user has no permissions to access a channel"
    ]


async def test_tokens_say_whether_their_records_are_kept(
    layout: DataLayout, fake_redis: Redis
) -> None:
    assert Tokens(FileTokenStore(layout)).watching is None  # read afresh once changed
    store = RedisTokenStore(fake_redis, Keys("gw"), keep_seconds=3600)
    assert Tokens(store).watching is False
    task = asyncio.create_task(store.watch())
    try:
        await until(subscribed(store))
        assert Tokens(store).watching is True
    finally:
        await cancel_and_wait(task)
    assert Tokens(store).watching is False
