"""The event bus: a Redis Stream in, a list per client process out.

Agents ``XADD`` events to one stream (one round trip); workers read it through
one consumer group, so each event goes to one worker, and a worker that dies
leaves its unacknowledged events pending for another to claim. A reply is
``RPUSH``ed onto the inbox list of the waiting client process, which has one
blocked ``BLMPOP`` for all its calls: replies are pushed, never polled. The
reply, the log record and the ack of an event are written by one script: a Redis out of
memory (or read-only) refuses all of it.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import structlog
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import ResponseError

from memsvc.events import encode
from memsvc.keys import Keys
from memsvc.redisbatch import CommandBatcher
from memsvc.redisconn import lasting_refusal, text
from memsvc.service.eventlog import EventLog, LogRecord

log = structlog.get_logger(__name__)

INBOX_TTL_SECONDS = 60
EVENT_FIELD = "e"

# Resets the idle time of the entries ``consumer`` still owns (XCLAIM ... JUSTID to
# itself, which leaves the delivery count alone) and returns them; an entry another
# consumer has claimed meanwhile is left where it is and is missing from the answer.
_REFRESH_SCRIPT = """
local mine = {}
local claim = {'XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0}
for i = 3, #ARGV do
  local entry = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if #entry > 0 and entry[1][2] == ARGV[2] then
    mine[#mine + 1] = ARGV[i]
    claim[#claim + 1] = ARGV[i]
  end
end
if #mine > 0 then
  claim[#claim + 1] = 'JUSTID'
  redis.call(unpack(claim))
end
return mine
"""


# Notes that worker ``ARGV[1]`` is alive now, in Redis' clock (hosts' clocks may
# disagree), and forgets workers silent for ``ARGV[2]`` ms.
_BEAT_SCRIPT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
return 1
"""
# a worker silent this long is forgotten by the others' beats
FORGET_SILENT_MS = 24 * 3600 * 1000


# Takes one parked record (ARGV[1]) off the dead list and publishes its event (ARGV[3] under
# field ARGV[2]) in one step: nothing is lost between the two, and of two re-drives at once
# only the one that took the record publishes it. Returns the new stream id, or nil.
_REDRIVE_SCRIPT = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
  return false
end
return redis.call('XADD', KEYS[2], '*', ARGV[2], ARGV[3])
"""


# Logs a finished event, parks it if it is dead, acknowledges and deletes it, and
# replies (``KEYS[4]``, if given). The append is the script's first write, where Redis
# checks ``maxmemory`` (and a replica refuses writes): a Redis out of memory refuses the
# script before it has done anything, so the event stays pending for another try rather
# than acknowledged without its record, or dropped on its way to the dead list. (A key
# of another type under memsvc's prefix would fail it midway: not a state Redis gets
# into by itself.)
_FINISH_SCRIPT = """
local append = {'XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*'}
for i = 7, #ARGV do
  append[#append + 1] = ARGV[i]
end
redis.call(unpack(append))
if ARGV[4] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[4])
end
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
redis.call('XDEL', KEYS[2], ARGV[3])
if KEYS[4] then  -- the caller's to read: a key of another type there fails no event
  redis.pcall('RPUSH', KEYS[4], ARGV[5])
  redis.pcall('EXPIRE', KEYS[4], ARGV[6])
end
return 1
"""


@dataclass(frozen=True)
class Readiness:
    """What the stream's readiness check found."""

    workers: int  # workers that read the stream or beat lately
    publish: ResponseError | None  # what an event published now would be refused with
    reads: ResponseError | None  # what the check's own reads were refused with, for good


@dataclass(frozen=True)
class Delivery:
    """One event as a worker received it: its stream id, its raw bytes and how often it was
    delivered.
    """

    stream_id: str
    raw: bytes
    deliveries: int  # 1 on first delivery; more after a worker died holding it


class EventBus:
    """The event stream with its consumer group, the clients' inboxes and the dead-event stream."""

    def __init__(
        self, redis: Redis, keys: Keys, log: EventLog, *, commands: CommandBatcher | None = None
    ) -> None:
        self._redis = redis
        self._commands = commands or CommandBatcher(redis)
        self._keys = keys
        self.log = log
        self._refresh = redis.register_script(_REFRESH_SCRIPT)
        self._finish = redis.register_script(_FINISH_SCRIPT)
        self._beat = redis.register_script(_BEAT_SCRIPT)
        self._redrive = redis.register_script(_REDRIVE_SCRIPT)

    async def publish(self, event: Any, *, order: str | None = None) -> str:
        """Append one event; returns its stream id. One round trip.

        The stream is not capped: it only holds events not yet processed (a finished
        one is deleted, its record lives on in the log), and capping it would drop
        unprocessed writes while the workers are down. ``order`` names a list that
        records the event id in the same round trip: the publish order of events
        that workers may process in another order (a thread's turns).
        """
        raw = encode(event)

        def queue(pipe: Pipeline) -> None:  # events published together share a round trip
            if order is None:
                pipe.xadd(self._keys.events, {EVENT_FIELD: raw})
                return
            # both or neither: a turn Redis refuses (out of memory, an ACL) takes no place
            pipe.execute_command("MULTI")
            pipe.rpush(order, event.id)  # its expiry is set by the worker that numbers it
            pipe.xadd(self._keys.events, {EVENT_FIELD: raw})
            pipe.execute_command("EXEC")

        *_, answer = await self._commands.execute(queue)
        return text(answer if order is None else answer[-1])

    async def publish_raw(self, raw: bytes) -> str:
        """Append bytes as they are (tests of malformed events, replays of raw records)."""
        return text(await self._redis.xadd(self._keys.events, {EVENT_FIELD: raw}))

    async def ensure_group(self) -> None:
        try:
            await self._redis.xgroup_create(
                self._keys.events, self._keys.workers_group, id="0", mkstream=True
            )
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def join(self, consumer: str) -> None:
        """Register ``consumer`` now: operators (and tests) see a worker before its first event.

        The finish script is loaded here, not on first use: events that find it missing
        are sent again once it is loaded, each pipeline's in its order, but events of
        several pipelines may pass one another and their records come out of order in the
        log (as after a Redis restart; replay puts each file's writes back in the order
        they were applied).
        """
        await self._redis.script_load(_FINISH_SCRIPT)
        await self.ensure_group()
        await self._redis.xgroup_createconsumer(
            self._keys.events, self._keys.workers_group, consumer
        )

    async def read(self, consumer: str, count: int, block_ms: int) -> list[Delivery]:
        result = await self._redis.xreadgroup(
            self._keys.workers_group,
            consumer,
            {self._keys.events: ">"},
            count=count,
            block=block_ms,
        )
        deliveries = []
        for _, rows in result or []:
            for stream_id, fields in rows:
                deliveries.append(
                    Delivery(text(stream_id), fields.get(EVENT_FIELD.encode(), b""), 1)
                )
        return deliveries

    async def claim_stale(
        self,
        consumer: str,
        min_idle_ms: int,
        count: int,
        *,
        running: Collection[str] = (),
    ) -> list[Delivery]:
        """Take over events held for longer than ``min_idle_ms`` by another consumer, or by
        ``consumer`` itself but not in ``running`` (left from a run of a worker of that name).

        An event ``consumer`` is still running is never claimed back: a claim resets its idle
        time, which would keep the worker that should take over a stalled run from doing so,
        and counts as one more delivery towards ``max_deliveries``.
        """
        idle = await self._redis.xpending_range(
            self._keys.events,
            self._keys.workers_group,
            "-",
            "+",
            count,
            idle=min_idle_ms,
        )
        times = {
            text(row["message_id"]): int(row["times_delivered"]) + 1  # the claim delivers it
            for row in idle
            if text(row["consumer"]) != consumer or text(row["message_id"]) not in running
        }
        if not times:
            return []
        # the idle time is checked again by the claim: a run refreshed meanwhile stays its own
        rows = await self._redis.xclaim(
            self._keys.events, self._keys.workers_group, consumer, min_idle_ms, list(times)
        )
        claimed = []
        for stream_id, fields in rows:
            if stream_id is None:  # trimmed from the stream meanwhile
                continue
            claimed_id = text(stream_id)
            raw = (fields or {}).get(EVENT_FIELD.encode(), b"")
            claimed.append(Delivery(claimed_id, raw, times[claimed_id]))
        return claimed

    async def refresh(self, consumer: str, stream_ids: list[str]) -> set[str]:
        """Keep ``consumer``'s events from going idle; returns the ones it still owns."""
        if not stream_ids:
            return set()
        mine = await self._refresh(
            keys=[self._keys.events],
            args=[self._keys.workers_group, consumer, *stream_ids],
        )
        return {text(stream_id) for stream_id in mine}

    async def beat(self, consumer: str) -> None:
        """Say ``consumer`` is alive. Redis before 7.2 counts a consumer's blocked read that
        returned nothing as no interaction (``XINFO CONSUMERS`` shows it idle from its last
        delivery on), so an idle worker's reads would not show it alive."""
        await self._beat(keys=[self._keys.workers_seen], args=[consumer, FORGET_SILENT_MS])

    async def reply(self, reply_to: str, reply: dict[str, Any]) -> None:
        """Answer the waiting caller now (before slower work that must precede the ack)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            _add_reply(pipe, reply_to, reply)
            await pipe.execute()

    async def finish(
        self,
        delivery: Delivery,
        record: LogRecord,
        *,
        reply_to: str | None = None,
        reply: dict[str, Any] | None = None,
        dead: dict[str, Any] | None = None,
    ) -> None:
        """Reply, log, park (dead events), acknowledge and delete in one round trip.

        Events finishing together share that round trip (see :mod:`memsvc.redisbatch`).
        If Redis refuses any of it (out of memory), none of it is done: the event stays
        pending for another try and this raises.
        """
        parked = ""
        if dead is not None:
            parked = json.dumps(
                {
                    "stream_id": delivery.stream_id,
                    **_raw_field(delivery.raw),
                    "deliveries": delivery.deliveries,
                    "parked_at": time.time(),
                    **dead,
                },
                ensure_ascii=False,
            )
        log_key, log_max, fields = self.log.entry(record)
        keys = [log_key, self._keys.events, self._keys.dead_events]
        answer = ""
        if reply_to is not None and reply is not None:
            keys.append(reply_to)
            answer = json.dumps(reply, ensure_ascii=False)
        await self._commands.script(
            self._finish,
            keys,
            [
                log_max,
                self._keys.workers_group,
                delivery.stream_id,
                parked,
                answer,
                INBOX_TTL_SECONDS,
                *fields,
            ],
        )

    async def dead_events(self) -> list[dict[str, Any]]:
        """The parked records, oldest first (see :func:`parked_record`)."""
        raws = await self._redis.lrange(self._keys.dead_events, 0, -1)  # type: ignore[misc]
        return [parked_record(raw) for raw in raws]

    async def redrive_dead(self, *, limit: int | None = None) -> Redrive:
        """Publish the events parked now again, oldest first, each once, exactly as they
        came; each leaves the list as it is published, in one step.

        An event whose cause is gone (a file fixed, a provider back) is then processed
        as if new; one still broken is parked again, behind the others, and waits for
        the next re-drive. Two re-drives at once publish each event once between them
        (the one that takes it off the list publishes it); a record that is not one
        parked here (hand-made, foreign) is left in the list, logged and listed as left.
        """
        parked = await self._redis.lrange(self._keys.dead_events, 0, -1)  # type: ignore[misc]
        sent: list[dict[str, Any]] = []
        left: list[dict[str, Any]] = []
        for position, item in enumerate(parked):
            if limit is not None and len(sent) >= limit:
                break
            try:
                record = json.loads(item)
                raw = _raw_bytes(record)
                was, error = record["stream_id"], record["error"]
            except (ValueError, TypeError, KeyError, binascii.Error) as exc:
                log.warning("dead_event_not_redriven", bytes=len(item), error=type(exc).__name__)
                # where it is once the run is done: each sent before it left the list
                left.append({"position": position - len(sent), "why": "not an event memsvc parked"})
                continue
            stream_id = await self._redrive(
                keys=[self._keys.dead_events, self._keys.events], args=[item, EVENT_FIELD, raw]
            )
            if stream_id is not None:  # None: another re-drive took it meanwhile
                sent.append({"stream_id": text(stream_id), "was": was, "error": error})
        return Redrive(sent, left)

    async def backlog(self) -> dict[str, dict[str, int]]:
        """Work waiting (events not yet done, background jobs queued) and work given up on."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.xlen(self._keys.events)
            pipe.zcard(self._keys.job_queue)
            pipe.llen(self._keys.dead_events)
            pipe.llen(self._keys.dead_jobs)
            events, jobs, dead_events, dead_jobs = await pipe.execute()
        return {
            "queue": {"events": int(events), "jobs": int(jobs)},
            "dead_letters": {"events": int(dead_events), "jobs": int(dead_jobs)},
        }

    async def readiness(self, within_ms: int) -> Readiness:
        """The live workers and whether Redis would take an event published now, in one
        round trip.

        A worker that beat (:meth:`beat`) or read the stream within the last
        ``within_ms`` is live, so an idle worker is live and one that died or froze is
        not (a blocked read counts as a read from Redis 7.2 on; a worker beats several
        times a ``claim_idle``). The publish is asked with an ``XADD`` of the id ``0-0``:
        Redis checks it against the user's rights, its memory and its role, then refuses
        the id without writing or creating anything (it never looks at the key, so a key
        of another type passes). Each probe is an error reply Redis counts in its error
        statistics.
        """
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.xinfo_consumers(self._keys.events, self._keys.workers_group)
            pipe.xadd(self._keys.events, {"probe": ""}, id="0-0")
            pipe.time()
            pipe.zrange(self._keys.workers_seen, 0, -1, withscores=True)
            consumers, probed, now, seen = await pipe.execute(raise_on_error=False)
        publish = None
        if isinstance(probed, ResponseError):
            if "must be greater than 0-0" not in str(probed):
                publish = probed
        else:  # no Redis takes it: an answer this check does not know is not a yes
            publish = ResponseError(f"unexpected answer to a probe: {probed!r}")
        # a refused read may hide live workers (the beats unread, an idle worker looks dead)
        reads = next(
            (
                a
                for a in (consumers, now, seen)
                if isinstance(a, ResponseError) and lasting_refusal(a)
            ),
            None,
        )
        if isinstance(consumers, ResponseError):  # no stream or group yet: no worker joined
            return Readiness(0, publish, reads)
        live = {text(c["name"]) for c in consumers if int(c["idle"]) < within_ms}
        if not isinstance(now, ResponseError) and not isinstance(seen, ResponseError):
            since = now[0] * 1000 + now[1] // 1000 - within_ms
            live.update(text(name) for name, at in seen if at > since)
        return Readiness(len(live), publish, reads)

    async def pending_count(self) -> int:
        info = await self._redis.xpending(self._keys.events, self._keys.workers_group)
        return int(info["pending"]) if info else 0

    async def leave(self, consumer: str) -> None:
        """Deregister ``consumer`` - only when it holds nothing, which would become unclaimable.
        It is no longer live either way."""
        await self._redis.zrem(self._keys.workers_seen, consumer)
        held = await self._redis.xpending_range(
            self._keys.events, self._keys.workers_group, "-", "+", 1, consumername=consumer
        )
        if not held:
            await self._redis.xgroup_delconsumer(
                self._keys.events, self._keys.workers_group, consumer
            )


def _add_reply(pipe: Pipeline, reply_to: str, reply: dict[str, Any]) -> None:
    pipe.rpush(reply_to, json.dumps(reply, ensure_ascii=False))
    pipe.expire(reply_to, INBOX_TTL_SECONDS)


def _raw_field(raw: bytes) -> dict[str, str]:
    """An event's bytes as a parked record keeps them: as text, or in base64 when they are
    not UTF-8 (so that a re-drive publishes the bytes that were refused, not a repair)."""
    try:
        return {"raw": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"raw_base64": base64.b64encode(raw).decode("ascii")}


@dataclass(frozen=True)
class Redrive:
    """What a re-drive of a dead list did: the records sent again, and those it looked at
    and left in the list, each with why (an operator must see them, not a bare zero)."""

    sent: list[dict[str, Any]]
    left: list[dict[str, Any]]


def parked_record(raw: bytes) -> dict[str, Any]:
    """A dead list's record (events' or jobs'); one that is no record memsvc parked
    (hand-made, foreign) as ``{"unreadable": its text}``."""
    try:
        record = json.loads(raw)
    except ValueError:
        record = None
    if isinstance(record, dict):
        return record
    return {"unreadable": raw.decode("utf-8", "replace")}


def _raw_bytes(record: dict[str, Any]) -> bytes:
    if "raw_base64" in record:
        return base64.b64decode(record["raw_base64"])
    return str(record["raw"]).encode("utf-8")
