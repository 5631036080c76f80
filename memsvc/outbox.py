"""Writes Redis did not confirm: published again until it takes one copy.

A ``memory`` write (or a person's entry edit) whose publish Redis does not confirm
in time is answered as pending: "queued, it will be applied once; do not repeat
it". The publish may still land (a command written before Redis stalled runs once
it resumes), or it may never have left (a connection was still being opened when
the caller's deadline came, and failed later): without another try, that write is
lost while its caller was told it is queued. So the client keeps it here, and it
is published again, with backoff, until Redis confirms a publish of it. A write
may then arrive twice, which its event id makes harmless: the store applies it
once (receipts), and replay once.

A finished turn (``sync_turn``) Redis may have taken unconfirmed is kept the same
way: the turn ledger numbers an event id once and its retain job is named by it,
so a second copy changes nothing. Its place among its thread's turns is kept when
its first copy reached Redis; a turn whose first copy never did is numbered when
a copy arrives, after any turn of its thread published meanwhile.

Only events whose id guards them are kept: another tool's call, published twice,
could act twice. A write still unconfirmed when the client closes (after a
moment's grace) or its event loop ends is logged by event id
(``write_not_confirmed``): it may have reached Redis, or not.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from memsvc.redisconn import Outage
from memsvc.service.bus import EventBus

log = structlog.get_logger(__name__)

Scoped = tuple[str, str, str, str]  # user, agent, thread, event id: what names a kept event


class Outbox:
    """The writes of one client that wait for Redis to confirm a publish of them."""

    def __init__(self, bus: EventBus, *, timeout: float) -> None:
        """``timeout``: how long one publish is waited for before another is sent."""
        self._bus = bus
        self._timeout = timeout
        # by the event's user, agent and thread too: a turn's id may be its caller's own,
        # which another user (one gateway serves many) or thread may use as well
        self._keepers: dict[Scoped, asyncio.Task[None]] = {}
        self._dropped: set[Scoped] = set()  # cancelled by drop(): never answered as queued
        self._closed = False
        self.given_up: list[str] = []  # event ids let go unconfirmed at close: in Redis, or not

    def keep(self, event: Any, attempt: asyncio.Future[Any], *, order: str | None = None) -> bool:
        """Publish ``event`` again (with ``order``, its thread's turn queue) until Redis
        confirms it; ``attempt`` is the publish still in flight (it may yet be confirmed,
        and then nothing more is sent). ``False`` when the client is closing: nothing
        would try again."""
        if self._closed:
            log.error("write_not_confirmed", event_id=event.id, type=event.type)
            return False
        scoped = _scoped(event)
        if scoped in self._keepers:
            return True
        log.warning("write_unconfirmed_kept", event_id=event.id, type=event.type)
        task = asyncio.get_running_loop().create_task(self._until_confirmed(event, attempt, order))
        self._keepers[scoped] = task
        task.add_done_callback(lambda _: self._forget(scoped))
        return True

    def _forget(self, scoped: Scoped) -> None:
        self._keepers.pop(scoped, None)
        self._dropped.discard(scoped)

    def drop(self, event: Any) -> None:
        """Stop publishing ``event``: its caller was cancelled before it was answered,
        so it was never told the write is queued (a copy sent already may still land)."""
        scoped = _scoped(event)
        keeper = self._keepers.get(scoped)
        if keeper is not None and keeper.cancel():  # not ended already
            self._dropped.add(scoped)

    @property
    def waiting(self) -> list[str]:
        """The event ids not confirmed yet."""
        return [scoped[-1] for scoped in self._keepers]

    async def _until_confirmed(
        self, event: Any, attempt: asyncio.Future[Any], order: str | None
    ) -> None:
        outage = Outage("write_publish_retry", cap=5.0, event_id=event.id)
        try:
            while True:
                try:
                    async with asyncio.timeout(self._timeout):
                        await asyncio.shield(attempt)
                except Exception as exc:  # not confirmed: another copy after a pause
                    _let_go(attempt)
                    await outage.wait(exc)
                    attempt = asyncio.ensure_future(self._bus.publish(event, order=order))
                    continue
                outage.over()
                log.info("write_unconfirmed_published", event_id=event.id)
                return
        except asyncio.CancelledError:  # the client closed, its loop ended, or drop()
            attempt.cancel()
            if self._closed and _scoped(event) not in self._dropped:  # a dropped one was
                self.given_up.append(event.id)  # never answered as queued
            log.error("write_not_confirmed", event_id=event.id, type=event.type)
            raise

    async def close(self, grace: float) -> None:
        """Keep no more writes; wait up to ``grace`` seconds for those kept, then give
        them up (each logged)."""
        self._closed = True
        keepers = list(self._keepers.values())
        if not keepers:
            return
        await asyncio.wait(keepers, timeout=grace)
        for task in keepers:
            task.cancel()
        await asyncio.gather(*keepers, return_exceptions=True)


def _scoped(event: Any) -> Scoped:
    return (event.user_id, event.agent_id, event.thread_id, event.id)


def _let_go(attempt: asyncio.Future[Any]) -> None:
    """A copy given up on may still fail later: its error is read then, not printed by
    asyncio as never retrieved (a traceback on the agent's stderr per retry)."""
    attempt.add_done_callback(lambda done: done.cancelled() or done.exception())
