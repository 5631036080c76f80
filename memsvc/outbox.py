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

Only writes whose event id guards them are kept: another tool's call, published
twice, could act twice. What is still unconfirmed when the client closes is given
a moment, then logged by event id as not published.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from memsvc.redisconn import Outage
from memsvc.service.bus import EventBus

log = structlog.get_logger(__name__)


class Outbox:
    """The writes of one client that wait for Redis to confirm a publish of them."""

    def __init__(self, bus: EventBus, *, timeout: float) -> None:
        """``timeout``: how long one publish is waited for before another is sent."""
        self._bus = bus
        self._timeout = timeout
        self._keepers: dict[str, asyncio.Task[None]] = {}

    def keep(self, event: Any, attempt: asyncio.Future[Any]) -> None:
        """Publish ``event`` again until Redis confirms it; ``attempt`` is the publish
        still in flight (it may yet be confirmed, and then nothing more is sent)."""
        if event.id in self._keepers:
            return
        log.warning("write_unconfirmed_kept", event_id=event.id, type=event.type)
        task = asyncio.get_running_loop().create_task(self._until_confirmed(event, attempt))
        self._keepers[event.id] = task
        task.add_done_callback(lambda _: self._keepers.pop(event.id, None))

    @property
    def waiting(self) -> list[str]:
        """The event ids not confirmed yet."""
        return list(self._keepers)

    async def _until_confirmed(self, event: Any, attempt: asyncio.Future[Any]) -> None:
        outage = Outage("write_publish_retry", cap=5.0, event_id=event.id)
        while True:
            try:
                async with asyncio.timeout(self._timeout):
                    await asyncio.shield(attempt)
            except asyncio.CancelledError:
                attempt.cancel()  # closing: the attempt's outcome is no longer heard
                raise
            except Exception as exc:  # not confirmed: another copy after a pause
                if not attempt.done():
                    attempt.add_done_callback(_retrieve)  # left to end on its own
                await outage.wait(exc)
                attempt = asyncio.ensure_future(self._bus.publish(event))
                continue
            outage.over()
            log.info("write_unconfirmed_published", event_id=event.id)
            return

    async def close(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the writes still kept, then give them up
        (logged by event id: they were never confirmed in Redis)."""
        if not self._keepers:
            return
        keepers = list(self._keepers.items())
        await asyncio.wait([task for _, task in keepers], timeout=grace)
        lost = [event_id for event_id, task in keepers if not task.done()]
        for _, task in keepers:
            task.cancel()
        await asyncio.gather(*(task for _, task in keepers), return_exceptions=True)
        if lost:
            log.error("writes_not_published", event_ids=lost, waited_seconds=grace)


def _retrieve(attempt: asyncio.Future[Any]) -> None:
    """An abandoned attempt's error is expected: read, so asyncio does not report it."""
    if not attempt.cancelled():
        attempt.exception()
