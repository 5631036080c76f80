"""The HTTP/1.1 connections under ``MemoryHTTPClient``: framings, reuse, and every way a
connection can end, against servers that answer as scripted."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import struct
import threading
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import uvloop

from memsvc.errors import ClientStateError, MemoryUnavailableError
from memsvc.gateway import http11
from memsvc.gateway.http11 import Origin, Unanswered
from tests.conftest import free_port
from tests.unit.gateway.conftest import Handler, read_request, serving

WITHIN = 30.0  # generous: a deadline only a hung test reaches


@contextlib.asynccontextmanager
async def origin(url: str, **options: float) -> AsyncIterator[Origin]:
    pool = Origin(
        url,
        limit=int(options.get("limit", 10)),
        keepalive=options.get("keepalive", 60.0),
        headers={"Authorization": "Bearer t"},
    )
    try:
        yield pool
    finally:
        await pool.close()


def answering(delay: float = 0.0) -> Handler:
    """A server's handler that answers ``{}`` to every request, ``delay`` seconds after it."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            await asyncio.sleep(delay)
            writer.write(answer(b"{}", "Content-Length: 2"))

    return handler


def answer(body: bytes, *head: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", *head]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def test_a_request_is_framed_with_its_host_headers_and_body() -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await read_request(reader))
        writer.write(answer(b'{"ok":1}', "Content-Length: 8"))

    async with serving(echo) as (url, _), origin(url) as pool:
        assert pool.path == "/base"
        status, body = await pool.request(
            "POST", "/base/x?user_id=u", b'{"a":"\xc3\xa9"}', within=WITHIN
        )
    assert (status, body) == (200, b'{"ok":1}')
    (head, sent), port = seen[0], url.split(":")[2].split("/")[0]
    assert head.startswith(b"POST /base/x?user_id=u HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{port}\r\n".encode() in head
    assert b"Authorization: Bearer t\r\n" in head
    assert b"Content-Type: application/json\r\nContent-Length: 10\r\n" in head
    assert sent == b'{"a":"\xc3\xa9"}'


@pytest.mark.parametrize(
    ("raw", "keeps"),
    [
        (answer(b"hello", "Content-Length: 5"), True),
        (answer(b"3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", "Transfer-Encoding: chunked"), True),
        (answer(b"hello", "Content-Length: 5", "Connection: close"), False),
        (answer(b"hello"), False),  # no length: the body ends with the connection
    ],
    ids=["length", "chunked", "connection-close", "close-delimited"],
)
async def test_every_framing_of_a_body_is_read_and_the_connection_kept_only_when_it_may_be(
    raw: bytes, keeps: bool
) -> None:
    async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(raw[:20])  # in two pieces: the parser is fed as bytes arrive
            await writer.drain()
            await asyncio.sleep(0.01)
            writer.write(raw[20:])
            if b"Length" not in raw and b"chunked" not in raw:
                writer.close()
                return

    async with serving(server) as (url, accepted), origin(url) as pool:
        for _ in range(3):
            assert await pool.request("GET", "/base/x", within=WITHIN) == (200, b"hello")
    assert len(accepted) == (1 if keeps else 3)


async def test_a_connection_the_server_closed_while_idle_is_not_used_again() -> None:
    async def once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b"{}", "Content-Length: 2"))
        await writer.drain()
        writer.close()  # as a server does at its keep-alive timeout

    async with serving(once) as (url, accepted), origin(url) as pool:
        assert await pool.request("GET", "/base/x", within=WITHIN) == (200, b"{}")
        await asyncio.sleep(0.05)  # the close reaches the client
        assert await pool.request("GET", "/base/x", within=WITHIN) == (200, b"{}")
    assert len(accepted) == 2


async def test_a_connection_idle_past_the_keepalive_is_dropped_before_reuse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(http11, "monotonic", lambda: clock[0])
    async with serving(answering()) as (url, accepted), origin(url, keepalive=4.0) as pool:
        await pool.request("GET", "/base/x", within=WITHIN)
        clock[0] += 3.0
        await pool.request("GET", "/base/x", within=WITHIN)  # idle 3 s: kept
        clock[0] += 4.5
        await pool.request("GET", "/base/x", within=WITHIN)  # idle 4.5 s: a new connection
    assert len(accepted) == 2


async def test_concurrent_requests_open_at_most_the_limit_of_connections() -> None:
    async with serving(answering(0.02)) as (url, accepted), origin(url, limit=3) as pool:
        answers = await asyncio.gather(
            *(pool.request("GET", "/base/x", within=WITHIN) for _ in range(12))
        )
    assert answers == [(200, b"{}")] * 12
    assert len(accepted) == 3


@pytest.mark.parametrize("partial", [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel"])
async def test_a_server_that_hangs_up_after_reading_the_request_leaves_it_unanswered(
    partial: bytes,
) -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(partial)  # then gone
        await writer.drain()
        writer.close()

    async with serving(hang_up) as (url, _), origin(url) as pool:
        with pytest.raises(Unanswered, match="closed the connection"):
            await pool.request("POST", "/base/x", b"{}", within=WITHIN, retry=True)


@pytest.mark.parametrize("retry", [True, False])
async def test_a_kept_alive_connection_closed_as_a_request_is_written(retry: bool) -> None:
    """The server's idle timeout met the request: it never read it. A request that may be
    sent twice goes again on a new connection; another is reported as not sent."""
    served: list[bytes] = []

    async def idle_timeout(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _, body = await read_request(reader)
        served.append(body)
        writer.write(answer(b"{}", "Content-Length: 2"))
        await writer.drain()
        await reader.read(1)  # the next request arrives as the server times the connection out
        writer.transport.abort()

    async with serving(idle_timeout) as (url, accepted), origin(url) as pool:
        await pool.request("POST", "/base/x", b"first", within=WITHIN)
        second = pool.request("POST", "/base/x", b"second", within=WITHIN, retry=retry)
        if retry:
            assert await second == (200, b"{}")
        else:
            with pytest.raises(MemoryUnavailableError, match="it was not read") as raised:
                await second
            assert not isinstance(raised.value, Unanswered)
    assert served == ([b"first", b"second"] if retry else [b"first"])
    assert len(accepted) == (2 if retry else 1)


async def test_an_oversized_answer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http11, "MAX_ANSWER_BYTES", 1000)

    async def big(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b"x" * 5000, "Content-Length: 5000"))

    async with serving(big) as (url, _), origin(url) as pool:
        with pytest.raises(Unanswered, match="over 1000 bytes"):
            await pool.request("GET", "/base/x", within=WITHIN)


async def test_a_request_past_its_deadline_drops_its_connection_so_a_late_answer_is_unread() -> (
    None
):
    release = asyncio.Event()

    async def late(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            _, body = await read_request(reader)
            if body == b"slow":
                await release.wait()
            writer.write(answer(body, f"Content-Length: {len(body)}"))

    async with serving(late) as (url, accepted), origin(url) as pool:
        with pytest.raises(Unanswered, match=r"did not answer within 0\.1s"):
            await pool.request("POST", "/base/x", b"slow", within=0.1)
        release.set()
        assert await pool.request("POST", "/base/x", b"fast", within=WITHIN) == (200, b"fast")
    assert len(accepted) == 2


async def test_a_gateway_that_cannot_be_reached_is_unavailable_and_nothing_was_sent() -> None:
    async with origin(f"http://127.0.0.1:{free_port()}") as pool:
        with pytest.raises(MemoryUnavailableError, match="unreachable") as raised:
            await pool.request("POST", "/x", b"{}", within=WITHIN)
    assert not isinstance(raised.value, Unanswered)


@pytest.mark.parametrize(
    ("url", "headers"),
    [
        ("ftp://host/", {}),
        ("http:///no-host", {}),
        ("http://user:pass@host/", {}),
        ("http://host/", {"Authorization": "Bearer s3cret\r\nX-Admin: yes"}),
        ("http://host/", {"Authorization": "Bearer s3cret\n"}),
        ("http://host/", {"Authorization": "Bearer s3crét"}),
    ],
)
def test_what_cannot_be_sent_is_refused_when_the_client_is_made_without_showing_it(
    url: str, headers: dict[str, str]
) -> None:
    with pytest.raises(ValueError) as refused:
        Origin(url, limit=1, keepalive=1.0, headers=headers)
    assert "s3cr" not in str(refused.value) and "pass" not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://bücher.example:8080/x", "Host: xn--bcher-kva.example:8080"),
        ("https://[::1]/x", "Host: [::1]"),
        ("http://Gateway.Example/", "Host: gateway.example"),
    ],
)
def test_the_host_header_is_the_ascii_form_of_the_authority(url: str, host: str) -> None:
    assert host + "\r\n" in Origin(url, limit=1, keepalive=1.0, headers={})._head


async def test_interim_answers_are_passed_over_for_the_final_one() -> None:
    async def early_hints(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            )
            writer.write(answer(b"{}", "Content-Length: 2"))

    async with serving(early_hints) as (url, accepted), origin(url) as pool:
        for _ in range(2):
            assert await pool.request("GET", "/base/x", within=WITHIN) == (200, b"{}")
    assert len(accepted) == 1


async def test_bytes_after_the_answer_drop_the_connection_they_came_on() -> None:
    async def chatty(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            stale = answer(b"stale", "Content-Length: 5")
            writer.write(answer(b"{}", "Content-Length: 2") + stale)

    async with serving(chatty) as (url, accepted), origin(url) as pool:
        for _ in range(2):
            assert await pool.request("GET", "/base/x", within=WITHIN) == (200, b"{}")
    assert len(accepted) == 2


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    ],
    ids=["upgrade", "not-http"],
)
async def test_an_answer_that_is_not_plain_http_is_refused_and_its_connection_dropped(
    raw: bytes,
) -> None:
    async def other(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(raw)

    async with serving(other) as (url, accepted), origin(url) as pool:
        for _ in range(2):
            with pytest.raises(Unanswered):
                await pool.request("GET", "/base/x", within=WITHIN)
    assert len(accepted) == 2


async def test_a_body_with_a_transfer_coding_but_not_chunks_ends_with_the_connection() -> None:
    async def identity(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b"hello", "Transfer-Encoding: identity"))
        await writer.drain()
        writer.close()

    async with serving(identity) as (url, _), origin(url) as pool:
        assert await pool.request("GET", "/base/x", within=WITHIN) == (200, b"hello")


async def test_idle_connections_past_the_keepalive_are_closed_by_the_next_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(http11, "monotonic", lambda: clock[0])
    async with serving(answering(0.02)) as (url, accepted), origin(url, keepalive=4.0) as pool:
        await asyncio.gather(*(pool.request("GET", "/base/x", within=WITHIN) for _ in range(5)))
        for _ in range(3):  # one call at a time: the four others age past the keep-alive
            clock[0] += 2.5
            await pool.request("GET", "/base/x", within=WITHIN)
        assert len(pool._open) == 1
    assert len(accepted) == 5


async def test_a_closed_pool_sends_nothing_more_not_even_what_waited_for_a_connection() -> None:
    received: list[bytes] = []
    both_in, release = asyncio.Event(), asyncio.Event()

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            received.append((await read_request(reader))[1])
            if len(received) == 2:
                both_in.set()
            await release.wait()
            writer.write(answer(b"{}", "Content-Length: 2"))

    async with serving(held) as (url, _), origin(url, limit=2) as pool:
        calls = [
            asyncio.ensure_future(pool.request("POST", "/base/x", b"%d" % n, within=WITHIN))
            for n in range(6)
        ]
        await both_in.wait()
        await pool.close()
        release.set()
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert sorted(received) == [b"0", b"1"]
    assert [type(o) for o in outcomes] == [Unanswered] * 2 + [ClientStateError] * 4


async def test_a_connect_that_does_not_finish_in_time_is_reported_as_not_sent() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # never accepted: a TLS handshake that hangs is no different
    port = listener.getsockname()[1]
    try:
        async with origin(f"https://127.0.0.1:{port}") as pool:
            with pytest.raises(MemoryUnavailableError, match="could not be reached") as raised:
                await pool.request("GET", "/x", within=0.3)
        assert not isinstance(raised.value, Unanswered)
    finally:
        listener.close()


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_a_pool_on_a_closed_loop_is_taken_over_by_the_next_loop(
    run: Callable[[Awaitable[Any]], Any],
) -> None:
    """An agent that runs each turn with ``asyncio.run`` (or uvloop's) and keeps one client."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    accepted: list[int] = []

    def serve() -> None:  # a blocking server in a thread: it outlives each turn's loop
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                accepted.append(1)
                with connection, contextlib.suppress(OSError):
                    while connection.recv(65536):
                        connection.sendall(answer(b"{}", "Content-Length: 2"))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    pool = Origin(url, limit=2, keepalive=60.0, headers={})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # what the closed loops left
            for _ in range(3):
                assert run(pool.request("GET", "/", within=WITHIN)) == (200, b"{}")
                gc.collect()  # the last loop's connection is closed: the server takes the next
            run(pool.close())
            gc.collect()  # what the last loop left goes here, not in a later test
    finally:
        listener.close()
    assert len(accepted) == 3


async def test_a_bodiless_answer_leaves_nothing_for_the_next_request_to_take() -> None:
    """After a 204, a server that goes away under the next request: no stale 204 for it."""
    served: list[bytes] = []

    async def then_gone(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append((await read_request(reader))[1])
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        served.append((await read_request(reader))[1])
        writer.transport.abort()

    async with serving(then_gone) as (url, _), origin(url) as pool:
        assert await pool.request("POST", "/base/x", b"first", within=WITHIN) == (204, b"")
        with pytest.raises(MemoryUnavailableError):
            await pool.request("POST", "/base/x", b"second", within=WITHIN)


async def test_an_interim_answer_then_a_close_leaves_the_request_unanswered() -> None:
    async def gone(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
        writer.close()

    async with serving(gone) as (url, _), origin(url) as pool:
        with pytest.raises(Unanswered):
            await pool.request("POST", "/base/x", b"{}", within=WITHIN)


async def test_a_kept_alive_connection_that_dies_after_the_server_had_time_to_act_is_unanswered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not the idle-timeout race: the server read the request, worked on it, then went."""
    monkeypatch.setattr(http11, "CLOSE_RACE_SECONDS", 0.05)

    async def crash(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b"{}", "Content-Length: 2"))
        await read_request(reader)
        await asyncio.sleep(0.2)
        writer.transport.abort()

    async with serving(crash) as (url, accepted), origin(url) as pool:
        await pool.request("POST", "/base/x", b"first", within=WITHIN)
        with pytest.raises(Unanswered, match="before it answered"):
            await pool.request("POST", "/base/x", b"second", within=WITHIN, retry=True)
    assert len(accepted) == 1  # not sent again


async def test_a_body_the_close_would_end_cut_by_a_reset_is_unanswered() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b'{"text": "cut'))  # no length: the close would end it
        await writer.drain()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # a reset, not an orderly close

    async with serving(reset) as (url, _), origin(url) as pool:
        with pytest.raises(Unanswered, match="in the middle of its answer"):
            await pool.request("GET", "/base/x", within=WITHIN)
