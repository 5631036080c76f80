"""Gateway tokens: who a bearer token is, with only the tokens' hashes ever stored.

A token is ``msv_<id>_<secret>``: the id names its record (``memsvc token list``
and ``revoke`` use it), the secret is 32 random bytes. A record keeps the user,
whether the token is an admin's, and the SHA-256 of the whole token; the token
itself is printed once, at ``memsvc token add``, and never kept. A fast hash is
enough for a secret of 256 random bits (nothing to guess, so nothing to slow
down), and the digests are compared in constant time.

Records live in Redis under the service's prefix when there is a Redis (every
gateway of the deployment sees them), else in ``gateway_tokens.json`` in the
data dir (mode 0600, replaced atomically, changes serialised by a file lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import structlog
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memsvc.errors import NotFoundError, UnsafeFileError
from memsvc.ids import validate_id
from memsvc.keys import Keys
from memsvc.paths import Anchored, DataLayout
from memsvc.redisbatch import CommandBatcher
from memsvc.redisconn import Outage, text
from memsvc.store.atomicfile import open_lock_file, read_file_now, write_atomic_now

log = structlog.get_logger(__name__)

_RECORD_ID = re.compile(r"[0-9a-f]{12}")
_TOKEN = re.compile(rf"msv_({_RECORD_ID.pattern})_[A-Za-z0-9_\-]{{43}}")
_UNKNOWN = hashlib.sha256(b"no such token").hexdigest()  # compared against when no record
PROBE_ID = "readiness-probe"  # no record has it: ids are twelve hex digits
# a token channel quiet for a third of the keep time (at least WATCH_PING_MIN_SECONDS) is
# pinged; one that answers none of WATCH_PINGS pings in a row is subscribed anew
WATCH_PINGS = 2
WATCH_PING_MIN_SECONDS = 0.5


@dataclass(frozen=True)
class Principal:
    """Whom a request acts for: a user, and whether the caller may name other users."""

    user_id: str
    admin: bool = False
    token_id: str | None = None  # None in no-auth mode


@dataclass(frozen=True)
class TokenRecord:
    """What is kept of a token: never the token itself, only its digest."""

    id: str
    user_id: str
    admin: bool
    created_at: float
    sha256: str

    def public(self) -> dict[str, object]:
        """The record as ``list`` shows it: the digest is of no use to anyone."""
        return {k: v for k, v in asdict(self).items() if k != "sha256"}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_id(token: str) -> str | None:
    """The id part of a well-formed token (not secret: ``token list`` shows it)."""
    match = _TOKEN.fullmatch(token)
    return match.group(1) if match else None


class TokenStore(Protocol):
    """Where token records live (Redis, or a file in the data dir)."""

    async def save(self, record: TokenRecord) -> None: ...

    async def find(self, token_id: str, *, within: float | None = None) -> TokenRecord | None:
        """The record of ``token_id``; a lookup that must ask a server gives up after
        ``within`` seconds (raising :class:`redis.exceptions.TimeoutError`)."""
        ...

    async def records(self) -> list[TokenRecord]: ...

    async def delete(self, token_id: str) -> bool: ...

    @property
    def watching(self) -> bool | None:
        """Whether records read are kept, subscribed to revocations; ``None`` for a store
        that keeps none."""
        ...


class Tokens:
    """Issuing, checking and revoking tokens over one :class:`TokenStore`."""

    def __init__(self, store: TokenStore) -> None:
        self._store = store

    async def add(self, user_id: str, *, admin: bool = False) -> tuple[TokenRecord, str]:
        """A new token for ``user_id``: its record, and the token (shown once, kept nowhere)."""
        record_id = secrets.token_hex(6)
        token = f"msv_{record_id}_{secrets.token_urlsafe(32)}"
        record = TokenRecord(
            record_id, validate_id("user_id", user_id), admin, time.time(), _digest(token)
        )
        await self._store.save(record)
        return record, token

    async def list(self) -> list[TokenRecord]:
        return sorted(await self._store.records(), key=lambda r: r.created_at)

    @property
    def watching(self) -> bool | None:
        """Whether records read are kept, subscribed to revocations; ``None`` for a store
        that keeps none (the token file is read afresh once it changes)."""
        return self._store.watching

    async def probe(self) -> None:
        """Look up a token id no token has, as a request's lookup does: raises what the
        store's reads would raise (a Redis ACL refusing them), so readiness can tell."""
        await self._store.find(PROBE_ID)

    async def revoke(self, record_id: str) -> None:
        """Raises :class:`NotFoundError` for an id that names no token (one that could not
        is not looked up: it may hold what a store cannot take, bytes that are no UTF-8)."""
        if not _RECORD_ID.fullmatch(record_id) or not await self._store.delete(record_id):
            raise NotFoundError(f"no token with id {record_id!r}")

    async def authenticate(self, token: str, *, within: float | None = None) -> Principal | None:
        """The principal of ``token``; ``None`` when it is malformed, unknown or revoked.
        ``within``: how long a lookup may wait on Redis (a call's deadline)."""
        record_id = token_id(token)
        record = await self._store.find(record_id, within=within) if record_id is not None else None
        expected = record.sha256 if record is not None else _UNKNOWN
        if not hmac.compare_digest(expected, _digest(token)) or record is None:
            return None
        return Principal(record.user_id, admin=record.admin, token_id=record.id)


_SHA256 = re.compile(r"[0-9a-f]{64}")


@functools.lru_cache(maxsize=1024)
def _decode(raw: bytes | str) -> TokenRecord:
    """A stored record, parsed once per distinct value: every request reads its token's.
    Raises ``ValueError`` for one that is no record (hand-edited, cut short)."""
    try:
        fields = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not a token record: {exc}") from None
    return _record(fields)


def _record(fields: Any) -> TokenRecord:
    """The record ``fields`` (parsed JSON) make; ``ValueError`` when they make none."""
    try:
        record = TokenRecord(**fields)
    except TypeError as exc:  # no JSON object of its fields
        raise ValueError(f"not a token record: {exc}") from None
    fits = (
        isinstance(record.id, str)
        and isinstance(record.user_id, str)
        and isinstance(record.admin, bool)
        and isinstance(record.created_at, int | float)
        and not isinstance(record.created_at, bool)
        and isinstance(record.sha256, str)
        and _SHA256.fullmatch(record.sha256) is not None
    )
    if not fits:
        raise ValueError("not a token record: a field of the wrong type")
    return record


def _readable(token_id: str, raw: bytes | str) -> TokenRecord | None:
    """``raw``'s record; ``None`` (logged) for one that cannot be read: its token is
    refused, and the others are not held up by it."""
    try:
        return _decode(raw)
    except ValueError as exc:
        log.error("token_record_unreadable", token_id=token_id, error=str(exc))
        return None


class RedisTokenStore:
    """Token records in one Redis hash (``{p}:gateway:tokens``): id -> record.

    Requests arriving together look their tokens up in one round trip. While
    :meth:`watch` runs, a record found is also kept for up to ``keep_seconds`` from
    its lookup, so an agent's calls do not wait on that round trip each time. A
    revocation is announced on ``{p}:gateway:tokens:changed`` with the record's
    deletion and drops what every watching gateway keeps: a revoked token is refused
    as soon as the message is read (by the process that revoked it, at once). Each
    (re)subscription drops it too, since messages may have been missed before it. A
    message missed otherwise (the channel's connection dead, not yet found out by a
    ping) holds a revocation up for ``keep_seconds`` at most.
    """

    def __init__(self, redis: Redis, keys: Keys, *, keep_seconds: float = 0.0) -> None:
        self._redis = redis
        self._commands = CommandBatcher(redis)
        self._key = keys.tokens
        self._channel = keys.tokens_changed
        self._keep_seconds = keep_seconds
        self._kept: dict[str, tuple[float, TokenRecord]] = {}  # id -> (kept until, record)
        self._watching = False
        # bumped whenever what is kept is dropped: a lookup that began before may have read
        # a record revoked since, and is neither kept nor joined
        self._generation = 0
        # the lookups under way, by (token id, generation): one per token at a time, so that
        # callers giving up on a stalled Redis do not hold a connection each until it answers
        self._lookups: dict[tuple[str, int], asyncio.Future[TokenRecord | None]] = {}

    @property
    def watching(self) -> bool:
        """Whether records read are kept: subscribed to their changes now."""
        return self._watching

    async def save(self, record: TokenRecord) -> None:
        await self._redis.hset(self._key, record.id, json.dumps(asdict(record)))  # type: ignore[misc]

    async def find(self, token_id: str, *, within: float | None = None) -> TokenRecord | None:
        kept = self._kept.get(token_id)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        key = (token_id, self._generation)
        lookup = self._lookups.get(key)
        if lookup is None:
            lookup = asyncio.ensure_future(self._look_up(token_id))
            self._lookups[key] = lookup
            lookup.add_done_callback(functools.partial(self._looked_up, key))
        try:  # a Redis that stalls holds a lookup up to its socket timeout, longer maybe
            async with asyncio.timeout(within) as limit:
                return await asyncio.shield(lookup)
        except TimeoutError:
            if not limit.expired():
                raise
            raise RedisTimeoutError(f"no token record from Redis within {within} s") from None

    async def _look_up(self, token_id: str) -> TokenRecord | None:
        asked, generation = time.monotonic(), self._generation
        (raw,) = await self._commands.execute(lambda pipe: pipe.hget(self._key, token_id))
        record = None if raw is None else _readable(token_id, raw)
        if record is not None and self._watching and generation == self._generation:
            self._kept[token_id] = (asked + self._keep_seconds, record)
        return record

    def _looked_up(self, key: tuple[str, int], lookup: asyncio.Future[TokenRecord | None]) -> None:
        self._lookups.pop(key, None)
        if not lookup.cancelled():
            lookup.exception()  # read: every caller may have given up on it

    async def records(self) -> list[TokenRecord]:
        raws = await self._redis.hgetall(self._key)  # type: ignore[misc]
        found = (_readable(text(key, "replace"), raw) for key, raw in raws.items())
        return [record for record in found if record is not None]

    async def delete(self, token_id: str) -> bool:
        deleted = bool(await self._redis.hdel(self._key, token_id))  # type: ignore[misc]
        self._drop(watching=self._watching)  # this process: at once, not when the message comes
        try:
            await self._redis.publish(self._channel, token_id)
        except RedisError as exc:  # revoked all the same: other gateways keep it a while longer
            log.warning(
                "gateway_token_revocation_unannounced",
                token_id=token_id,
                error=str(exc),
                kept_at_most_seconds=self._keep_seconds,
            )
        return deleted

    async def watch(self) -> None:
        """Keep the records found while subscribed to their changes; runs until cancelled.

        A quiet channel is pinged: one that answers none of ``WATCH_PINGS`` pings in a row
        is given up and subscribed anew, so a dead connection is found out within about
        ``keep_seconds`` (a stall of the event loop alone cannot miss them all).
        """
        if self._keep_seconds <= 0:
            return
        outage = Outage("gateway_tokens_unwatched", cap=5.0)
        while True:
            try:
                await self._listen(outage)
            except Exception as exc:  # Redis down, or refusing (an ACL): nothing kept meanwhile
                if not isinstance(exc, RedisError | OSError):
                    log.error("gateway_tokens_watch_failed", exc_info=exc)
                await outage.wait(exc)

    async def _listen(self, outage: Outage) -> None:
        """One subscription, until its connection fails; what is kept is dropped with it."""
        quiet = max(self._keep_seconds / (WATCH_PINGS + 1), WATCH_PING_MIN_SECONDS)
        pubsub = self._redis.pubsub()
        try:
            await pubsub.subscribe(self._channel)
            unanswered = 0
            while True:
                message = await pubsub.get_message(timeout=quiet)
                if message is None and unanswered == WATCH_PINGS:
                    raise RedisConnectionError("the token channel answered no ping")
                if message is None:
                    await pubsub.ping()
                    unanswered += 1
                    continue
                unanswered = 0
                if message["type"] != "subscribe":  # a ping answered or a change heard
                    outage.over()
                if message["type"] != "pong":
                    # the subscription's confirmation (also after redis-py reconnects on its
                    # own, when messages may have been missed) or a change: drop what is kept
                    self._drop(watching=True)
        finally:
            self._drop(watching=False)
            with contextlib.suppress(Exception):  # a connection already broken
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _drop(self, *, watching: bool) -> None:
        self._kept.clear()
        self._generation += 1
        self._watching = watching


class FileTokenStore:
    """Token records in ``gateway_tokens.json`` of the data dir, for a deployment without Redis.

    Reads are served from memory while the file is unchanged (one ``stat`` a
    request), so a token revoked by ``memsvc token revoke`` in another process is
    refused from the next request on.
    """

    def __init__(self, layout: DataLayout) -> None:
        path = layout.gateway_tokens()
        self._path = path
        self._file = layout.anchored(path)
        self._lock_file: Anchored = self._file.sibling(f"{path.name}.lock")
        self._cached: tuple[tuple[int, int, int] | None, dict[str, TokenRecord]] = (None, {})

    @property
    def watching(self) -> None:
        """Keeps no records: the file is read afresh once it changes."""
        return None

    def _read_now(self) -> dict[str, TokenRecord]:
        raw = read_file_now(self._file).data
        try:
            stored = json.loads(raw or b"{}")
            if not isinstance(stored, dict):
                raise ValueError("not a JSON object")
            return {k: _record(v) for k, v in stored.items()}
        except (ValueError, RecursionError) as exc:  # hand-edited, cut short
            raise UnsafeFileError(
                f"'{self._file.relative}' in the data dir is not a token store ({exc}); "
                "fix or remove it (its tokens are refused meanwhile)"
            ) from None

    async def _load(self) -> dict[str, TokenRecord]:
        try:
            info = os.stat(self._path)
        except FileNotFoundError:
            return {}
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)  # a replace makes a new inode
        if self._cached[0] != stamp:
            self._cached = (stamp, await asyncio.to_thread(self._read_now))
        return self._cached[1]

    async def _change(self, record_id: str, record: TokenRecord | None) -> bool:
        """Set (or with ``None`` remove) one record; whether it was there before."""

        def change() -> bool:
            fd = open_lock_file(self._lock_file)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # two commands at once: neither change is lost
                records = self._read_now()
                existed = records.pop(record_id, None) is not None
                if record is not None:
                    records[record_id] = record
                data = {k: asdict(v) for k, v in records.items()}
                write_atomic_now(self._file, json.dumps(data, indent=2, sort_keys=True).encode())
            finally:
                os.close(fd)  # closing the descriptor releases the lock
            return existed

        return await asyncio.to_thread(change)

    async def save(self, record: TokenRecord) -> None:
        await self._change(record.id, record)

    async def find(self, token_id: str, *, within: float | None = None) -> TokenRecord | None:
        return (await self._load()).get(token_id)  # a local file: nothing to give up on

    async def records(self) -> list[TokenRecord]:
        return list((await self._load()).values())

    async def delete(self, token_id: str) -> bool:
        return await self._change(token_id, None)
