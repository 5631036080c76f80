"""Receipts: a write event's effects happen once, however often it is delivered.

Delivery is at-least-once (a worker can die after the write, before the ack),
so every ``memory_write`` carries its event id into the store. Under the file
lock the writer first looks for a receipt of that id (a commit that takes the
lock, the store's first commit, checks for it instead). A write that changes the
file records its receipt in the same step as its commit to the file journal
(:mod:`memsvc.store.journal`), so a redelivered event finds a receipt exactly when the
write counts as done; outcomes that change nothing (a rejection, a duplicate)
are recorded after the fact, and so is the error of a write whose event was
parked after its last delivery (marked ``parked``: a re-drive still applies it),
so that a caller can look up how any write ended.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from memsvc.keys import Keys
from memsvc.paths import Target
from memsvc.store.edits import Applied, Change, FilePosition, Written

RECEIPT_TTL_SECONDS = 7 * 24 * 3600

# Whether the receipt at ``key`` is of an outcome that counts: any readable one but a
# parked event's (a re-drive still applies its write). As ``Receipt.parked`` reads it.
COUNTS_LUA = """
local function counts(key)
  local old = redis.call('GET', key)
  if not old then return false end
  local readable, prior = pcall(cjson.decode, old)
  return readable and type(prior) == 'table' and type(prior.result) == 'table'
    and prior.result.parked ~= true
end
"""

# A receipt recorded after the fact never replaces one of an outcome that counts: a worker
# that stalled between working out a refusal (or parking an event) and recording it may
# find that another worker, which took the event over, applied it meanwhile. KEYS: the
# receipt, then the keys to delete with it; ARGV: the receipt, its ttl. Returns 1 when it
# was recorded.
_RECORD = (
    COUNTS_LUA
    + """
if counts(KEYS[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
"""
)


@dataclass(frozen=True)
class Receipt:
    """How a write event ended: its result, and the changes it made."""

    result: dict[str, Any]
    target: Target
    changes: list[Change]
    position: FilePosition | None = None  # where the write stood among its file's writes

    @property
    def parked(self) -> bool:
        """A write given up on (its event was parked): it does not count as applied."""
        return self.result.get("parked") is True  # as the record script reads it

    def encode(self) -> str:
        return json.dumps(
            {
                "result": self.result,
                "target": self.target,
                "changes": [change.as_dict() for change in self.changes],
                **({"position": list(self.position)} if self.position is not None else {}),
            },
            ensure_ascii=False,
        )

    @classmethod
    def decode(cls, raw: bytes | str) -> Receipt:
        data = json.loads(raw)
        return cls(
            result=data["result"],
            target=data["target"],
            changes=[Change.from_dict(change) for change in data["changes"]],
            position=tuple(data["position"]) if data.get("position") else None,
        )


class Receipts:
    def __init__(self, redis: Redis, keys: Keys, *, ttl_seconds: int = RECEIPT_TTL_SECONDS) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl_seconds
        self._record = redis.register_script(_RECORD)

    def for_event(self, user_id: str, event_id: str) -> EventReceipt:
        key = self._keys.receipt(user_id, event_id)
        return EventReceipt(self._redis, key, self._ttl, self._record)


class EventReceipt:
    """The receipt of one event, as the write path uses it."""

    def __init__(self, redis: Redis, key: str, ttl_seconds: int, record: AsyncScript) -> None:
        self._redis = redis
        self.key = key
        self._ttl = ttl_seconds
        self._record = record

    async def fetch(self) -> bytes | None:
        raw: bytes | None = await self._redis.get(self.key)
        return raw

    async def load(self) -> Receipt | None:
        raw = await self.fetch()
        return None if raw is None else Receipt.decode(raw)

    async def record(self, receipt: Receipt, *, clears: Sequence[str] = ()) -> bool:
        """Record ``receipt`` and delete ``clears``, in one step, unless a receipt that counts
        is there already (see :data:`_RECORD`); whether it was recorded."""
        done = await self._record(keys=[self.key, *clears], args=[receipt.encode(), self._ttl])
        return bool(done)


class ReceiptGuard:
    """An event's receipt as the store's exactly-once hooks (``WriteGuard``) see it."""

    def __init__(
        self,
        receipt: EventReceipt,
        target: Target,
        result_of: Callable[[Applied], dict[str, Any]],
        *,
        clears: Sequence[str] = (),
    ) -> None:
        """``clears``: keys the commit deletes with the receipt (the turn's failure count)."""
        self._receipt = receipt
        self._target = target
        self._result_of = result_of
        self.clears = clears
        self.prior: Receipt | None = None

    @property
    def key(self) -> str:
        return self._receipt.key

    async def fetch(self) -> bytes | None:
        return await self._receipt.fetch()

    def already_applied(self, raw: bytes | None) -> bool:
        self.prior = None if raw is None else Receipt.decode(raw)  # read under the lock
        return self.prior is not None and not self.prior.parked

    def _of(self, applied: Applied) -> Receipt:
        position = applied.position if isinstance(applied, Written) else None
        return Receipt(self._result_of(applied), self._target, applied.changes, position)

    def receipt(self, applied: Applied) -> tuple[str, str]:
        return self._receipt.key, self._of(applied).encode()

    async def record(self, applied: Applied) -> None:
        await self._receipt.record(self._of(applied), clears=self.clears)
