"""Writer locks for the memory files.

Readers never lock (files are replaced atomically); writers take the lock of
one file for the read-modify-write. Two implementations:

- :class:`RedisLocks` serialise writers on any number of hosts. A Redis lock is
  a lease: it expires if its holder stalls. Its :class:`Fence` is checked by the
  commit itself (:mod:`memsvc.store.journal`), so a writer whose lease ran out commits
  nothing, and a stalled writer's late rename is recognised and repaired.
- :class:`FileLocks` serialise writers on one host with ``flock`` on
  ``<file>.lock`` - the same lock file Hermes Agent uses, so memsvc and a Hermes
  agent sharing a folder also wait for each other. Needs no server.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

import structlog
from redis.asyncio import Redis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError, RedisError

from memsvc.errors import LockTimeoutError, LockUnavailableError
from memsvc.keys import Keys
from memsvc.paths import DataLayout, Target
from memsvc.store.atomicfile import open_lock_file

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Fence:
    """What a commit is checked against: the Redis lease its writer holds."""

    lock_key: str
    token: str
    lease_ms: int


class Lease(Protocol):
    @property
    def fence(self) -> Fence | None:
        """The lease to check a commit against; ``None`` for a lock that cannot expire."""


class WriteLocks(Protocol):
    """The writer lock of each memory file: a Redis lease across hosts, ``flock`` in one."""

    def hold(
        self, target: Target, user_id: str, agent_id: str
    ) -> contextlib.AbstractAsyncContextManager[Lease]:
        """Hold the writer lock of one memory file for the duration of the block."""


class _RedisLease:
    def __init__(self, lock: Lock, lease_seconds: float) -> None:
        token = lock.local.token
        assert token is not None, "a lease exists only for an acquired lock"
        self.fence: Fence | None = Fence(
            lock_key=str(lock.name),
            token=token.decode() if isinstance(token, bytes) else str(token),
            lease_ms=int(lease_seconds * 1000),
        )


class RedisLocks:
    """Redis leases, with waiters of one process queued locally first.

    Without the local queue every waiting task polls Redis; a hundred of them on
    one hot file keep the event loop so busy that the holder's own lease can run
    out before it commits. With it, one task per process and file polls.
    """

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        *,
        lease_seconds: float = 10.0,
        wait_seconds: float = 10.0,
        poll_seconds: float = 0.01,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._lease = lease_seconds
        self._wait = wait_seconds
        self._poll = poll_seconds
        self._local = LocalQueues()

    def hold(
        self, target: Target, user_id: str, agent_id: str
    ) -> contextlib.AbstractAsyncContextManager[Lease]:
        return self.hold_key(self._keys.store_lock(target, user_id, agent_id))

    @contextlib.asynccontextmanager
    async def hold_key(self, name: str) -> AsyncIterator[Lease]:
        """Hold the lock named ``name`` (any key of the keyspace) for the block."""
        deadline = time.monotonic() + self._wait
        async with self._local.turn(name, self._wait):
            # A new Lock per critical section, not thread-local: tasks never share a token.
            lock = Lock(
                self._redis,
                name,
                timeout=self._lease,
                sleep=self._poll,
                blocking_timeout=max(0.0, deadline - time.monotonic()),
                thread_local=False,
            )
            try:
                acquired = await lock.acquire()
            except RedisError as exc:
                raise LockUnavailableError(f"cannot reach Redis for the lock: {exc}") from exc
            if not acquired:
                raise LockTimeoutError(f"{name!r} stayed busy for {self._wait:g}s")
            try:
                yield _RedisLease(lock, self._lease)
            finally:
                await asyncio.shield(self._release(lock))

    @staticmethod
    async def _release(lock: Lock) -> None:
        try:
            await lock.release()
        except LockError:
            log.warning("lock_expired_before_release", lock=lock.name)
        except RedisError as exc:
            log.warning("lock_release_failed", lock=lock.name, error=str(exc))


class LocalQueues:
    """First come, first served per key, within this process.

    One asyncio lock per key, kept only while someone waits for or holds it.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def turn(self, key: str, wait_seconds: float | None = None) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            try:
                await asyncio.wait_for(lock.acquire(), wait_seconds)
            except TimeoutError:
                raise LockTimeoutError(f"{key!r} stayed busy for {wait_seconds:g}s") from None
            try:
                yield
            finally:
                lock.release()
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


class ProcessLocks:
    """Named locks within one process: what ``hold_key`` needs when Redis is embedded."""

    def __init__(self, *, wait_seconds: float = 10.0) -> None:
        self._wait = wait_seconds
        self._local = LocalQueues()

    @contextlib.asynccontextmanager
    async def hold_key(self, name: str) -> AsyncIterator[Lease]:
        async with self._local.turn(name, self._wait):
            yield _HeldLease()


class KeyedLocks(Protocol):
    def hold_key(self, name: str) -> contextlib.AbstractAsyncContextManager[Lease]:
        """Hold the lock named ``name`` for the duration of the block."""


class _HeldLease:
    fence: Fence | None = None  # held until released in this process; it cannot expire


class FileLocks:
    def __init__(
        self, layout: DataLayout, *, wait_seconds: float = 10.0, poll_seconds: float = 0.005
    ) -> None:
        self._layout = layout
        self._wait = wait_seconds
        self._poll = poll_seconds
        self._local = LocalQueues()

    @contextlib.asynccontextmanager
    async def hold(self, target: Target, user_id: str, agent_id: str) -> AsyncIterator[Lease]:
        path = self._layout.store_file(target, user_id, agent_id)
        lock_file = self._layout.anchored(path).sibling(path.name + ".lock")
        deadline = time.monotonic() + self._wait
        async with self._local.turn(lock_file.relative, self._wait):
            fd = await asyncio.to_thread(open_lock_file, lock_file)
            try:
                while not self._try_lock(fd):
                    if time.monotonic() >= deadline:
                        raise LockTimeoutError(
                            f"{lock_file.relative!r} stayed busy for {self._wait:g}s"
                        )
                    await asyncio.sleep(self._poll)
                yield _HeldLease()
            finally:
                os.close(fd)  # closing the descriptor releases the flock

    @staticmethod
    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
