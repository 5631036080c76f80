"""What memsvc's Redis connection reads: every reply in its place, a timeout while one is
awaited, and a connection that went bad while it idled replaced before it is trusted.

A scripted RESP server on a free port answers each command with what the test hands it,
so that replies can be split across packets, delayed, or sent unasked.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import hiredis
import pytest
from redis.asyncio import Connection, Redis, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    BusyLoadingError,
    ConnectionError,
    ExecAbortError,
    InvalidResponse,
    NoPermissionError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    TimeoutError,
)
from structlog.testing import capture_logs

from memsvc import redisconn
from memsvc.errors import InvalidInputError
from memsvc.jobs.queue import job_pool
from memsvc.redisbatch import CommandBatcher
from memsvc.redisconn import (
    Failures,
    MemsvcConnection,
    Outage,
    PackingConnection,
    SentThenLost,
    connect,
    connection_pool,
    lasting_refusal,
    noting_sends,
)
from memsvc.settings import ServiceSettings
from tests.conftest import free_port

# what the server answers to one command (its name and arguments): the bytes to send, in
# packets with the pause before each
Answer = Callable[[list[bytes]], list[tuple[float, bytes]] | None]


def value(command: list[bytes]) -> list[tuple[float, bytes]] | None:
    """``GET k`` answers ``k``; ``FAIL`` and ``SET bad …`` an error; ``LOADING`` the error of
    a Redis still loading its data (a connection error to redis-py); ``GARBLE`` bytes that
    are no reply at all; ``SET replica …`` READONLY; ``DROP`` and ``AUTH dropme`` no answer
    but the connection closed (``None``); ``PING`` ``+PONG``; anything else ``+OK``."""
    name = command[0].upper()
    if name == b"DROP" or command == [b"AUTH", b"dropme"]:
        return None
    if name == b"PING":
        return [(0.0, b"+PONG\r\n")]
    if name == b"GET":
        return [(0.0, b"$%d\r\n%s\r\n" % (len(command[1]), command[1]))]
    if name == b"FAIL" or (name == b"SET" and command[1] == b"bad"):
        return [(0.0, b"-ERR asked to fail\r\n")]
    if name == b"LOADING":
        return [(0.0, b"-LOADING Redis is loading the dataset in memory\r\n")]
    if name == b"GARBLE":
        return [(0.0, b"?garbage\r\n")]
    if name == b"SET" and command[1] == b"replica":
        return [(0.0, b"-READONLY You can't write against a read only replica.\r\n")]
    return [(0.0, b"+OK\r\n")]


@dataclass
class Server:
    port: int
    answer: Answer = value
    connections: int = 0
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    refuse: bool = False  # close each new connection at once

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        if self.refuse:
            writer.close()
            return
        parser = hiredis.Reader()
        while data := await reader.read(65536):
            parser.feed(data)
            replies: list[tuple[float, bytes]] = []
            while (command := parser.gets()) is not False:
                answer = self.answer(command)
                if answer is None:
                    writer.close()
                    return
                replies += answer
            # the answers to one packet leave together, unless a pause splits them
            pending = b""
            for pause, chunk in replies:
                if pause:
                    writer.write(pending)
                    pending = b""
                    await asyncio.sleep(pause)
                pending += chunk
            writer.write(pending)
        writer.close()


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[Redis]:
    """memsvc's connection to ``url`` (default settings), closed after."""
    redis = connect(url, ServiceSettings(redis_url=url))
    try:
        yield redis
    finally:
        await redis.aclose()


@asynccontextmanager
async def scripted() -> AsyncIterator[tuple[Server, Redis]]:
    server = Server(0)
    listening = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    server.port = listening.sockets[0].getsockname()[1]
    url = f"redis://127.0.0.1:{server.port}/0"
    # every connection memsvc opens: the packing connection, a 1.5 s command timeout
    redis = connect(url, ServiceSettings(redis_url=url, redis_timeout_seconds=1.5))
    try:
        yield server, redis
    finally:
        await redis.aclose()
        for writer in server.writers:
            writer.close()
        listening.close()


async def test_memsvc_connects_through_the_packing_connection() -> None:
    async with scripted() as (_, redis):
        assert issubclass(redis.connection_pool.connection_class, PackingConnection)


async def test_a_connection_that_answered_readonly_reconnects_after_its_replies() -> None:
    # after a failover the old primary refuses every write; the name may point elsewhere now
    async with scripted() as (server, redis):
        with pytest.raises(ReadOnlyError):
            await redis.set("replica", "v")
        assert await redis.get("next") == b"next"
        assert server.connections == 2
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("a").set("replica", "v").get("b")
            a, refused, b = await pipe.execute(raise_on_error=False)
        assert (a, b) == (b"a", b"b") and isinstance(refused, ReadOnlyError)
        assert server.connections == 2  # the pipeline read all its replies on one connection
        assert await redis.get("c") == b"c"
        assert server.connections == 3
        assert await redis.get("d") == b"d"
        assert server.connections == 3  # a connection that heard no READONLY stays


async def test_every_scheme_gets_memsvcs_connection(tmp_path: Path) -> None:
    settings = ServiceSettings(redis_url="redis://127.0.0.1:1/0")
    for url, kind in [
        ("redis://127.0.0.1:1/0", Connection),
        ("rediss://127.0.0.1:1/0", SSLConnection),
        (f"unix://{tmp_path}/redis.sock", UnixDomainSocketConnection),
    ]:
        chosen = connection_pool(url, settings).connection_class
        assert issubclass(chosen, kind) and issubclass(chosen, MemsvcConnection), url


async def test_a_command_lost_after_it_was_written_is_told_from_one_never_sent() -> None:
    async with scripted() as (_, redis):
        with noting_sends() as sends, pytest.raises(ConnectionError):
            await redis.execute_command("DROP")
        assert sends.written and sends.lost  # it may have run
        batcher = CommandBatcher(redis)
        with pytest.raises(SentThenLost):
            await batcher.execute(lambda pipe: pipe.get("a").execute_command("DROP"))
        assert await batcher.execute(lambda pipe: pipe.get("b")) == [b"b"]
        # LOADING is a connection error to redis-py, yet Redis answered: nothing ran
        with noting_sends() as sends, pytest.raises(BusyLoadingError):
            await redis.execute_command("LOADING")
        assert sends.written and not sends.lost
        with pytest.raises(BusyLoadingError) as loading:
            await batcher.execute(lambda pipe: pipe.get("a").execute_command("LOADING"))
        assert not isinstance(loading.value, SentThenLost)
    async with connected(f"redis://127.0.0.1:{free_port()}/0") as refused:
        with noting_sends() as sends, pytest.raises(ConnectionError):
            await refused.get("a")
        assert not sends.written
        with pytest.raises(ConnectionError) as caught:
            await CommandBatcher(refused).execute(lambda pipe: pipe.get("a"))
        assert not isinstance(caught.value, SentThenLost)  # nothing left: nothing ran


async def test_a_connection_lost_during_its_handshake_sent_no_command() -> None:
    async with (
        scripted() as (server, _),
        connected(f"redis://:dropme@127.0.0.1:{server.port}/0") as redis,
    ):
        with noting_sends() as sends, pytest.raises(ConnectionError):
            await redis.get("a")
        assert not sends.written and server.connections >= 1


async def test_a_health_check_that_failed_sent_no_command() -> None:
    async with (
        scripted() as (server, _),
        connected(f"redis://127.0.0.1:{server.port}/0?health_check_interval=1") as redis,
    ):
        assert await redis.get("a") == b"a"
        # the health check's PING meets a dropped connection, and no new one is let in
        server.answer = lambda command: None if command[0].upper() == b"PING" else value(command)
        server.refuse = True
        await asyncio.sleep(1.5)  # past the interval: the next command checks first
        with noting_sends() as sends, pytest.raises(ConnectionError) as caught:
            await CommandBatcher(redis).execute(lambda pipe: pipe.get("b"))
        assert not sends.lost and not isinstance(caught.value, SentThenLost)


async def test_the_job_pool_leaves_a_replica_too() -> None:
    async with scripted() as (server, _):
        url = f"redis://127.0.0.1:{server.port}/0"
        pool = job_pool(url, ServiceSettings(redis_url=url))
        try:
            with pytest.raises(ReadOnlyError):
                await pool.set("replica", "v")
            assert await pool.get("next") == b"next"
            assert server.connections == 2
        finally:
            await pool.aclose()


async def test_a_pipeline_gets_each_reply_in_its_place_with_an_error_where_it_fell() -> None:
    async with scripted() as (_, redis):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("a").execute_command("FAIL").get("b").get("c")
            a, failed, b, c = await pipe.execute(raise_on_error=False)
        assert (a, b, c) == (b"a", b"b", b"c")
        assert isinstance(failed, ResponseError) and "asked to fail" in str(failed)
        # the connection read exactly its replies: the next command gets its own
        assert await redis.get("next") == b"next"


async def test_an_error_reply_raises_for_the_command_that_got_it() -> None:
    async with scripted() as (_, redis):
        with pytest.raises(ResponseError, match="asked to fail"):
            await redis.execute_command("FAIL")
        assert await redis.get("after") == b"after"


async def test_an_error_after_the_first_reply_is_an_error_not_a_command_result() -> None:
    async with scripted() as (_, redis):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("a").set("bad", "v").set("good", "v")
            a, bad, good = await pipe.execute(raise_on_error=False)
        # SET turns a reply into True or False: an error must not be turned into False
        assert a == b"a" and good is True
        assert isinstance(bad, ResponseError) and "asked to fail" in str(bad)


async def test_a_connection_error_reply_mid_pipeline_drops_the_connection() -> None:
    async with scripted() as (server, redis):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("a").execute_command("LOADING").get("b")
            with pytest.raises(ConnectionError, match="loading"):
                await pipe.execute()
        opened = server.connections
        assert await redis.get("next") == b"next"
        assert server.connections == opened + 1  # the connection that heard it is not reused


async def test_a_garbled_reply_mid_pipeline_does_not_poison_the_pool() -> None:
    async with scripted() as (server, redis):
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("a").execute_command("GARBLE")
            with pytest.raises(InvalidResponse):
                await pipe.execute()
        for key in ("x", "y", "z"):
            assert await redis.get(key) == key.encode()
        assert server.connections == 2  # the garbled one, and the one that replaced it


async def test_replies_split_across_packets_are_read_whole() -> None:
    async with scripted() as (server, redis):

        def halves(command: list[bytes]) -> list[tuple[float, bytes]]:
            (_, whole), *_ = value(command)
            return [(0.0, whole[:3]), (0.05, whole[3:])]

        server.answer = halves
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("first").get("second").get("third")
            assert await pipe.execute() == [b"first", b"second", b"third"]


async def test_a_reply_that_stops_halfway_times_out_instead_of_hanging() -> None:
    async with scripted() as (server, redis):
        server.answer = lambda command: [(0.0, b"$5\r\nhal"), (30.0, b"f\r\n")]
        started = asyncio.get_running_loop().time()
        with pytest.raises(TimeoutError):
            await redis.get("k")
        assert asyncio.get_running_loop().time() - started < 20  # the 1.5 s timeout, not 30 s


async def test_a_late_reply_after_the_first_of_a_pipeline_still_times_out() -> None:
    async with scripted() as (server, redis):
        calls = 0

        def second_never_comes(command: list[bytes]) -> list[tuple[float, bytes]]:
            nonlocal calls
            calls += 1
            return value(command) if calls == 1 else [(30.0, b"+OK\r\n")]

        server.answer = second_never_comes
        async with redis.pipeline(transaction=False) as pipe:
            pipe.get("a").get("b")
            with pytest.raises(TimeoutError):
                await pipe.execute()


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async with scripted() as (server, redis):
        assert await redis.get("one") == b"one"
        server.writers[0].close()  # Redis restarted, say: the pooled connection is dead
        await asyncio.sleep(0.05)
        assert await redis.get("two") == b"two"
        assert server.connections == 2


async def test_data_sent_unasked_to_an_idle_connection_is_never_taken_for_a_reply() -> None:
    async with scripted() as (server, redis):
        assert await redis.get("one") == b"one"
        server.writers[0].write(b"$5\r\nstale\r\n")
        await asyncio.sleep(0.05)
        assert await redis.get("two") == b"two"
        assert server.connections == 2


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        ({"cluster_enabled": 1}, True),
        ({"cluster_enabled": 0}, False),
        (NoPermissionError("this user has no permissions to run the 'info' command"), False),
        (ConnectionError("refused"), False),  # not up yet: waited for as any outage
    ],
)
async def test_a_cluster_node_is_refused_and_nothing_else_is(
    monkeypatch: pytest.MonkeyPatch, answer: object, refused: bool
) -> None:
    """Only a node that says it is in a Cluster is refused: an ACL without INFO starts."""

    class Node:
        async def info(self, section: str) -> object:
            assert section == "cluster"
            if isinstance(answer, Exception):
                raise answer
            return answer

        async def aclose(self) -> None:
            pass

    monkeypatch.setattr(redisconn, "connect", lambda url, settings: Node())
    check = redisconn.refuse_a_cluster("redis://node:6379/0", ServiceSettings())
    if refused:
        with pytest.raises(InvalidInputError, match="Redis Cluster"):
            await check
    else:
        await check


async def test_a_process_started_before_its_redis_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``memsvc worker`` started before Redis (or during an outage): arq alone gives up
    after five tries a second apart and the process exits."""
    answers: list[Exception | None] = [ConnectionError("refused"), TimeoutError(), None]
    pings: list[object] = []

    class Node:
        async def ping(self) -> bool:
            pings.append(object())
            answer = answers.pop(0)
            if answer is not None:
                raise answer
            return True

        async def aclose(self) -> None:
            pass

    monkeypatch.setattr(redisconn, "connect", lambda url, settings: Node())
    await redisconn.wait_for_redis("redis://node:6379/0", ServiceSettings())
    assert (len(pings), answers) == (3, [])


@pytest.mark.parametrize(
    "refusal", [AuthenticationError("invalid password"), AuthorizationError("no permission")]
)
async def test_credentials_redis_refuses_are_not_waited_for(
    monkeypatch: pytest.MonkeyPatch, refusal: Exception
) -> None:
    class Node:
        async def ping(self) -> bool:
            raise refusal

        async def aclose(self) -> None:
            pass

    monkeypatch.setattr(redisconn, "connect", lambda url, settings: Node())
    with pytest.raises(type(refusal)):
        async with asyncio.timeout(30):  # generous: refused at the first answer
            await redisconn.wait_for_redis("redis://node:6379/0", ServiceSettings())


async def test_an_outage_is_logged_at_its_1st_2nd_4th_8th_failure_and_when_it_is_over() -> None:
    outage = Outage("redis_gone", cap=0.001, base=0.0001)
    with capture_logs() as logs:
        for _ in range(20):
            await outage.wait(ConnectionError("refused"))
        outage.over()
    assert [e.get("failures") for e in logs] == [1, 2, 4, 8, 16, 20]
    assert [e["event"] for e in logs] == ["redis_gone"] * 5 + ["redis_reachable_again"]


def test_a_loop_that_failed_for_another_reason_than_redis_recovers_in_those_words() -> None:
    failures = Failures("housekeeping_failed")
    with capture_logs() as logs:
        failures.note(ConnectionError("refused"))
        failures.note(ValueError("a record of another shape"))  # the last one counts
        failures.over()
        failures.over()  # once
    assert [(e["event"], e.get("failures")) for e in logs] == [
        ("housekeeping_failed", 1),
        ("housekeeping_failed", 2),
        ("recovered", 2),
    ]


# Redis 7.0.15's refusals as redis-py 5 raises them: alone, in a pipeline run with
# raise_on_error, and from inside a script
PIPELINE = "Command # 1 (LPUSH str 1) of pipeline caused error: "
SCRIPT = " script: 307b291697c86bbe, on @user_script:1."


@pytest.mark.parametrize(
    ("error", "lasting"),
    [
        (AuthenticationError("invalid username-password pair or user is disabled."), True),
        (NoPermissionError("this user has no permissions to run the 'xack' command"), True),
        (ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"), True),
        (ResponseError(PIPELINE + "('WRONGTYPE Operation against a key holding the',)"), True),
        (ResponseError("unknown command 'BLMPOP', with args beginning with: "), True),
        (ResponseError(PIPELINE + "(\"unknown command 'NOSUCHCMD', with args\",)"), True),
        (ResponseError("unknown subcommand 'NOPE'. Try XINFO HELP."), True),
        (ResponseError("The user executing the script can't run this command" + SCRIPT), True),
        (ResponseError("Unknown Redis command called from script" + SCRIPT), True),
        (ResponseError("The user executing the script can't access at least one" + SCRIPT), True),
        (ExecAbortError("Transaction discarded because of: NOPERM this user has no"), True),
        (ExecAbortError("Transaction discarded because of: OOM command not allowed"), False),
        (ResponseError("WRONGTYPE Operation against a key holding the wrong kind" + SCRIPT), True),
        (OutOfMemoryError("command not allowed when used memory > 'maxmemory'."), False),
        (ReadOnlyError("You can't write against a read only replica."), False),
        (BusyLoadingError("Redis is loading the dataset in memory"), False),
        (ResponseError("MISCONF Redis is configured to save RDB snapshots"), False),
        (ResponseError("BUSY Redis is busy running a script."), False),
        (ResponseError("value is not an integer or out of range" + SCRIPT), False),
        (ConnectionError("Connection refused"), False),
    ],
)
def test_a_lasting_refusal_is_told_from_one_that_passes(error: Exception, lasting: bool) -> None:
    assert lasting_refusal(error) is lasting
