"""Per-session (thread) state shared by all workers: in Redis, under the user's hash tag.

- which thread an agent was last seen in, to detect a session switch;
- consecutive consolidation failures of the memory tool in the current turn;
- the turn ledger: each ``sync_turn`` event gets a turn index once, however often
  it is delivered, so a retried retain lands on the same Hindsight document; and
  in the order the turns were published, whichever worker processes them first
  (the client appends each turn's event id to the thread's turn queue as it
  publishes; numbering a turn numbers every turn queued before it). The ledger
  remembers the event ids of at least a thread's last ``TURN_LEDGER_SIZE`` turns
  (at most twice that): a redelivery of an older turn (a dead event re-driven
  after that many more turns in its thread) is numbered anew, which retains it
  as a turn of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from memsvc.keys import Keys
from memsvc.redisconn import text

SESSION_TTL_SECONDS = 30 * 24 * 3600
FAILURES_TTL_SECONDS = 3600
TURN_LEDGER_SIZE = 1000  # event ids a thread's ledger is sure to remember, newest first

# KEYS[1] ledger, KEYS[2] turn queue (event ids in publish order), KEYS[3] the ledger's
# previous generation; ARGV: event id, ttl, the agent's own index or '', generation size.
# A ledger past its size becomes the previous generation (the one before is dropped),
# so at least the newest ``size`` ids are always known and never more than twice that.
_TURN_INDEX = """
local function known(id)
  return redis.call('HGET', KEYS[1], id) or redis.call('HGET', KEYS[3], id)
end
local index = known(ARGV[1])
if index then return tonumber(index) end
if ARGV[3] ~= '' then
  index = tonumber(ARGV[3])
  local last = tonumber(redis.call('HGET', KEYS[1], '_next') or '0')
  if index > last then redis.call('HSET', KEYS[1], '_next', index) end
  redis.call('HSET', KEYS[1], ARGV[1], index)
else
  -- number the turns published before this one first, in their order
  if redis.call('LPOS', KEYS[2], ARGV[1]) then
    while true do
      local queued = redis.call('LPOP', KEYS[2])
      if not queued then break end
      if not known(queued) then
        redis.call('HSET', KEYS[1], queued, redis.call('HINCRBY', KEYS[1], '_next', 1))
      end
      if queued == ARGV[1] then break end
    end
  end
  index = known(ARGV[1])
  if not index then  -- not queued (an older client, or the queue expired): next number
    index = redis.call('HINCRBY', KEYS[1], '_next', 1)
    redis.call('HSET', KEYS[1], ARGV[1], index)
  end
  index = tonumber(index)
end
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[4]) then
  local next = redis.call('HGET', KEYS[1], '_next')
  redis.call('RENAME', KEYS[1], KEYS[3])
  redis.call('HDEL', KEYS[3], '_next')
  redis.call('HSET', KEYS[1], '_next', next)
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], ARGV[2]) end
return index
"""


class SessionState:
    """Per-thread state every worker sees: turn numbers, the last thread, consolidation failures."""

    def __init__(self, redis: Redis, keys: Keys, *, ledger_size: int = TURN_LEDGER_SIZE) -> None:
        self._redis = redis
        self._keys = keys
        self._ledger_size = ledger_size
        self._turn_index = redis.register_script(_TURN_INDEX)

    async def enter_thread(self, user_id: str, agent_id: str, thread_id: str) -> str | None:
        """Record ``thread_id`` as the agent's current thread; return the previous one."""
        async with self._redis.pipeline(transaction=False) as pipe:
            decode = self.queue_enter(pipe, user_id, agent_id, thread_id)
            (previous,) = await pipe.execute()
        return decode(previous)

    def queue_enter(
        self, pipe: Pipeline, user_id: str, agent_id: str, thread_id: str
    ) -> Callable[[Any], str | None]:
        """:meth:`enter_thread` queued on ``pipe``; returns how to decode its answer."""
        pipe.set(
            self._keys.last_thread(user_id, agent_id), thread_id, ex=SESSION_TTL_SECONDS, get=True
        )
        return lambda previous: None if previous is None else text(previous)

    async def turn_index(
        self,
        user_id: str,
        agent_id: str,
        thread_id: str,
        event_id: str,
        given: int | None = None,
    ) -> int:
        """The 1-based index of the turn ``event_id`` carried; the same on every redelivery.

        An agent that numbers its own turns (``given``) gets its numbers; otherwise
        turns are numbered in the order they were published (see the turn queue).
        """
        keys = [
            self._keys.turns(user_id, agent_id, thread_id),
            self._keys.turn_queue(user_id, agent_id, thread_id),
            self._keys.earlier_turns(user_id, agent_id, thread_id),
        ]
        args: list[str | int] = [
            event_id,
            SESSION_TTL_SECONDS,
            "" if given is None else given,
            self._ledger_size,
        ]
        return int(await self._turn_index(keys=keys, args=args))

    async def turn_count(self, user_id: str, agent_id: str, thread_id: str) -> int:
        key = self._keys.turns(user_id, agent_id, thread_id)
        raw = await self._redis.hget(key, "_next")  # type: ignore[misc]
        return 0 if raw is None else int(raw)

    def failures(self, user_id: str, agent_id: str) -> TurnFailures:
        return TurnFailures(self._redis, self._keys, user_id, agent_id)


class TurnFailures:
    """Consecutive consolidation failures of one agent, per thread, reset when a turn starts.

    A thread's failures are a hash of the events refused: an event run twice (redelivered
    after a worker died, or run by a stalled worker and the one that claimed it) counts
    once.
    """

    def __init__(self, redis: Redis, keys: Keys, user_id: str, agent_id: str) -> None:
        self._redis = redis
        self._keys = keys
        self._user = user_id
        self._agent = agent_id

    async def record(self, thread_id: str, event: str) -> int:
        key = self.key(thread_id)
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, event, "1")
            pipe.expire(key, FAILURES_TTL_SECONDS)
            pipe.hlen(key)
            *_, count = await pipe.execute()
        return cast(int, count)

    async def reset(self, thread_id: str) -> None:
        await self._redis.delete(self.key(thread_id))

    def queue_reset(self, pipe: Pipeline, thread_id: str) -> None:
        pipe.delete(self.key(thread_id))

    def key(self, thread_id: str) -> str:
        return self._keys.failures(self._user, self._agent, thread_id)
