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
from typing import Any

import structlog
from redis.asyncio import Connection, ConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import EqualJitterBackoff, NoBackoff
from redis.connection import HiredisRespSerializer
from redis.exceptions import ConnectionError, TimeoutError

from memsvc.settings import ServiceSettings

log = structlog.get_logger(__name__)

try:
    import hiredis

    HIREDIS_PACKS = hasattr(hiredis, "pack_command")
    _HIREDIS = HiredisRespSerializer()
except ImportError:  # pragma: no cover - hiredis comes with arq
    HIREDIS_PACKS = False

# What an unreachable or unresponsive Redis raises (sockets raise OSError directly).
REDIS_DOWN: tuple[type[Exception], ...] = (ConnectionError, TimeoutError, OSError)


class PackingConnection(Connection):
    """A connection that packs commands with hiredis' C packer, as redis-py's sync client does.

    redis-py's asyncio connection packs every command in Python (redis/redis-py#4176);
    a worker spent a fifth of its time there. Without hiredis the Python packer stays.
    """

    def pack_command(self, *args: Any) -> list[bytes]:
        if any(isinstance(arg, memoryview) for arg in args):  # what hiredis does not take
            return super().pack_command(*args)
        packed: list[bytes] = _HIREDIS.pack(*args)
        return packed


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


def connect(url: str, settings: ServiceSettings) -> Redis:
    options = connection_options(settings)
    if HIREDIS_PACKS and url.startswith("redis://"):  # TLS and unix sockets keep their class
        options["connection_class"] = PackingConnection
    return Redis.from_pool(UnqueuedPool.from_url(url, **options))


class Outage:
    """Consecutive failures of one loop to reach Redis, and how long to wait after each.

    Waits grow from ``base`` to ``cap`` seconds with jitter (so that many processes do
    not reconnect in step); the first success after an outage is logged once.
    """

    def __init__(self, event: str, *, cap: float, base: float = 0.25, **fields: Any) -> None:
        self._event = event
        self._backoff = EqualJitterBackoff(cap=cap, base=base)
        self._fields = fields
        self.failures = 0

    async def wait(self, exc: BaseException) -> None:
        self.failures += 1
        delay = self._backoff.compute(self.failures)
        log.warning(
            self._event,
            error=str(exc) or type(exc).__name__,
            failures=self.failures,
            retry_in=round(delay, 2),
            **self._fields,
        )
        await asyncio.sleep(delay)

    def over(self) -> None:
        if self.failures:
            log.warning("redis_reachable_again", after=self._event, failures=self.failures)
            self.failures = 0


async def cancel_and_wait(task: asyncio.Future[Any], *, every: float = 0.25) -> None:
    """Cancel ``task`` and return once it has ended, cancelling again while it runs on."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=every)
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()  # retrieved: no "exception was never retrieved" at exit
