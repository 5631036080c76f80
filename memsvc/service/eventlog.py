"""The event log: every event with its outcome, in a Redis Stream, for debugging and replay.

One entry per processed event (and per background job run): the event as it was
received, what came of it (``ok``, ``refused``, ``error``, ``invalid``, ``dead``,
``queued``), the reply or error, the timings and the worker. Retention is bounded by count
(``MAXLEN ~`` on every append) and by age (``MINID ~`` trims by the workers).
A few fields are duplicated at the top level so that tailing can filter by user
or type without decoding every record.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import math
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from memsvc import redisconn
from memsvc.errors import InvalidInputError
from memsvc.keys import Keys
from memsvc.settings import default

# Room for any memory write the tool accepts (64 KiB of arguments) with its result,
# so that every write can be replayed from its record.
MAX_RECORD_CHARS = 256 * 1024
# A user's page cursor that stands for another user's record: a token, kept a day, at most
# this many per user
PAGE_TOKEN = re.compile(r"[0-9a-f]{32}")
PAGE_TOKEN_SECONDS = 24 * 3600
PAGE_TOKENS = 100
# A new page token for a user: once their hash holds PAGE_TOKENS it becomes the previous
# one (the one before is dropped), so a token outlives at least PAGE_TOKENS newer ones.
# KEYS: the user's tokens, the previous ones; ARGV: token, cursor, PAGE_TOKENS, ttl (s)
_KEEP_TOKEN = """
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then redis.call('RENAME', KEYS[1], KEYS[2]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
"""
# The events that change files: the model's ``memory`` calls and a person's edits (gateway)
WRITES = ("memory_write", "entry_edit")


def stream_position(stream_id: str, *, last: bool = False) -> tuple[int, int]:
    """A log id's place, to compare ids as numbers: (milliseconds, sequence). An id
    without its sequence stands for its millisecond's first entry (``last``: its last)."""
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq) if seq else (2**64 if last else 0)


def text_summary(text: str, key: bytes) -> dict[str, Any]:
    """What the log keeps of a text it does not store: enough to tell two apart. Keyed
    (HMAC-SHA256 with the log's secret, :meth:`EventLog.digest_key`): a plain digest of a
    short text (a PIN, "yes") is found again by hashing candidates, by anyone who reads
    the log without its key."""
    digest = hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return {"chars": len(text), "hmac_sha256": digest[:32]}


@dataclass(frozen=True)
class LogRecord:
    """What the log keeps of one event or job try: who, what, the outcome, and the event itself to
    replay.
    """

    outcome: str  # ok | refused | expired | error | invalid | dead | queued
    type: str
    event_id: str
    user_id: str = ""
    agent_id: str = ""
    thread_id: str = ""
    event: dict[str, Any] | None = None  # the envelope, as received
    detail: dict[str, Any] = field(default_factory=dict)  # reply, error, timings, worker
    at: float = field(default_factory=time.time)

    def fields(self) -> dict[str, str]:
        return {
            "outcome": self.outcome,
            "type": self.type,
            "event_id": self.event_id,
            "user": self.user_id,
            "agent": self.agent_id,
            "thread": self.thread_id,
            "at": f"{self.at:.6f}",
            "body": self._body(),
        }

    def _body(self) -> str:
        """The event and detail as JSON of at most ``MAX_RECORD_CHARS``, always whole.

        Too long: the detail keeps only its small fields; still too long: the
        payload is replaced by its size (a write that large was refused anyway).
        """
        for event, detail in self._shrinking():
            body = json.dumps({"event": event, "detail": detail}, ensure_ascii=False)
            if len(body) <= MAX_RECORD_CHARS:
                return body
        return json.dumps({"event": None, "detail": {"truncated": True}})

    def _shrinking(self) -> Iterator[tuple[dict[str, Any] | None, dict[str, Any]]]:
        yield self.event, self.detail
        small = {"truncated": True, **_small(self.detail)}
        yield self.event, small
        if self.event is not None:
            payload = json.dumps(self.event.get("payload"), ensure_ascii=False)
            yield {**self.event, "payload": {"truncated": True, "chars": len(payload)}}, small


def _small(detail: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in detail.items()
        if not isinstance(v, dict | list | str) or len(json.dumps(v, ensure_ascii=False)) < 1024
    }


@dataclass(frozen=True)
class LogEntry:
    stream_id: str
    outcome: str
    type: str
    event_id: str
    user_id: str
    agent_id: str
    thread_id: str
    at: float
    event: dict[str, Any] | None
    detail: dict[str, Any]


def _entry(stream_id: bytes | str, raw: dict[bytes, bytes]) -> LogEntry:
    """One record as a :class:`LogEntry`, whatever the stream holds: a record not in the
    shape memsvc writes (another release's, one added by hand, bytes damaged) is an entry
    with no event and ``detail["unreadable"]`` (the start of its body), dated by its
    stream id, so that one bad record never stops a reader of the whole log."""
    text = True
    try:
        f = {k.decode(): v.decode() for k, v in raw.items()}
    except UnicodeDecodeError:  # shown as far as it reads
        text = False
        f = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in raw.items()}
    body: Any = None
    with contextlib.suppress(ValueError, RecursionError):
        body = json.loads(f.get("body", "{}"))
    at: float | None = None
    with contextlib.suppress(ValueError):
        at = float(f.get("at", "0"))
    readable = (
        isinstance(body, dict)
        and isinstance(body.get("event"), dict | None)
        and isinstance(body.get("detail", {}), dict)
        and at is not None
        and math.isfinite(at)
        and text
    )
    stream_id = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    if not readable:
        body = {"event": None, "detail": {"unreadable": f.get("body", "")[:200]}}
        at = stream_position(stream_id)[0] / 1000  # when it was added, which Redis says
    return LogEntry(
        stream_id=stream_id,
        outcome=f.get("outcome", ""),
        type=f.get("type", ""),
        event_id=f.get("event_id", ""),
        user_id=f.get("user", ""),
        agent_id=f.get("agent", ""),
        thread_id=f.get("thread", ""),
        at=at if at is not None else 0.0,
        event=body.get("event"),
        detail=body.get("detail", {}),
    )


class EventLog:
    """Every event with its outcome, in a capped Redis Stream: what ``memsvc log`` and ``replay``
    read.
    """

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        *,
        max_entries: int = default("log_max_entries"),
        retention_seconds: float = default("log_retention_seconds"),
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._key = keys.log
        self._keep_token = redis.register_script(_KEEP_TOKEN)
        self._max = max_entries
        self._retention = retention_seconds

    async def digest_key(self) -> bytes:
        """The secret of :func:`text_summary`, the same for every worker on this Redis: made
        by the first to ask (``SET NX``), asked again every heartbeat (a Redis restarted
        empty makes another, which every worker then takes). Read first: a Redis out of
        memory refuses the ``SET`` even of a key it holds."""
        key = self._keys.log_digest_key
        kept = await self._redis.get(key)
        if kept is None:
            made = secrets.token_hex(32)
            kept = await self._redis.set(key, made, nx=True, get=True) or made
        return redisconn.text(kept).encode()

    def entry(self, record: LogRecord) -> tuple[str, int, list[str]]:
        """The stream, its cap and the record's fields flattened: for a script that appends
        the record together with other writes (what ``append`` does alone)."""
        return self._key, self._max, [item for field in record.fields().items() for item in field]

    async def append(self, record: LogRecord) -> None:
        await self._redis.xadd(self._key, record.fields(), maxlen=self._max, approximate=True)  # type: ignore[arg-type]

    async def trim_by_age(self) -> None:
        oldest_ms = int((time.time() - self._retention) * 1000)
        await self._redis.xtrim(self._key, minid=f"{oldest_ms}-0", approximate=True)

    async def entries(
        self, *, start: str = "-", end: str = "+", batch: int = 500
    ) -> AsyncIterator[LogEntry]:
        """Oldest first, from ``start`` to ``end`` (stream ids or ``-`` / ``+``)."""
        cursor = start
        while True:
            rows = await self._redis.xrange(self._key, min=cursor, max=end, count=batch)
            for stream_id, raw in rows:
                yield _entry(stream_id, raw)
            if len(rows) < batch:
                return
            last = rows[-1][0].decode()
            cursor = "(" + last

    async def trimmed(self) -> bool:
        """Whether the log has dropped older records (by count or by age)."""
        try:
            info = await self._redis.xinfo_stream(self._key)
        except ResponseError:  # no log yet
            return False
        return int(info.get("entries-added", info["length"])) > int(info["length"])

    async def newest(self) -> str:
        """The id of the newest entry (``0-0`` while the log is empty): where a :meth:`tail`
        up to it hands over to a :meth:`follow` after it, losing nothing appended between."""
        rows = await self._redis.xrevrange(self._key, count=1)
        return redisconn.text(rows[0][0]) if rows else "0-0"

    async def first_runs(self, event_ids: set[str], before: str, *, batch: int = 500) -> set[str]:
        """Which of ``event_ids`` have a record of their first run (``ok``, not a ``repeat``
        copy) older than the id ``before``: read back from there until all are found, each
        record's id and outcome looked at before its body is parsed."""
        found: set[str] = set()
        cursor = "(" + before
        while event_ids - found:
            rows = await self._redis.xrevrange(self._key, max=cursor, min="-", count=batch)
            for stream_id, raw in rows:
                event_id = raw.get(b"event_id", b"").decode()
                first_run = (
                    event_id in event_ids
                    and raw.get(b"outcome") == b"ok"
                    and not _entry(stream_id, raw).detail.get("repeat")  # parsed only then
                )
                if first_run:
                    found.add(event_id)
            if len(rows) < batch:
                break
            cursor = "(" + redisconn.text(rows[-1][0])
        return found

    async def tail(
        self,
        count: int,
        where: Callable[[LogEntry], bool] | None = None,
        *,
        until: str = "+",
        batch: int = 500,
    ) -> list[LogEntry]:
        """The newest ``count`` entries ``where`` accepts up to the id ``until``, oldest first.

        Reads back from the end a page at a time, so the newest entries of a long
        log come at the cost of what lies after them, not of the whole log.
        """
        found: list[LogEntry] = []
        if count > 0:
            async for entry in self._backwards(until, batch):
                if where is None or where(entry):
                    found.append(entry)
                    if len(found) == count:
                        break
        return found[::-1]

    async def page(
        self,
        where: Callable[[LogEntry], bool],
        *,
        before: str = "+",
        limit: int,
        scan: int,
    ) -> tuple[list[LogEntry], str | None]:
        """Up to ``limit`` entries ``where`` accepts, newest first, older than the stream id
        ``before`` (``+``: from the end), looking at ``scan`` entries at most.

        Returns them with the cursor the next page starts before, ``None`` once the log's
        start is reached: one user's page of a long shared log costs a bounded read even
        when few of its entries are theirs.
        """
        found: list[LogEntry] = []
        if before != "+" and not any(int(part) for part in before.split("-")):
            return found, None  # nothing is older than 0-0 (and Redis refuses "(0-0")
        scanned = 0
        start = before if before == "+" else f"({before}"
        async for entry in self._backwards(start, min(500, scan)):
            scanned += 1
            if where(entry):
                found.append(entry)
            if len(found) == limit or scanned == scan:
                return found, entry.stream_id
        return found, None

    async def user_page(
        self,
        user_id: str,
        *,
        event_type: str | None = None,
        before: str = "+",
        limit: int,
        scan: int,
    ) -> tuple[list[LogEntry], str | None]:
        """:meth:`page` of ``user_id``'s records (of ``event_type``), whose cursors name no
        record of another user.

        A page cut short by ``scan`` stops at a record that may be another user's, and
        its id says when that user's event happened: such a cursor is a new random
        token (:data:`PAGE_TOKEN`) each time, which the user's page hash maps to it.
        ``before`` is ``+``, such a token, or the id of one of the user's own records
        (which the pages show, and which the log still holds); any other id would let a
        user bisect the log by which of their own records a page still reaches. The
        time a page takes still grows with the records of others it scans (see the
        README).
        """
        pages = self._keys.log_pages(user_id)
        previous = f"{pages}:previous"  # the generation before (see _KEEP_TOKEN)
        if PAGE_TOKEN.fullmatch(before):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hget(pages, before)
                pipe.hget(previous, before)
                found = await pipe.execute()
            kept = found[0] or found[1]
            if kept is None:
                raise InvalidInputError(
                    "this page cursor has expired or is not yours: start again from '+'"
                )
            before = kept.decode()
        elif before != "+" and not await self._is_own(user_id, before):
            raise InvalidInputError(
                "before must be '+', the id of one of your records (one the log still "
                "holds), or a page's 'next'"
            )
        entries, cursor = await self.page(
            lambda entry: (
                entry.user_id == user_id and (event_type is None or entry.type == event_type)
            ),
            before=before,
            limit=limit,
            scan=scan,
        )
        if cursor is not None and not (entries and entries[-1].stream_id == cursor):
            token = secrets.token_hex(16)
            await self._keep_token(
                keys=[pages, previous],
                args=[token, cursor, PAGE_TOKENS, PAGE_TOKEN_SECONDS],
            )
            cursor = token
        return entries, cursor

    async def _is_own(self, user_id: str, stream_id: str) -> bool:
        rows = await self._redis.xrange(self._key, min=stream_id, max=stream_id, count=1)
        return bool(rows) and _entry(*rows[0]).user_id == user_id

    async def _backwards(self, start: str, batch: int) -> AsyncIterator[LogEntry]:
        """Entries from ``start`` (``+``, an id, or an exclusive ``(id``) back to the log's
        start."""
        cursor = start
        while True:
            rows = await self._redis.xrevrange(self._key, max=cursor, min="-", count=batch)
            for stream_id, raw in rows:
                yield _entry(stream_id, raw)
            if len(rows) < batch:
                return
            cursor = "(" + rows[-1][0].decode()

    async def follow(self, after: str, block_ms: int = 1000) -> AsyncIterator[LogEntry]:
        """Entries appended after the id ``after``, as they come; runs until cancelled."""
        cursor = after
        while True:
            result = await self._redis.xread({self._key: cursor}, count=100, block=block_ms)
            for _, rows in result or []:
                for stream_id, raw in rows:
                    cursor = stream_id.decode()
                    yield _entry(stream_id, raw)
            await asyncio.sleep(0)
