"""HTTP/1.1 to one origin over kept-alive connections, one request at a time on each.

``MemoryHTTPClient`` makes a prefetch and a ``memory`` call or two every agent
turn, so what a request costs the agent's process is paid on every turn. Through
aiohttp, a prefetch cost its caller 0.25 ms of CPU (``bench.gateway``, 50 concurrent
callers, the default asyncio loop), more than the same prefetch through
``MemoryClient`` (0.14 ms); through this module, 0.10 ms in the same runs. What a
general client does beyond this (redirects, cookies, proxies, streaming, tracing)
the agent's calls do not use. Responses are parsed by httptools (Node's llhttp):
the status line, headers, interim 1xx answers, and bodies framed by
``Content-Length``, chunked or ending with the connection. What is here is the
pool and the framing of a request.

A request's failure says whether the server may have acted on it: nothing sent
(:class:`~memsvc.errors.MemoryUnavailableError`), or sent and not answered
(:class:`Unanswered`). A kept-alive connection the server closes just as a request
is written (its idle timeout) fails at once with no byte of an answer; the server
never read that request, so one marked ``retry`` is sent again on a new connection
and any other is reported as not sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import warnings
from time import monotonic
from typing import Any, cast
from urllib.parse import urlsplit

import httptools

from memsvc.errors import ClientStateError, MemoryUnavailableError

# an answer larger than this is refused and its connection dropped (the gateway's largest,
# a page of the log or two whole files, are far smaller)
MAX_ANSWER_BYTES = 64 * 1024 * 1024
# A kept-alive connection closed with no answer this soon after a request was written met
# the server's idle timeout: the request crossed the server's close and was never read.
# Later, the server had time to read it and act before it went away.
CLOSE_RACE_SECONDS = 0.25
HAPPY_EYEBALLS_SECONDS = 0.25  # what aiohttp's connector waits before a name's next address


class Unanswered(MemoryUnavailableError):
    """Sent, and not answered: the server may still act on the request."""


class _ClosedBeforeAnswer(MemoryUnavailableError):
    """The connection ended before a byte of the answer came (the pool decides what it means)."""


class _Connection(asyncio.Protocol):
    """One connection: the answer to the request in flight, as its bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._parser = httptools.HttpResponseParser(self)
        self._answer: asyncio.Future[tuple[int, bytes, bool]] | None = None
        self._received = False  # a byte of the answer in flight
        self._body: list[bytes] = []
        self._size = 0
        self._status = 0
        self._headers_done = False
        self._framed = False  # by Content-Length or chunks, else the body ends with the connection

    def expect(self, answer: asyncio.Future[tuple[int, bytes, bool]]) -> None:
        """Read what comes next as the answer to a request just written."""
        self._answer, self._received = answer, False
        self.on_message_begin()  # nothing of the last answer (a 204's state) carries over

    def close(self) -> None:
        if self._answer is not None and not self._answer.done():  # closed here, not by the server
            self._answer.set_exception(Unanswered("the client closed the connection first"))
        self.closed = True
        if self.transport is None:
            return
        try:
            self.transport.close()
        except RuntimeError:  # its loop is closed: the server is told, the socket closed when
            # the transport, no longer referred to here, is freed
            sock = self.transport.get_extra_info("socket")
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            self.transport = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        if self._answer is None or self._answer.done():  # bytes no request asked for
            self.close()
            return
        self._received = True
        try:
            self._parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            self._fail(Unanswered(f"the gateway's answer is not plain HTTP/1.1: {exc!r}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._answer is None or self._answer.done():
            return
        if self._headers_done and not self._framed and exc is None:  # a body the close ends
            self._answer.set_result((self._status, b"".join(self._body), False))
        elif not self._received:
            self._fail(_ClosedBeforeAnswer())
        else:
            self._fail(Unanswered("the gateway closed the connection in the middle of its answer"))

    # httptools' callbacks

    def on_message_begin(self) -> None:
        if self._answer is None or self._answer.done():  # a second answer to one request
            self.close()
        self._body, self._size, self._headers_done, self._framed = [], 0, False, False

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length" or (
            name == b"transfer-encoding" and b"chunked" in value.lower()
        ):
            self._framed = True

    def on_headers_complete(self) -> None:
        self._headers_done = True
        self._status = self._parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_ANSWER_BYTES:
            self._fail(Unanswered(f"the gateway's answer is over {MAX_ANSWER_BYTES} bytes"))
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self._status < 200:  # an interim answer (100 Continue, 103): the final follows
            self._headers_done = False
            return
        if self._answer is not None and not self._answer.done():
            keep = self._parser.should_keep_alive()
            self._answer.set_result((self._status, b"".join(self._body), keep))

    def _fail(self, exc: Exception) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(exc)
        self.close()


class Origin:
    """Requests to the origin of ``base_url`` (and under its path), at most ``limit``
    connections open, each kept for ``keepalive`` seconds of idleness.

    Its connections belong to the event loop they were opened on; once that loop is
    closed, the next request (on another loop) opens new ones. :meth:`close` closes
    every connection, and a request after it raises :class:`ClientStateError`.
    """

    def __init__(
        self, base_url: str, *, limit: int, keepalive: float, headers: dict[str, str]
    ) -> None:
        self._open: set[_Connection] = set()
        self._closed = False
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        if url.username is not None or url.password is not None:
            raise ValueError("credentials in the URL are not sent: give the client a token")
        host = url.hostname
        if ":" not in host:  # a name (an IPv6 literal has colons): its ASCII form, as DNS has it
            host = host.encode("idna").decode("ascii")
        self._host = host
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._ssl = ssl.create_default_context() if url.scheme == "https" else None
        self.path = url.path.rstrip("/")
        authority = f"[{host}]" if ":" in host else host
        fields = {"Host": authority if url.port is None else f"{authority}:{url.port}", **headers}
        for name, value in fields.items():
            if not (f"{name}{value}".isprintable() and f"{name}{value}".isascii()):
                # the value is not shown: it may be a secret
                raise ValueError(
                    f"the {name} header cannot be sent: it holds a line break, a control or "
                    "a non-ASCII character"
                )
        self._head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
        self._keepalive = keepalive
        self._limit = limit
        self._slots = asyncio.Semaphore(limit)
        self._idle: list[_Connection] = []  # the most recently used last
        self._loop: asyncio.AbstractEventLoop | None = None

    async def request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        *,
        within: float,
        retry: bool = False,
    ) -> tuple[int, bytes]:
        """The status and body of the answer to one request, within ``within`` seconds.

        Raises :class:`MemoryUnavailableError` when the request was not sent (no
        connection in time, none could be made, or a kept-alive one closed as it was
        written) and :class:`Unanswered` when it was sent and no whole answer came.
        ``retry``: a request the server may receive twice, sent again once on a new
        connection when a kept-alive one was closed under it.
        """
        head = f"{method} {target} HTTP/1.1\r\n{self._head}"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        message = (head + "\r\n").encode("ascii") + (body or b"")
        if self._closed:
            raise ClientStateError("this client is closed; open a new one")
        sent = False
        try:
            async with asyncio.timeout(within):
                self._bind()
                async with self._slots:
                    fresh = False
                    while True:
                        connection, reused = await self._connection(fresh=fresh)
                        sent = True
                        try:
                            return await self._exchange(connection, message, reused=reused)
                        except _ClosedBeforeAnswer:
                            if not retry or fresh:
                                raise MemoryUnavailableError(
                                    "the gateway closed a kept-alive connection as the request "
                                    "was written; it was not read"
                                ) from None
                            fresh, sent = True, False
        except TimeoutError as exc:
            if sent:
                raise Unanswered(f"the gateway did not answer within {within:g}s") from exc
            raise MemoryUnavailableError(
                f"the gateway could not be reached within {within:g}s"
            ) from exc

    async def close(self) -> None:
        self._closed = True
        for connection in list(self._open):
            self._drop(connection)
        self._idle.clear()
        await asyncio.sleep(0)  # the transports close on the loop's next turn

    async def _exchange(
        self, connection: _Connection, message: bytes, *, reused: bool
    ) -> tuple[int, bytes]:
        """The answer to ``message`` on ``connection``. :class:`_ClosedBeforeAnswer` only
        when the server's idle timeout met the request (``reused``, and at once)."""
        answer: asyncio.Future[tuple[int, bytes, bool]] = asyncio.get_running_loop().create_future()
        connection.expect(answer)
        written = monotonic()
        try:
            assert connection.transport is not None
            connection.transport.write(message)
            status, data, keep = await answer
        except _ClosedBeforeAnswer:
            self._drop(connection)
            # a new connection, or one the server had time to read and act on before it went
            if not reused or monotonic() - written >= CLOSE_RACE_SECONDS:
                raise Unanswered("the gateway closed the connection before it answered") from None
            raise
        except BaseException:
            self._drop(connection)  # cut short, its answer may still come: never reused
            raise
        if keep and not connection.closed and not self._closed:
            connection.idle_since = monotonic()
            self._idle.append(connection)
        else:
            self._drop(connection)
        return status, data

    async def _connection(self, *, fresh: bool) -> tuple[_Connection, bool]:
        """A kept-alive connection idle for less than the keep-alive (and ``True``), else,
        or when ``fresh``, a new one."""
        if self._closed:
            raise ClientStateError("this client is closed; open a new one")
        now = monotonic()
        while self._idle and now - self._idle[0].idle_since >= self._keepalive:
            self._drop(self._idle.pop(0))  # the least recently used first
        while self._idle and not fresh:
            connection = self._idle.pop()
            if not connection.closed:
                return connection, True
            self._drop(connection)
        loop = asyncio.get_running_loop()
        # a name's next address is tried when one has not answered in this long (uvloop's
        # create_connection has no such option: it tries them in turn)
        options: dict[str, Any] = (
            {"happy_eyeballs_delay": HAPPY_EYEBALLS_SECONDS}
            if isinstance(loop, asyncio.BaseEventLoop)
            else {}
        )
        try:
            _, connection = await loop.create_connection(
                _Connection, self._host, self._port, ssl=self._ssl, **options
            )
        except OSError as exc:  # refused, no route, a name that does not resolve, TLS
            raise MemoryUnavailableError(f"the gateway is unreachable: {exc!r}") from exc
        if self._closed:
            connection.close()
            raise ClientStateError("this client is closed; open a new one")
        self._open.add(connection)
        return connection, False

    def _bind(self) -> None:
        """Use the running loop; leave the connections of a loop that has been closed."""
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        if self._loop is not None and not self._loop.is_closed():
            raise ClientStateError("this client is in use on another event loop")
        for connection in self._open:
            connection.close()
        self._open.clear()
        self._idle.clear()
        self._slots = asyncio.Semaphore(self._limit)
        self._loop = loop

    def _drop(self, connection: _Connection) -> None:
        connection.close()
        self._open.discard(connection)

    def __del__(self, _warn: Any = warnings.warn) -> None:
        left = sum(not connection.closed for connection in self._open)
        if left and not self._closed:
            _warn(f"unclosed connections to {self._host}:{self._port}: {left}", ResourceWarning)
