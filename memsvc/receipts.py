"""Receipts: a write event's effects happen once, however often it is delivered.

Delivery is at-least-once (a worker can die after the write, before the ack),
so every ``memory_write`` carries its event id into the store. Under the file
lock the writer first looks for a receipt of that id; right before the rename
it records an *intent* (the result, the entries that change, and digests of the
file before and after); after the rename it marks the receipt *done*. A
redelivered event then finds a done receipt (answer with the recorded result),
or an intent, and the file tells which side of the rename the writer died on:
the "after" bytes mean it was committed, the "before" bytes mean it was not
(apply again). Only if another writer changed the file since does it fall back
to checking whether the recorded changes are visible in the entries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from redis.asyncio import Redis

from memsvc.edits import Change
from memsvc.keys import Keys
from memsvc.paths import Target

RECEIPT_TTL_SECONDS = 7 * 24 * 3600

State = Literal["intent", "done"]


@dataclass(frozen=True)
class Receipt:
    state: State
    result: dict[str, Any]
    target: Target
    changes: list[Change]
    before: str = ""  # digest of the file the write was computed from
    after: str = ""  # digest of the file it wrote

    def committed(self, entries: list[str], digest: str) -> bool:
        """Whether the write this receipt describes is already in the file."""
        if self.state == "done" or digest == self.after:
            return True
        if digest == self.before:
            return False
        return self.visible_in(entries)

    def visible_in(self, entries: list[str]) -> bool:
        """Whether the file already shows every change this receipt describes."""
        present = set(entries)
        for change in self.changes:
            if change.action == "remove" and change.content in present:
                return False
            if change.action in ("add", "replace") and change.content not in present:
                return False
            if change.action == "replace" and change.previous in present:
                return False
        return True


class Receipts:
    def __init__(self, redis: Redis, keys: Keys, *, ttl_seconds: int = RECEIPT_TTL_SECONDS) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl_seconds

    def for_event(self, user_id: str, event_id: str) -> EventReceipt:
        return EventReceipt(self, self._keys.receipt(user_id, event_id))

    async def _load(self, key: str) -> Receipt | None:
        raw = await self._redis.get(key)
        if raw is None:
            return None
        data = json.loads(raw)
        return Receipt(
            state=data["state"],
            result=data["result"],
            target=data["target"],
            changes=[Change(c["action"], c["content"], c.get("previous")) for c in data["changes"]],
            before=data.get("before", ""),
            after=data.get("after", ""),
        )

    async def _save(self, key: str, receipt: Receipt) -> None:
        data = {
            "state": receipt.state,
            "result": receipt.result,
            "target": receipt.target,
            "changes": [
                {"action": c.action, "content": c.content, "previous": c.previous}
                for c in receipt.changes
            ],
            "before": receipt.before,
            "after": receipt.after,
        }
        await self._redis.set(key, json.dumps(data, ensure_ascii=False), ex=self._ttl)


class EventReceipt:
    """The receipt of one event, as the write path uses it."""

    def __init__(self, receipts: Receipts, key: str) -> None:
        self._receipts = receipts
        self._key = key

    async def load(self) -> Receipt | None:
        return await self._receipts._load(self._key)

    async def record(
        self,
        state: State,
        result: dict[str, Any],
        target: Target,
        changes: list[Change],
        *,
        before: str = "",
        after: str = "",
    ) -> None:
        receipt = Receipt(state, result, target, changes, before=before, after=after)
        await self._receipts._save(self._key, receipt)
