"""A thread's turns on their way into Hindsight: buffered, flushed by one job, confirmed per turn.

- **Buffer.** Every turn waits in a Redis hash (turn number -> retain item) until
  Hindsight has processed it; a turn leaves the hash only then, and only if it
  is still the text that was sent.
- **One flush in flight per thread.** A job that wants a flush raises a
  "wanted" flag and claims the thread's flusher key; if another job holds it,
  this job is done - its turn is in the buffer, and the holder re-checks the
  flag when its round ends and queues (or runs) another round. A holder whose
  round fails keeps the key for its own retry, so that during an outage one job
  retries for the thread instead of every job that buffered a turn.
- **A round** takes what is buffered at its start, in batches bounded in items
  and bytes: a big backlog goes out as a few requests, not one per turn.
- **A refused turn does not hold up the rest.** A batch Hindsight refuses as it is
  (400, 413, 422) is sent again a turn at a time; a turn refused alone is parked
  in the dead-letter list (``restore_turns``) and leaves the buffer, so the
  thread's later turns are retained; a re-drive sends it. A failed round whose
  retry cannot help lets the thread go at once.
- **Accepted is not sent again.** The operation id of each async retain is kept
  in Redis with the turns it carries; a later round (the retry of a try that
  gave up waiting) waits on that operation again instead of re-sending it, and
  re-sends only when Hindsight says the operation failed.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import structlog
from redis.asyncio import Redis

from memsvc.errors import is_retryable
from memsvc.hindsight.client import HindsightClient, HindsightRejected, OperationFailed, RetainItem
from memsvc.keys import Keys
from memsvc.redisconn import text
from memsvc.service.sessions import SESSION_TTL_SECONDS

log = structlog.get_logger(__name__)

T = TypeVar("T")

_BATCH_OVERHEAD = 64  # bytes of the request body around its items
# Refusals of what a request holds (malformed, too large, unprocessable), not of who sends
# it: a turn refused so is set aside, and the thread's later turns go on without it.
_REFUSES_THE_TURN = frozenset({400, 413, 422})

# (thread, turns by number, the refusal, its HTTP statuses): park refused turns where an
# operator re-drives them
SetAside = Callable[[str, dict[str, str], str, set[int]], Awaitable[None]]

# Remove the turns whose buffered text is still the text that was retained, and
# the operation that carried them. KEYS: buffer, operations; ARGV: op id, field, value, ...
_CONFIRM = """
local done = 0
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    done = done + 1
  end
end
if ARGV[1] ~= '' then redis.call('HDEL', KEYS[2], ARGV[1]) end
return done
"""
# KEYS: flusher; ARGV: token, lease ms. Claimed when free or already ours (a retry).
_CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
# KEYS: flusher; ARGV: token, ms (0: let go). Only the holder changes its key.
_KEEP = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""


@dataclass(frozen=True)
class FlushLimits:
    """How big one retain may be: a backlog goes out in a few bounded batches."""

    batch_items: int = 50
    batch_bytes: int = 256 * 1024
    # the longest one round may run: a second flusher must not start meanwhile
    lease_seconds: float = 30.0
    # how long a failed round's job keeps the thread for its retry (its backoff and more)
    hold_seconds: float = 360.0


@dataclass(frozen=True)
class Flushed:
    retained: int  # turns confirmed by this call
    again: bool  # a flush was asked for while this one ran: another round is due


def batches(items: list[T], limits: FlushLimits, size: Callable[[T], int]) -> Iterator[list[T]]:
    """Consecutive runs of ``items`` within the item and byte bounds, ``size`` giving each
    one's bytes (a lone big item goes alone)."""
    batch: list[T] = []
    total = _BATCH_OVERHEAD
    for item in items:
        cost = size(item) + 1
        if batch and (len(batch) >= limits.batch_items or total + cost > limits.batch_bytes):
            yield batch
            batch, total = [], _BATCH_OVERHEAD
        batch.append(item)
        total += cost
    if batch:
        yield batch


class TurnBuffer:
    """A thread's turns in Redis until Hindsight confirmed them, flushed by one job at a time."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        client: HindsightClient,
        *,
        user_id: str,
        agent_id: str,
        limits: FlushLimits,
        set_aside: SetAside | None = None,
    ) -> None:
        self._redis = redis
        self._set_aside = set_aside  # without it a refused turn stays, and blocks its thread
        self._keys = keys
        self._client = client
        self._user_id = user_id
        self._agent_id = agent_id
        self.limits = limits
        self._confirm = redis.register_script(_CONFIRM)
        self._claim = redis.register_script(_CLAIM)
        self._keep = redis.register_script(_KEEP)

    def _key(self, kind: str, thread_id: str) -> str:
        make = {
            "buffer": self._keys.retain_buffer,
            "ops": self._keys.retain_operations,
            "flusher": self._keys.flusher,
            "wanted": self._keys.flush_wanted,
        }[kind]
        return make(self._user_id, self._agent_id, thread_id)

    async def add(self, thread_id: str, turn_index: int, item: RetainItem) -> int:
        """Buffer one turn (again: the same text); returns how many the thread holds."""
        buffer = self._key("buffer", thread_id)
        threads = self._keys.buffered_threads(self._user_id, self._agent_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(buffer, str(turn_index), item.model_dump_json(exclude_none=True))
            pipe.expire(buffer, SESSION_TTL_SECONDS)
            pipe.sadd(threads, thread_id)
            pipe.expire(threads, SESSION_TTL_SECONDS)
            pipe.hlen(buffer)
            *_, size = await pipe.execute()
        return int(size)

    async def threads(self) -> list[str]:
        members = await self._redis.smembers(  # type: ignore[misc]
            self._keys.buffered_threads(self._user_id, self._agent_id)
        )
        return [text(m) for m in members]

    async def flush(
        self,
        thread_id: str,
        bank: str,
        *,
        run_async: bool,
        owner: str,
        hold: bool,
        prepare: Callable[[str], Awaitable[None]],
    ) -> Flushed:
        """One round, unless another job is flushing the thread (then it takes this turn too).

        ``owner`` is the job asking (the same id on each of its tries), or empty
        outside a job; ``hold``: when the round fails, the thread stays the owner's
        until its retry (not on its last try: a parked job would block the thread).
        ``prepare(bank)`` runs before a round sends anything (the
        bank's upsert). Raises when the round fails; the turns stay buffered.
        """
        wanted, flusher = self._key("wanted", thread_id), self._key("flusher", thread_id)
        await self._redis.set(wanted, "1", ex=SESSION_TTL_SECONDS)
        token = owner or uuid.uuid4().hex
        lease_ms = int(self.limits.lease_seconds * 1000)
        if not await self._claim(keys=[flusher], args=[token, lease_ms]):
            log.info("hindsight_flush_coalesced", thread_id=thread_id, agent_id=self._agent_id)
            return Flushed(retained=0, again=False)
        try:
            await self._redis.delete(wanted)
            retained = await self._round(thread_id, bank, run_async, prepare)
        except BaseException as exc:
            # a retry that cannot help (a refusal) would hold the thread for nothing
            keep = owner and hold and is_retryable(exc)
            keep_ms = int(self.limits.hold_seconds * 1000) if keep else 0
            await asyncio.shield(self._keep(keys=[flusher], args=[token, keep_ms]))
            raise
        await self._keep(keys=[flusher], args=[token, 0])
        return Flushed(retained=retained, again=bool(await self._redis.exists(wanted)))

    async def _round(
        self,
        thread_id: str,
        bank: str,
        run_async: bool,
        prepare: Callable[[str], Awaitable[None]],
    ) -> int:
        buffer, ops_key = self._key("buffer", thread_id), self._key("ops", thread_id)
        records = {
            text(op): json.loads(raw)
            for op, raw in (await self._redis.hgetall(ops_key)).items()  # type: ignore[misc]
        }
        pending: dict[str, dict[str, str]] = {op: r["turns"] for op, r in records.items()}
        banks: dict[str, str] = {op: r["bank"] for op, r in records.items()}
        sent = {turn for turns in pending.values() for turn in turns}
        buffered = await self._redis.hgetall(buffer)  # type: ignore[misc]
        fresh = sorted(
            ((text(k), text(v)) for k, v in buffered.items() if text(k) not in sent),
            key=lambda kv: int(kv[0]),
        )
        retained = 0
        if fresh:
            await prepare(bank)
        refused: dict[str, str] = {}
        why: list[str] = []
        statuses: set[int] = set()
        queue = list(batches(fresh, self.limits, lambda turn: len(turn[1].encode("utf-8"))))
        while queue:
            batch = queue.pop(0)
            items = [RetainItem.model_validate_json(value) for _, value in batch]
            try:
                result = await self._client.submit_retain(bank, items, run_async=run_async)
            except HindsightRejected as exc:
                if exc.status not in _REFUSES_THE_TURN or self._set_aside is None:
                    raise
                if len(batch) > 1:  # which turn it refuses, or the batch's size: one at a time
                    queue[:0] = [[turn] for turn in batch]
                else:
                    refused.update(batch)
                    why.append(f"turn {batch[0][0]}: {exc}")
                    statuses.add(exc.status)
                continue
            operation = str(result.get("operation_id") or "") if run_async else ""
            if operation:
                record = {"bank": bank, "turns": dict(batch)}
                await self._redis.hset(ops_key, operation, json.dumps(record))  # type: ignore[misc]
                await self._redis.expire(ops_key, SESSION_TTL_SECONDS)
                pending[operation], banks[operation] = dict(batch), bank
            else:
                retained += await self._confirmed(thread_id, "", dict(batch))
        settled = await asyncio.gather(
            *(self._settle(thread_id, banks[op], op, turns) for op, turns in pending.items()),
            return_exceptions=True,
        )
        retained += sum(s for s in settled if isinstance(s, int))
        if refused and self._set_aside is not None:
            # parked first, then taken out of the buffer: a crash between keeps both copies
            await self._set_aside(thread_id, refused, "; ".join(why), statuses)
            await self._confirmed(thread_id, "", refused)
            log.warning("hindsight_turns_set_aside", thread_id=thread_id, turns=sorted(refused))
        if not await self._redis.exists(buffer):
            await self._redis.srem(  # type: ignore[misc]
                self._keys.buffered_threads(self._user_id, self._agent_id), thread_id
            )
        for outcome in settled:
            if isinstance(outcome, BaseException):
                raise outcome
        return retained

    async def _settle(
        self, thread_id: str, bank: str, operation: str, turns: dict[str, str]
    ) -> int:
        try:
            await self._client.wait_processed(bank, operation)
        except OperationFailed:  # its turns are sent again by the next round
            await self._redis.hdel(self._key("ops", thread_id), operation)  # type: ignore[misc]
            raise
        return await self._confirmed(thread_id, operation, turns)

    async def _confirmed(self, thread_id: str, operation: str, turns: dict[str, str]) -> int:
        args = [operation, *(part for turn in turns.items() for part in turn)]
        keys = [self._key("buffer", thread_id), self._key("ops", thread_id)]
        return int(await self._confirm(keys=keys, args=args))
