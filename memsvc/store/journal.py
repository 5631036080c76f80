"""The file journal: fenced commits for memory files, and repair of stale renames.

A Redis lock is a lease: a writer that stalls (GC, SIGSTOP, a slow disk) can
lose it and still go on to rename its file over the file of the writer that took
over. A file system has no compare-and-swap, so the commit point of a write is
moved into Redis instead. For each file the journal keeps the head version: its
number, its bytes, the fingerprint of the file that holds them (inode, mtime,
size, digest - known before the rename) and the fingerprint of the file it was
computed from. A commit is one script that checks the writer still holds its lease
and that nobody committed since it read, then records the new head and the
write's receipt. Only then is the file renamed into place. A writer whose own
last commit the file on disk still is may commit before it holds the lease: the
script then finds the lock free and takes it as it records, or records nothing.

The file can therefore lag behind the head, in two ways, both recognisable from
its fingerprint: the head's writer has not renamed yet (or died before it did):
the file is the head's base, while the head's rename is unconfirmed; or a writer
that stalled after its commit renamed its older version late: the file is one
whose rename was never confirmed.
Readers then serve the head's bytes, and the next writer (or the stalled writer
itself, once it sees a newer head) puts them back on disk. Any other file is an
edit made behind memsvc's back (by hand, by Hermes) and is taken as it is.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError

from memsvc.errors import LockLostError, LockUnavailableError
from memsvc.keys import Keys
from memsvc.paths import Target
from memsvc.redisbatch import CommandBatcher
from memsvc.store.locks import RELEASE_LUA, Fence
from memsvc.store.receipts import COUNTS_LUA, RECEIPT_TTL_SECONDS

log = structlog.get_logger(__name__)

JOURNAL_TTL_SECONDS = 7 * 24 * 3600
# A commit whose rename is not confirmed this long after it is looked at by a worker (the
# writer died or stalled: see due_commits), and again as often while its writer may still
# rename late: while a temp file of it is left, for up to LATE_RENAME_SECONDS.
CHECK_AFTER_SECONDS = 30.0
LATE_RENAME_SECONDS = 3600.0
# Heads this process committed and saw confirmed, kept for its next writes (see known):
# about half a kilobyte each, the least recently written dropped first.
KNOWN_HEADS = 10_000

# KEYS: head, unconfirmed renames, lock (the head when not fenced by a lease), then the
#       receipts to record, then the keys the commit clears
# ARGV: lock token, expected version, new fingerprint, base fingerprint, bytes,
#       receipt ttl, journal ttl (ms), lease (ms), now, whether the commit takes the lease,
#       number of receipts, receipt values
# A commit that takes the lease (a first commit, see FileJournal.commit) finds the lock
# free, or does nothing (-4); once its checks pass it takes the lease itself. A commit
# whose new fingerprint (a temp file's, never seen before) is the head already ran once:
# its reply was lost and the client sent it again; it answers as it did.
_COMMIT = (
    COUNTS_LUA
    + """
if redis.call('HGET', KEYS[1], 'fp') == ARGV[3] then
  return tonumber(redis.call('HGET', KEYS[1], 'v'))
end
local takes = ARGV[10] == '1'
if takes then
  if redis.call('EXISTS', KEYS[3]) == 1 then
    return -4
  end
elseif ARGV[1] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return -1
end
local version = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if version ~= tonumber(ARGV[2]) then
  return -2
end
local receipts = tonumber(ARGV[11])
for i = 1, receipts do
  if counts(KEYS[3 + i]) then
    return -3
  end
end
redis.call('HSET', KEYS[1], 'v', version + 1, 'fp', ARGV[3], 'base', ARGV[4], 'data', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[9], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[9] - ARGV[7] / 1000)
redis.call('PEXPIRE', KEYS[2], ARGV[7])
for i = 1, receipts do
  redis.call('SET', KEYS[3 + i], ARGV[11 + i], 'EX', ARGV[6])
end
for i = 4 + receipts, #KEYS do
  redis.call('DEL', KEYS[i])
end
if takes then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[8])
elseif ARGV[1] ~= '' then
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
end
return version + 1
"""
)

# KEYS: head, unconfirmed renames[, lock, its wake list]; ARGV: the fingerprint just
# renamed into place[, lock token, wake ttl (ms)]. Only the head's rename is confirmed:
# a late rename of an older version must stay recognisable as such until the file is
# repaired. With a lease, the writer's last step releases it in the same round trip.
_CONFIRM = (
    RELEASE_LUA
    + """
if redis.call('HGET', KEYS[1], 'fp') == ARGV[1] then
  redis.call('ZREM', KEYS[2], ARGV[1])
end
local released = -1
if #KEYS > 2 then released = release(KEYS[3], KEYS[4], ARGV[2], ARGV[3]) end
return {tonumber(redis.call('HGET', KEYS[1], 'v') or '0'), released}
"""
)


@dataclass(frozen=True)
class Head:
    """The newest committed version of a file, and how to tell that the file on disk lags it."""

    version: int
    fingerprint: str
    base: str  # the file the head was computed from
    data: bytes
    unconfirmed: frozenset[str]  # committed; renamed late, not yet, or its confirmation lost

    def lagging(self, on_disk: str) -> bool:
        """Whether the file with fingerprint ``on_disk`` is behind this head: a late rename
        of a version the head superseded, or the head's base while the head's own rename
        is not confirmed. Once it is, a file that is the base again was put back or
        deleted by hand: an edit, taken as it is."""
        if on_disk == self.fingerprint:
            return False
        if on_disk in self.unconfirmed:
            return True
        return on_disk == self.base and self.fingerprint in self.unconfirmed

    def renamed_unconfirmed(self, on_disk: str) -> bool:
        """Whether the file with fingerprint ``on_disk`` is this head, renamed into place
        with its confirmation lost (Redis away, the writer killed): the file is the proof,
        and until it is confirmed the head's base counts as lagging."""
        return on_disk == self.fingerprint and on_disk in self.unconfirmed


@dataclass(frozen=True)
class Confirmed:
    """A head a writer committed and saw renamed into place: while the file on disk is still
    that rename and the journal still at that version, the file's next write can plan from
    the disk alone and take the lease with its commit (a round trip less)."""

    version: int
    fingerprint: str


def decode_head(fields: Any, unconfirmed: Sequence[bytes]) -> Head | None:
    """A head from its hash (a dict, or the flat list a script returns) and its renames."""
    if isinstance(fields, list):
        fields = dict(zip(fields[0::2], fields[1::2], strict=True))
    if not fields:
        return None
    return Head(
        version=int(fields[b"v"]),
        fingerprint=fields[b"fp"].decode(),
        base=fields[b"base"].decode(),
        data=fields[b"data"],
        unconfirmed=frozenset(fp.decode() for fp in unconfirmed),
    )


class FileJournal:
    """The head version of each memory file in Redis, committed only by the lease holder.

    Commits and confirmations go out with the other commands of their loop turn
    (``commands``): a worker's writes to different files share their round trips.
    """

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        *,
        ttl_seconds: int = JOURNAL_TTL_SECONDS,
        commands: CommandBatcher | None = None,
    ) -> None:
        self._redis = redis
        self._commands = commands or CommandBatcher(redis)
        self._keys = keys
        self._ttl_ms = ttl_seconds * 1000
        self._commit = redis.register_script(_COMMIT)
        self._known: OrderedDict[str, Confirmed] = OrderedDict()  # see known
        self._confirm = redis.register_script(_CONFIRM)

    def keys_of(self, target: Target, user_id: str, agent_id: str) -> tuple[str, str]:
        """The head's key and its unconfirmed renames' key, for reads batched elsewhere."""
        head = self._keys.journal(target, user_id, agent_id)
        return head, f"{head}:unconfirmed"

    async def head(self, target: Target, user_id: str, agent_id: str) -> Head | None:
        return (await self.heads(user_id, agent_id, (target,)))[target]

    async def heads(
        self, user_id: str, agent_id: str, targets: Sequence[Target]
    ) -> dict[Target, Head | None]:
        """The heads of several files of one (user, agent), in one round trip."""
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for target in targets:
                    head_key, unconfirmed_key = self.keys_of(target, user_id, agent_id)
                    pipe.hgetall(head_key)
                    pipe.zrange(unconfirmed_key, 0, -1)
                found = await pipe.execute()
        except RedisError as exc:
            raise LockUnavailableError(f"cannot read the file journal: {exc}") from exc
        return {
            target: decode_head(found[2 * n], found[2 * n + 1]) for n, target in enumerate(targets)
        }

    async def commit(
        self,
        target: Target,
        user_id: str,
        agent_id: str,
        *,
        fence: Fence | None,
        expected: int,
        written: str,
        base: str,
        data: bytes,
        receipts: Sequence[tuple[str, str]] = (),
        clears: Sequence[str] = (),
        takes: bool = False,
    ) -> int:
        """Make ``data`` the head (version ``expected + 1``) unless the writer was overtaken.

        ``receipts`` (key, value) are recorded and ``clears`` deleted in the same step.
        Raises :class:`LockLostError` when the lease is gone, another writer committed
        since this one read, or another copy of one of the events ended since its receipt
        was read (a refusal is recorded after the lock: the outcome recorded first
        stands, and the event's next delivery answers with it); nothing is recorded then.

        ``takes``: the writer holds no lease yet, and planned from what it knew without
        reading (:meth:`known`); the commit takes ``fence``'s lease as it records. It
        returns 0 instead, committing nothing, when the lock is held, the head is not at
        ``expected`` or a receipt of one of the writes counts already: the writer then
        takes the lock and reads, as any other (the mark in the due set sent beside it
        is forgotten when looked at: no commit has its fingerprint).
        """
        head_key, unconfirmed_key = self.keys_of(target, user_id, agent_id)
        mark = {_mark(target, user_id, agent_id, written): time.time() + CHECK_AFTER_SECONDS}
        try:
            version = await self._commands.script(
                self._commit,
                keys=[
                    head_key,
                    unconfirmed_key,
                    fence.lock_key if fence else head_key,
                    *(key for key, _ in receipts),
                    *clears,
                ],
                args=[
                    fence.token if fence else "",
                    expected,
                    written,
                    base,
                    data,
                    RECEIPT_TTL_SECONDS,
                    self._ttl_ms,
                    fence.lease_ms if fence else 0,
                    time.time(),
                    int(takes),
                    len(receipts),
                    *(value for _, value in receipts),
                ],
                # looked at later unless its rename is confirmed (a failure here fails nothing)
                beside=lambda pipe: pipe.zadd(self._keys.journal_due, mark),
            )
        except RedisError as exc:
            raise LockUnavailableError(f"cannot commit to the file journal: {exc}") from exc
        if takes and version in (-2, -3, -4):
            return 0
        if version == -1:
            raise LockLostError("the lease expired before the write was committed")
        if version == -2:
            raise LockLostError("another writer committed this file first")
        if version == -3:
            raise LockLostError("another copy of this write ended first")
        return int(version)

    def known(self, target: Target, user_id: str, agent_id: str) -> Confirmed | None:
        """The head this process last committed to the file and saw confirmed, taken out
        of what it keeps: the writer puts it back (:meth:`remember`) once its own commit
        is confirmed, so a write that fails leaves nothing stale behind."""
        return self._known.pop(self.keys_of(target, user_id, agent_id)[0], None)

    def remember(self, target: Target, user_id: str, agent_id: str, head: Confirmed) -> None:
        """``head`` was committed by this process and its rename confirmed (see :meth:`known`)."""
        key = self.keys_of(target, user_id, agent_id)[0]
        self._known[key] = head
        self._known.move_to_end(key)
        if len(self._known) > KNOWN_HEADS:
            self._known.popitem(last=False)

    async def confirm(
        self,
        target: Target,
        user_id: str,
        agent_id: str,
        renamed: str,
        *,
        release: Fence | None = None,
    ) -> int:
        """The rename of ``renamed`` happened; returns the head version now.

        ``release``: the writer's lease, released in the same step (a lease that expired
        meanwhile is logged, as the lock itself would).
        """
        head_key, unconfirmed_key = self.keys_of(target, user_id, agent_id)
        keys, args = [head_key, unconfirmed_key], [renamed]
        if release is not None:
            keys += [release.lock_key, release.wake_key]
            args += [release.token, str(release.lease_ms)]
        mark = _mark(target, user_id, agent_id, renamed)
        try:
            version, released = await self._commands.script(
                self._confirm,
                keys=keys,
                args=args,
                # its writer is done with it: a late rename it made, it repairs itself
                beside=lambda pipe: pipe.zrem(self._keys.journal_due, mark),
            )
        except RedisError as exc:
            raise LockUnavailableError(f"cannot confirm to the file journal: {exc}") from exc
        if released == 0:
            log.warning("lock_expired_before_release", lock=keys[2])
        return int(version)

    async def due_commits(self, limit: int) -> list[DueCommit]:
        """Up to ``limit`` commits whose renames were not confirmed in time, each claimed
        for the next :data:`CHECK_AFTER_SECONDS` (another worker skips it meanwhile)."""
        now = time.time()
        found = await self._redis.zrangebyscore(self._keys.journal_due, "-inf", now, 0, limit)
        if found:
            claim = dict.fromkeys(found, now + CHECK_AFTER_SECONDS)
            await self._redis.zadd(self._keys.journal_due, claim, xx=True)
        return [DueCommit.read(member) for member in found]

    async def committed_at(self, due: DueCommit) -> float | None:
        """When ``due`` was committed; ``None`` once its rename is confirmed (or long gone)."""
        assert due.file is not None and due.fingerprint is not None
        _, unconfirmed_key = self.keys_of(*due.file)
        at = await self._redis.zscore(unconfirmed_key, due.fingerprint)
        return None if at is None else float(at)

    async def forget(self, due: DueCommit) -> None:
        await self._redis.zrem(self._keys.journal_due, due.member)


@dataclass(frozen=True)
class DueCommit:
    """A commit whose rename was not confirmed in time: its entry in the due set, its file
    and the fingerprint it committed (``None`` both when the entry cannot be read)."""

    member: bytes
    file: tuple[Target, str, str] | None
    fingerprint: str | None

    @classmethod
    def read(cls, member: bytes) -> DueCommit:
        try:
            target, user_id, agent_id, fingerprint = json.loads(member)
        except (ValueError, TypeError, RecursionError):  # not JSON, not four items
            return cls(member, None, None)
        if target not in ("user", "memory"):
            return cls(member, None, None)
        return cls(member, (target, str(user_id), str(agent_id)), str(fingerprint))


def _mark(target: Target, user_id: str, agent_id: str, fingerprint: str) -> str:
    return json.dumps([target, user_id, agent_id, fingerprint])
