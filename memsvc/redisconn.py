"""How memsvc reaches Redis: bounded waits, and backoff while it is away.

Every connection has a connect timeout and a command (socket) timeout, so a
Redis that accepts connections but never answers (paused, swapping, a
half-done failover) costs a caller those seconds instead of hanging it. A
command whose pooled connection died with a restart is retried once on a fresh
connection. Loops that wait an outage out (a worker's stream read and job
poll, a client's inbox) back off exponentially with jitter up to a cap, so an
outage of minutes costs a few log lines, not two a second.

A task that waits on Redis is stopped with :func:`cancel_and_wait`: on Python
3.11 a cancellation that lands while redis-py is mid-command can be lost (the
command returns normally, the task goes on with ``cancelling() == 1``), so a
single ``cancel()`` followed by ``await task`` may wait forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any

import structlog
from redis._parsers.hiredis import NOT_ENOUGH_DATA, _AsyncHiredisParser
from redis.asyncio import (
    Connection,
    ConnectionPool,
    Redis,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.asyncio.retry import Retry
from redis.backoff import EqualJitterBackoff, NoBackoff
from redis.connection import HiredisRespSerializer
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    BusyLoadingError,
    ConnectionError,
    ExecAbortError,
    NoPermissionError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    TimeoutError,
)

from memsvc.errors import InvalidInputError
from memsvc.settings import ServiceSettings

log = structlog.get_logger(__name__)

try:
    import hiredis

    HIREDIS_PACKS = hasattr(hiredis, "pack_command")
    _HIREDIS = HiredisRespSerializer()
except ImportError:  # pragma: no cover - hiredis comes with arq
    HIREDIS_PACKS = False

# What an unreachable or unresponsive Redis raises (sockets raise OSError directly), and
# what one that refuses writes for now answers: over ``maxmemory`` (``OOM``) or a replica
# (``READONLY``, an old primary after a failover). A refused command did nothing, and the
# same Redis may take it later: either way it is an outage, waited out and retried.
REDIS_DOWN: tuple[type[Exception], ...] = (
    ConnectionError,
    TimeoutError,
    OSError,
    OutOfMemoryError,
    ReadOnlyError,
)


# How Redis words a refusal of the connection's user or server that redis-py raises as
# a plain ``ResponseError``: a command it does not know, and (inside a script) an ACL's
# refusal of a command or key, or an unknown command, in Redis 7.0's words and 7.2's.
_REFUSED_WORDS = (
    "unknown command",
    "unknown subcommand",
    "The user executing the script can't",
    "ACL failure in script",
    "Unknown Redis command called from script",
    "NOPERM",  # a transaction's command, once its EXECABORT is unwrapped
)
_PIPELINE_ERROR = "of pipeline caused error: "  # what redis-py puts before Redis' words
_DISCARDED = "Transaction discarded because of: "  # EXECABORT, before the command's error


def lasting_refusal(exc: BaseException) -> bool:
    """Whether Redis refused for a reason it will keep until an operator acts: the user
    (see :func:`refused_user`) or a key of another type (``WRONGTYPE``). Other refusals
    (``OOM``, ``READONLY``, ``LOADING``, ``BUSY``, ``MISCONF``) pass."""
    return refused_user(exc) or _said(exc).startswith("WRONGTYPE")


def refused_user(exc: BaseException) -> bool:
    """Whether Redis refused the connection's user or server, whatever the key: credentials
    (``WRONGPASS``, ``NOAUTH``), an ACL (``NOPERM``), a command the server does not know."""
    if isinstance(exc, AuthenticationError | AuthorizationError | NoPermissionError):
        return True
    return _said(exc).startswith(_REFUSED_WORDS)


def _said(exc: BaseException) -> str:
    """Redis' own words in a plain ``ResponseError`` or an ``EXECABORT`` (its subclasses
    name passing states), else nothing."""
    if isinstance(exc, ExecAbortError):
        return str(exc).partition(_DISCARDED)[2]
    if type(exc) is not ResponseError:
        return ""
    return str(exc).rpartition(_PIPELINE_ERROR)[2].lstrip("('\"")


def text(value: bytes | str, errors: str = "strict") -> str:
    """A Redis reply (bytes unless the client decodes) as text."""
    return value.decode("utf-8", errors) if isinstance(value, bytes) else value


class SentThenLost(ConnectionError):
    """The connection broke after a command was written to it and before its reply: the
    command may have run. A redis-py ``ConnectionError`` that says more, handled as one
    wherever it is not looked for."""


@dataclass
class Sends:
    """What became of the commands sent while :func:`noting_sends` watched."""

    written: bool = False
    lost: bool = False  # a connection broke after a write, before every reply was read


_SENDS: contextvars.ContextVar[Sends | None] = contextvars.ContextVar("redis_sends", default=None)
# Replies redis-py raises as connection errors: Redis answered, so the command did not run
_ANSWERED = (BusyLoadingError, AuthenticationError)


class noting_sends:  # used as a function: ``with noting_sends() as sends``
    """Note whether the commands sent in this block may have run unanswered.

    redis-py raises one ``ConnectionError`` for a connection refused before anything
    was sent, for an error reply such as LOADING, and for a connection lost after a
    command was written, and its one retry hides the first try's fate: only the
    connection knows. A caller that must not answer "nothing was done" for a
    command that may have run reads :attr:`Sends.lost` afterwards. (A class, not a
    generator: every shared pipeline goes through one.)
    """

    def __enter__(self) -> Sends:
        sends = Sends()
        self._token = _SENDS.set(sends)
        return sends

    def __exit__(self, *_: object) -> None:
        _SENDS.reset(self._token)


class MemsvcConnection:
    """What every connection memsvc opens does beside redis-py's own.

    - It notes commands written and lost (:func:`noting_sends`), once connected: a
      refused connection, the handshake's AUTH and SELECT, or a health check's PING
      is no command sent.
    - It reconnects before its next command once it answered READONLY. After a
      failover the old primary is a replica, and a connection to it stays there,
      refusing every write for good. Behind a name that now points at the new
      primary (DNS, a proxy), a new connection reaches it. The one that heard
      READONLY finishes what it sent, so a pipeline gets every reply in its place.
    """

    _answered_read_only = False

    async def connect(self) -> None:
        token = _SENDS.set(None)  # the handshake sends nothing of the caller's
        try:
            await super().connect()  # type: ignore[misc]
        finally:
            _SENDS.reset(token)

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)  # type: ignore[misc]
        except ReadOnlyError:
            self._answered_read_only = True
            raise
        except _ANSWERED:
            raise
        except ConnectionError:
            _lost()
            raise

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if self._answered_read_only:
            self._answered_read_only = False
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
        if not self.is_connected:  # type: ignore[attr-defined]
            await self.connect()
        elif check_health:  # its PING is no command of the caller's either
            token = _SENDS.set(None)
            try:
                await self.check_health()  # type: ignore[attr-defined]
            finally:
                _SENDS.reset(token)
        sends = _SENDS.get()
        if sends is not None:
            sends.written = True
        try:
            await super().send_packed_command(command, check_health=False)  # type: ignore[misc]
        except ConnectionError:  # some of it may have left
            _lost()
            raise


def _lost() -> None:
    sends = _SENDS.get()
    if sends is not None and sends.written:
        sends.lost = True


class PackingConnection(MemsvcConnection, Connection):
    """A connection that packs commands with hiredis' C packer, as redis-py's sync client does,
    and hands over replies already received without arming a timeout.

    redis-py's asyncio connection packs every command in Python (redis/redis-py#4176);
    a worker spent a fifth of its time there. Without hiredis the Python packer stays.
    It also arms the socket timeout around every reply it reads, even one that arrived
    with the pipeline's first: a worker's pipelines carry up to a dozen commands, and
    those timers were a twelfth of its time. A reply still on its way is waited for
    under the timeout, as before.
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        if any(isinstance(arg, memoryview) for arg in args):  # what hiredis does not take
            return super().pack_command(*args)
        packed: list[bytes] = _HIREDIS.pack(*args)
        return packed

    async def can_read_destructive(self) -> bool:
        """Whether a connection taken from the pool holds unread data, without a turn of the loop
        when nothing is buffered.

        redis-py's check tries a read under a zero timeout, which costs a loop turn and a
        cancelled read per checkout, and sees no more than what the loop has read from
        the socket already: the timeout fires before the read's callback runs (asyncio
        and uvloop alike). What it would see is in the buffers looked at here. A
        connection Redis closed while it idled, its end not yet read, fails its next
        command, which is retried once on a fresh connection, as redis-py's check leaves
        it too.
        """
        reader, stream = self._hiredis_reader(), self._reader
        if (
            reader is not None
            and stream is not None
            and not reader.has_data()
            and not stream._buffer  # type: ignore[attr-defined]
            and not stream.at_eof()
            and stream.exception() is None
        ):
            return False
        return bool(await super().can_read_destructive())  # type: ignore[no-untyped-call]

    async def read_response(
        self,
        disable_decoding: bool = False,
        timeout: float | None = None,  # noqa: ASYNC109 - redis-py's signature
        *,
        disconnect_on_error: bool = True,
        push_request: bool | None = False,
    ) -> Any:
        reader = self._hiredis_reader()
        if reader is not None:
            try:
                response = reader.gets(False) if disable_decoding else reader.gets()
            except BaseException:  # a garbled reply: the connection is no use any more
                _lost()
                if disconnect_on_error:
                    await self.disconnect(nowait=True)
                raise
            if response is not NOT_ENOUGH_DATA:
                return await self._received(response, disconnect_on_error)
        return await super().read_response(
            disable_decoding,
            timeout,
            disconnect_on_error=disconnect_on_error,
            push_request=push_request,
        )

    def _hiredis_reader(self) -> Any:
        """The hiredis reader of a connected hiredis parser (what holds replies read from the
        socket), else ``None``: the Python parser goes redis-py's way throughout."""
        parser = self._parser
        if isinstance(parser, _AsyncHiredisParser) and parser._connected:
            return parser._reader
        return None

    async def _received(self, response: Any, disconnect_on_error: bool) -> Any:
        """A buffered reply, raised or returned as the parser and redis-py would have."""
        error = response if isinstance(response, ConnectionError) else None
        if isinstance(response, list) and response and isinstance(response[0], ConnectionError):
            error = response[0]
        if error is not None:
            if disconnect_on_error:
                await self.disconnect(nowait=True)
            raise error
        if self.health_check_interval:
            self.next_health_check = asyncio.get_running_loop().time() + self.health_check_interval
        if isinstance(response, ResponseError):
            if isinstance(response, ReadOnlyError):
                self._answered_read_only = True
            raise response from None
        return response


class _PlainConnection(MemsvcConnection, Connection):
    pass


class _TLSConnection(MemsvcConnection, SSLConnection):
    pass


class _UnixConnection(MemsvcConnection, UnixDomainSocketConnection):
    pass


# redis-py's class for each scheme (``from_url`` picks it) -> memsvc's
_MEMSVC_CLASS: dict[type[Any], type[Any]] = {
    Connection: PackingConnection if HIREDIS_PACKS else _PlainConnection,
    SSLConnection: _TLSConnection,
    UnixDomainSocketConnection: _UnixConnection,
}


def connection_options(settings: ServiceSettings) -> dict[str, Any]:
    """Keyword arguments of ``Redis(...)`` for every connection memsvc opens."""
    return {
        "socket_connect_timeout": settings.redis_connect_timeout_seconds,
        "socket_timeout": settings.redis_timeout_seconds,
        # a dead pooled connection (Redis restarted) gets one fresh try; a timeout does not:
        # retrying it would multiply how long a caller waits on a Redis that does not answer
        "retry": Retry(NoBackoff(), 1, supported_errors=(ConnectionError,)),
        "retry_on_error": [ConnectionError],
    }


class UnqueuedPool(ConnectionPool):
    """A pool that hands out connections without queueing callers behind each other.

    redis-py 5.3 checks a pooled connection for unread data while it holds the pool's
    lock, and with hiredis that check waits one turn of the event loop: checkouts
    queue one per loop turn (redis/redis-py#3692). With a hundred events in flight a
    worker's round trips took 40 ms where the wire took 2. Taking a connection is
    synchronous here (no other task runs meanwhile), and the same check runs after,
    outside any lock.
    """

    async def get_connection(self, *_: Any, **__: Any) -> Any:
        connection = self.get_available_connection()  # type: ignore[no-untyped-call]
        try:
            await self.ensure_connection(connection)
        except BaseException:
            await self.release(connection)
            raise
        return connection


async def wait_for_redis(url: str, settings: ServiceSettings, *, patient: bool = True) -> None:
    """Return once Redis answers: a process started before its Redis (or during an
    outage) waits for it as a running one would. Credentials it refuses are raised at
    once: waiting would not change them; so is any failure when not ``patient``."""
    redis = connect(url, settings)
    outage = Outage("redis_unreachable_at_start", cap=5.0)
    try:
        while True:
            try:
                await redis.ping()
            except (AuthenticationError, AuthorizationError):
                raise
            except REDIS_DOWN as exc:
                if not patient:
                    raise
                await outage.wait(exc)
            else:
                outage.over()
                return
    finally:
        await redis.aclose()


async def refuse_a_cluster(url: str, settings: ServiceSettings) -> None:
    """Refuse a node of a Redis Cluster at start: memsvc speaks to one Redis, and a node
    answers ``MOVED`` for the keys of most users, mid-write. A Redis not up yet is let be:
    the process waits for it as for any outage."""
    redis = connect(url, settings)
    try:
        info = await redis.info("cluster")
    except REDIS_DOWN:
        return
    except ResponseError as exc:  # an ACL without INFO: the check is the only loss
        log.warning("redis_cluster_check_skipped", error=str(exc))
        return
    finally:
        await redis.aclose()
    if info.get("cluster_enabled"):
        raise InvalidInputError(
            "MEMSVC_REDIS_URL names a node of a Redis Cluster; memsvc runs on one Redis "
            "(a primary, with replicas if wanted), not on a Cluster"
        )


def connect(url: str, settings: ServiceSettings) -> Redis:
    return Redis.from_pool(connection_pool(url, settings, UnqueuedPool))


def connection_pool(
    url: str, settings: ServiceSettings, kind: type[ConnectionPool] = ConnectionPool
) -> ConnectionPool:
    """A pool of memsvc's connections to ``url``: its options, and its connection class
    for the URL's scheme (packing for plain TCP; each a :class:`MemsvcConnection`)."""
    pool = kind.from_url(url, **connection_options(settings))
    pool.connection_class = _MEMSVC_CLASS.get(pool.connection_class, pool.connection_class)
    return pool


class Failures:
    """Consecutive failures of one loop, logged sparingly: the 1st, 2nd, 4th, 8th ...
    failure, with its count, so an hour's outage costs a loop a dozen lines, not one per
    try; the first success after them is logged once, as ``redis_reachable_again`` when
    the last failure was Redis being away (:data:`REDIS_DOWN`), else as ``recovered``.
    For a loop that keeps its own pace (a heartbeat); :class:`Outage` also paces the
    tries."""

    def __init__(self, event: str, **fields: Any) -> None:
        self._event = event
        self._fields = fields
        self.failures = 0
        self._redis_down = False  # what the last failure was

    def note(self, exc: BaseException, **more: Any) -> None:
        self.failures += 1
        self._redis_down = isinstance(exc, REDIS_DOWN)
        if self.failures & (self.failures - 1) == 0:  # a power of two
            log.warning(
                self._event,
                error=str(exc) or type(exc).__name__,
                failures=self.failures,
                **more,
                **self._fields,
            )

    def over(self) -> None:
        if self.failures:
            log.warning(
                "redis_reachable_again" if self._redis_down else "recovered",
                after=self._event,
                failures=self.failures,
                **self._fields,
            )
            self.failures = 0


class Outage(Failures):
    """Consecutive failures of one loop to reach Redis, and how long to wait after each:
    from ``base`` to ``cap`` seconds with jitter (so that many processes do not reconnect
    in step), logged as :class:`Failures` logs them."""

    def __init__(self, event: str, *, cap: float, base: float = 0.25, **fields: Any) -> None:
        super().__init__(event, **fields)
        self._backoff = EqualJitterBackoff(cap=cap, base=base)

    async def wait(self, exc: BaseException, *, wake: asyncio.Event | None = None) -> None:
        """Sleep the backoff out, or until ``wake`` is set (cleared first): another call
        just heard from Redis, so it is back."""
        delay = self._backoff.compute(self.failures + 1)
        self.note(exc, retry_in=round(delay, 2))
        if wake is None:
            await asyncio.sleep(delay)
            return
        wake.clear()
        with contextlib.suppress(asyncio.TimeoutError):  # the builtin: this module's is Redis'
            await asyncio.wait_for(wake.wait(), delay)


async def cancel_and_wait(task: asyncio.Future[Any], *, every: float = 0.25) -> None:
    """Cancel ``task`` and return once it has ended, cancelling again while it runs on."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=every)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()  # retrieved: no "exception was never retrieved" at exit
