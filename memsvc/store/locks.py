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
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from memsvc import telemetry
from memsvc.errors import LockTimeoutError, LockUnavailableError
from memsvc.keys import Keys
from memsvc.paths import DataLayout, Target
from memsvc.redisbatch import CommandBatcher
from memsvc.store.atomicfile import open_lock_file
from memsvc.store.filejobs import file_job
from memsvc.tasks import TaskSet

log = structlog.get_logger(__name__)


# The lease a holder releases: deleted only by the token that took it, and one waiter woken.
# The wake list keeps at most one token: a release nobody waited for wakes the next
# waiter once, for nothing, and the waiter simply looks again.
RELEASE_LUA = """
local function release(lock, wake, token, wake_ms)
  if redis.call('GET', lock) ~= token then return 0 end
  redis.call('DEL', lock)
  redis.call('RPUSH', wake, '1')
  redis.call('LTRIM', wake, -1, -1)
  redis.call('PEXPIRE', wake, wake_ms)
  return 1
end
"""
_RELEASE = RELEASE_LUA + "return release(KEYS[1], KEYS[2], ARGV[1], ARGV[2])"
# KEYS: lock; ARGV: token, lease (ms)
_EXTEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""

# A waiter blocks on the wake list at most this long between looks at the lock: below the
# shortest command timeout memsvc allows (1.5 s), so a blocked read never times out.
WAKE_CAP_SECONDS = 1.0

ReadsUnderLock = Callable[[Pipeline], None]


@dataclass(frozen=True)
class Fence:
    """What a commit is checked against: the Redis lease its writer holds."""

    lock_key: str
    token: str
    lease_ms: int

    @property
    def wake_key(self) -> str:
        return wake_key(self.lock_key)


def wake_key(lock_key: str) -> str:
    """Where releases of ``lock_key`` wake its waiters (same hash tag: same slot)."""
    return f"{lock_key}:wake"


class Lease(Protocol):
    @property
    def fence(self) -> Fence | None:
        """The lease to check a commit against; ``None`` for a lock that cannot expire."""

    @property
    def reads(self) -> list[Any] | None:
        """The answers to the reads queued with the acquire; ``None`` if none were sent."""

    def released_elsewhere(self) -> None:
        """The holder's last script released the lease already (see ``RELEASE_LUA``)."""

    async def take(self) -> None:
        """Take a lease that ``hold(..., deferred=True)`` left to the holder's commit, with
        the reads given to ``hold``, once that commit did not take it."""

    def taken_by_commit(self) -> None:
        """The holder's commit took the lease (see ``FileJournal.commit``)."""


class WriteLocks(Protocol):
    """The writer lock of each memory file: a Redis lease across hosts, ``flock`` in one."""

    def hold(
        self,
        target: Target,
        user_id: str,
        agent_id: str,
        *,
        reads: ReadsUnderLock | None = None,
        deferred: bool = False,
    ) -> contextlib.AbstractAsyncContextManager[Lease]:
        """Hold the writer lock of one memory file for the duration of the block.

        ``reads`` queues commands to send with the acquire, so that what a writer reads
        under the lock costs no round trip of its own; a lock without Redis ignores it.
        ``deferred``: only this process's turn is taken; the lease is left to the holder's
        commit, or to :meth:`Lease.take` (a lock without Redis is taken at once).
        """


class _RedisLease:
    def __init__(self, fence: Fence, take: Callable[[_RedisLease], Awaitable[None]]) -> None:
        self.fence: Fence | None = fence
        self.reads: list[Any] | None = None
        self.taken = False
        self.released = False
        self._take = take

    def released_elsewhere(self) -> None:
        self.released = True

    async def take(self) -> None:
        if not self.taken:
            await self._take(self)

    def taken_by_commit(self) -> None:
        self.taken = True
        telemetry.current().lock_waited("redis", 0.0)


class RedisLocks:
    """Redis leases, with waiters of one process queued locally first.

    Without the local queue every waiting task would ask Redis; with it, one task per
    process and file does. That task does not poll: it blocks on the lock's wake list,
    which every release pushes to, for at most the lease's remaining time (a holder
    that dies wakes nobody; its lease runs out instead). Acquires and releases go
    out with the other commands of their loop turn (``commands``).
    """

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        *,
        lease_seconds: float = 10.0,
        wait_seconds: float = 10.0,
        commands: CommandBatcher | None = None,
    ) -> None:
        self._redis = redis
        self._commands = commands or CommandBatcher(redis)
        self._keys = keys
        self._lease_ms = int(lease_seconds * 1000)
        self._wait = wait_seconds
        self._local = LocalQueues()
        self._release = redis.register_script(_RELEASE)
        self._extend = redis.register_script(_EXTEND)
        self._keeping = TaskSet("lock leases kept")

    def hold(
        self,
        target: Target,
        user_id: str,
        agent_id: str,
        *,
        reads: ReadsUnderLock | None = None,
        deferred: bool = False,
    ) -> contextlib.AbstractAsyncContextManager[Lease]:
        return self.hold_key(
            self._keys.store_lock(target, user_id, agent_id), reads=reads, deferred=deferred
        )

    @contextlib.asynccontextmanager
    async def hold_key(
        self,
        name: str,
        *,
        reads: ReadsUnderLock | None = None,
        keep: bool = False,
        deferred: bool = False,
    ) -> AsyncIterator[Lease]:
        """Hold the lock named ``name`` (any key of the keyspace) for the block.

        ``keep``: extend the lease every third of it while the block runs, for a holder
        whose work may outlast it with no fence to stop a late writer (a mirror waiting on
        a slow Hindsight); one that stalls past its lease still loses it. ``deferred``:
        see :meth:`WriteLocks.hold` (not with ``keep``).
        """
        if deferred and keep:
            raise ValueError("a lease kept alive is taken at once, not by a commit")
        deadline = time.monotonic() + self._wait

        async def take(lease: _RedisLease) -> None:
            assert lease.fence is not None
            try:
                lease.reads = await self._acquire(name, lease.fence.token, reads, deadline)
            except RedisError as exc:
                raise LockUnavailableError(f"cannot reach Redis for the lock: {exc}") from exc
            lease.taken = True
            telemetry.current().lock_waited("redis", self._wait - (deadline - time.monotonic()))

        async with self._local.turn(name, self._wait):
            token = uuid.uuid4().hex  # per critical section: tasks never share a token
            lease = _RedisLease(Fence(name, token, self._lease_ms), take)
            if not deferred:
                await lease.take()
            keeping = self._keeping.spawn(self._keep(name, token)) if keep else None
            try:
                yield lease
            finally:
                if keeping is not None:
                    keeping.cancel()  # one landing late finds the lock gone or another's: a no-op
                if lease.taken and not lease.released:
                    await asyncio.shield(self._release_lease(name, token))

    async def _keep(self, name: str, token: str) -> None:
        while True:
            await asyncio.sleep(self._lease_ms / 3000)
            try:
                kept = await self._commands.script(
                    self._extend, keys=[name], args=[token, self._lease_ms]
                )
            except RedisError as exc:  # the next tick tries again, within the lease
                log.warning("lock_not_extended", lock=name, error=str(exc))
                continue
            if not kept:
                log.warning("lock_lost", lock=name)
                return

    async def _acquire(
        self, name: str, token: str, reads: ReadsUnderLock | None, deadline: float
    ) -> list[Any] | None:

        def queue(pipe: Pipeline) -> None:
            pipe.set(name, token, nx=True, px=self._lease_ms)
            pipe.pttl(name)
            if reads is not None:
                reads(pipe)

        async def give_back(results: list[Any]) -> None:  # taken for a caller that left
            if results[0]:
                await self._release_lease(name, token)

        while True:
            acquired, left_ms, *found = await self._commands.execute(queue, abandoned=give_back)
            if acquired:
                return found if reads is not None else None
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockTimeoutError(f"{name!r} stayed busy for {self._wait:g}s")
            held_for = left_ms / 1000 if left_ms > 0 else WAKE_CAP_SECONDS
            timeout = max(0.01, min(left, held_for, WAKE_CAP_SECONDS))
            await self._redis.blpop([wake_key(name)], timeout=timeout)  # type: ignore[arg-type,misc]

    async def _release_lease(self, name: str, token: str) -> None:
        try:
            released = await self._commands.script(
                self._release, keys=[name, wake_key(name)], args=[token, self._lease_ms]
            )
        except RedisError as exc:
            log.warning("lock_release_failed", lock=name, error=str(exc))
            return
        if not released:
            log.warning("lock_expired_before_release", lock=name)


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
                async with asyncio.timeout(wait_seconds):  # unlike wait_for, makes no task
                    await lock.acquire()
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
    async def hold_key(self, name: str, *, keep: bool = False) -> AsyncIterator[Lease]:
        """``keep`` is what these locks always do: they expire never."""
        async with self._local.turn(name, self._wait):
            yield _HeldLease()


class KeyedLocks(Protocol):
    def hold_key(
        self, name: str, *, keep: bool = False
    ) -> contextlib.AbstractAsyncContextManager[Lease]:
        """Hold the lock named ``name`` for the duration of the block (``keep``: while the
        block runs, however long)."""


class _HeldLease:
    """A lock held until released in this process: it cannot expire, and reads nothing."""

    fence: Fence | None = None
    reads: list[Any] | None = None

    def released_elsewhere(self) -> None:
        raise AssertionError("a lock that is not a Redis lease is released by its holder")

    async def take(self) -> None:
        """Held already: these locks are taken at once."""

    def taken_by_commit(self) -> None:
        raise AssertionError("a lock that is not a Redis lease is not taken by a commit")


class FileLocks:
    def __init__(
        self, layout: DataLayout, *, wait_seconds: float = 10.0, poll_seconds: float = 0.005
    ) -> None:
        self._layout = layout
        self._wait = wait_seconds
        self._poll = poll_seconds
        self._local = LocalQueues()

    @contextlib.asynccontextmanager
    async def hold(
        self,
        target: Target,
        user_id: str,
        agent_id: str,
        *,
        reads: ReadsUnderLock | None = None,
        deferred: bool = False,
    ) -> AsyncIterator[Lease]:
        path = self._layout.store_file(target, user_id, agent_id)
        lock_file = self._layout.anchored(path).sibling(path.name + ".lock")
        deadline = time.monotonic() + self._wait
        async with self._local.turn(lock_file.relative, self._wait):
            fd = await file_job(lambda: open_lock_file(lock_file), discard=os.close)
            try:
                while not self._try_lock(fd):
                    if time.monotonic() >= deadline:
                        raise LockTimeoutError(
                            f"{lock_file.relative!r} stayed busy for {self._wait:g}s"
                        )
                    await asyncio.sleep(self._poll)
                telemetry.current().lock_waited("file", self._wait - (deadline - time.monotonic()))
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
