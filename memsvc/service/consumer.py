"""The worker's event loop: read, handle, reply, log, acknowledge.

A blocked ``XREADGROUP`` wakes as soon as an event arrives (no poll interval on
the request path). Up to ``concurrency`` events run at once. An event is
acknowledged only after its reply and log record are written, so a worker that
dies mid-event leaves it pending, and after ``claim_idle`` another worker claims
and completes it; receipts make a redelivered write apply once. A live worker
refreshes the events it is still working on every heartbeat, so a slow event is
never claimed away from it; if it stalled so long that another worker claimed
one anyway, it drops its own run of that event, whether its heartbeat sees the
claim first or its run gets to its start or its end first (a run whose hold was
last confirmed more than half a ``claim_idle`` ago asks before it runs, before it
replies and before it logs a failure). An event that
cannot be decoded, or keeps failing until ``max_deliveries``, is parked in the
dead-event list with its error and never blocks the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from typing import Any

import structlog
from redis.exceptions import RedisError

from memsvc import telemetry
from memsvc.builtin import replies
from memsvc.builtin.schema import target_named
from memsvc.errors import MemoryMisconfiguredError, is_retryable
from memsvc.events import (
    EntryEditEvent,
    Event,
    InvalidEvent,
    MemoryWriteEvent,
    PrefetchEvent,
    SearchEvent,
    SyncTurnEvent,
    decode,
)
from memsvc.paths import Target
from memsvc.redisconn import REDIS_DOWN, Failures, Outage, cancel_and_wait, refused_user
from memsvc.service.bus import Delivery
from memsvc.service.eventlog import LogRecord, text_summary
from memsvc.service.handlers import EventHandlers
from memsvc.service.runtime import Runtime
from memsvc.store.filejobs import event_started
from memsvc.store.locks import LocalQueues
from memsvc.store.receipts import Receipt

log = structlog.get_logger(__name__)

# What a person wrote or was told, in the payloads that carry it: the log keeps each
# text's length and digest unless MEMSVC_LOG_TURN_TEXT asks for the text (replay needs
# none of it: it re-applies writes). A prefetch's or a search's query is, most often, the
# user's latest message.
CONVERSATION_TEXT: dict[type[Event], tuple[str, ...]] = {
    SyncTurnEvent: ("user_content", "assistant_content"),
    PrefetchEvent: ("query",),
    SearchEvent: ("query",),
}

# Requests that only read (or redo what the thread's next prefetch redoes): one delivered
# again after its caller's deadline has passed is logged ``expired`` and not run. A
# Redis that keeps refusing an event's last step (out of memory) would otherwise have
# it run in full, recalls included, every ``claim_idle`` for nobody.
ANSWER_ONLY = frozenset(
    {"prefetch", "tool_schemas", "memory_read", "config_read", "status", "search", "explain"}
)


def consumer_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Consumer:
    """A worker's event loop: read, run, reply, log, acknowledge; it keeps the events it runs from
    being claimed.
    """

    def __init__(
        self, runtime: Runtime, *, name: str | None = None, exit_when_refused: bool = False
    ) -> None:
        """``exit_when_refused``: end :meth:`run` when Redis refuses this worker's user (a
        worker process, which then exits); else such a refusal is logged and waited out
        like an outage (an in-process worker, whose callers are told by their own calls)."""
        settings = runtime.settings
        self._rt = runtime
        self._exit_when_refused = exit_when_refused
        self._bus = runtime.bus
        self._handlers = EventHandlers(runtime)
        self.name = name or consumer_name()
        self._concurrency = settings.worker_concurrency
        self._claim_idle_ms = int(settings.claim_idle_seconds * 1000)
        self._heartbeat = settings.heartbeat_seconds
        self._max_deliveries = settings.max_deliveries
        self._event_timeout = settings.event_timeout_seconds
        self._slots = asyncio.Semaphore(self._concurrency)
        self._inflight: dict[str, asyncio.Task[None]] = {}  # stream id -> its run
        # stream id -> when this worker last knew it held the event (read, claim, heartbeat)
        self._held_since: dict[str, float] = {}
        self._threads = LocalQueues()
        self._stopping = asyncio.Event()
        self._not_reading = asyncio.Event()  # clear while run() may still start events
        self._not_reading.set()
        self._read: asyncio.Future[list[Delivery]] | None = None
        self._beating: asyncio.Task[None] | None = None
        self._refusal: Exception | None = None  # an event's last step refused for good
        self._digest_key = b""  # the log's: read as the consumer joins, and every heartbeat

    async def run(self) -> None:
        """Consume until :meth:`stop`; then hand back what could not finish. Raises
        :class:`~memsvc.errors.MemoryMisconfiguredError` when Redis refuses this worker's
        user and ``exit_when_refused``."""
        if not await self._joined():
            return
        if self._stopping.is_set():  # stop() found nothing running, and may have left first
            await self._leave()
            return
        self._beating = asyncio.create_task(self._heartbeats())
        housekeeping = asyncio.create_task(self._housekeeping())
        # apart: a repair waiting on a busy file must not hold up claiming dead workers' events
        checking = asyncio.create_task(self._checking_commits())
        log.info("consumer_started", consumer=self.name)
        self._not_reading.clear()
        outage = Outage("consumer_read_failed", cap=5.0, consumer=self.name)
        try:
            while not self._stopping.is_set():
                await self._slots.acquire()
                self._slots.release()
                free = self._concurrency - len(self._inflight)
                self._read = asyncio.ensure_future(
                    self._bus.read(self.name, max(1, free), block_ms=500)
                )
                try:
                    deliveries = await self._read
                except asyncio.CancelledError:
                    if self._stopping.is_set():
                        break  # stop() cut the blocked read short; anything it got stays pending
                    raise
                except (RedisError, OSError) as exc:
                    self._refused_for_good(exc)
                    if "NOGROUP" in str(exc):  # Redis is back without the stream (empty, flushed)
                        with contextlib.suppress(RedisError, OSError):
                            await self._join()
                            log.warning("consumer_rejoined", consumer=self.name)
                            continue
                    await outage.wait(exc)
                    continue
                outage.over()
                if self._stopping.is_set():
                    break  # read while stopping: left pending, another worker claims them
                if self._refusal is not None:  # an event's last step: no other's can work
                    self._refused_for_good(self._refusal)  # what was read stays pending
                for delivery in deliveries:
                    self._start(delivery)
        finally:
            await cancel_and_wait(checking)
            await cancel_and_wait(housekeeping)
            if not self._stopping.is_set():
                await self._stop_heartbeats()  # else stop() keeps them while events finish
            self._not_reading.set()

    async def stop(self, grace_seconds: float = 10.0) -> None:
        """Stop reading; let in-flight events finish for ``grace_seconds``, then hand them back.

        An event cut off here was never acknowledged: it stays pending and another
        worker claims it.
        """
        self._stopping.set()
        if self._read is not None:
            self._read.cancel()
        deadline = time.monotonic() + grace_seconds
        with contextlib.suppress(TimeoutError):  # the read loop ends within one blocked read
            await asyncio.wait_for(self._not_reading.wait(), grace_seconds)
        if self._inflight:
            _, unfinished = await asyncio.wait(
                set(self._inflight.values()), timeout=max(0.0, deadline - time.monotonic())
            )
            await asyncio.gather(*(cancel_and_wait(task) for task in unfinished))
            if unfinished:
                log.warning("consumer_handed_back", consumer=self.name, events=len(unfinished))
        await self._stop_heartbeats()
        await self._leave()

    async def _joined(self) -> bool:
        """Join the consumer group, waiting out a Redis that is away or refuses writes (out of
        memory: even a group that exists is not joined then); False if stopped first."""
        outage = Outage("consumer_join_failed", cap=5.0, consumer=self.name)
        while not self._stopping.is_set():
            try:
                await self._join()
            except (RedisError, OSError) as exc:
                self._refused_for_good(exc)
                await outage.wait(exc)
                continue
            outage.over()
            return True
        return False

    async def _join(self) -> None:
        await self._bus.join(self.name)
        self._digest_key = await self._bus.log.digest_key()  # an emptied Redis makes another

    async def _leave(self) -> None:
        try:
            await self._bus.leave(self.name)
        except RedisError as exc:
            log.warning("consumer_leave_failed", consumer=self.name, error=str(exc))

    def _start(self, delivery: Delivery) -> None:
        if delivery.stream_id in self._inflight:
            return  # claimed back while our own run of it is still going
        if self._refusal is not None:
            return  # no event can finish here: it stays pending for a worker Redis lets
        context, ended = event_started()  # its file jobs know it runs from now
        task = asyncio.create_task(self._guarded(delivery), context=context)
        self._inflight[delivery.stream_id] = task
        self._held_since[delivery.stream_id] = time.monotonic()

        def done(_: asyncio.Task[None], stream_id: str = delivery.stream_id) -> None:
            ended()
            if self._inflight.get(stream_id) is task:
                del self._inflight[stream_id]
                self._held_since.pop(stream_id, None)

        task.add_done_callback(done)

    async def _guarded(self, delivery: Delivery) -> None:
        async with self._slots:
            try:
                await self._process(delivery)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis gone mid-finish: the event stays pending
                log.error("event_unfinished", stream_id=delivery.stream_id, error=repr(exc))
                if self._exit_when_refused and refused_user(exc):
                    self._refusal = exc
                elif delivery.deliveries >= self._max_deliveries and not _redis_trouble(exc):
                    await self._park_unfinished(delivery, exc)

    async def _park_unfinished(self, delivery: Delivery, exc: Exception) -> None:
        """Park an event whose own record or reply could not be finished, delivery after
        delivery (a value Redis cannot take, a defect): under a record that names nothing of
        it but its stream id, so that it stops coming back; its bytes are kept for a
        re-drive. Not after Redis trouble: a finish whose answer was lost may have run,
        and parking would run the event again on a re-drive; the event stays pending."""
        error = f"cannot finish: {exc!r}"
        record = LogRecord(
            outcome="dead",
            type="?",
            event_id=delivery.stream_id,
            user_id="",
            agent_id="",
            thread_id="",
            detail={"error": error, "worker": self.name, "deliveries": delivery.deliveries},
        )
        try:
            dead = {"error": error, "event_id": delivery.stream_id}
            if await self._finish(delivery, record, reply_to=None, reply=None, dead=dead):
                telemetry.current().event_done("?", "dead", 0.0)
        except Exception as again:
            log.error("event_not_parked", stream_id=delivery.stream_id, error=repr(again))

    def _refused_for_good(self, exc: BaseException) -> None:
        """End the run when Redis refuses this worker's user (an ACL, credentials, a command
        it lacks), if asked to: a worker that cannot join, read or finish any event should
        exit and say why, not retry for ever (a finish refused midway, after its log
        record, would add one every retry). A key of another type is one event's matter."""
        if self._exit_when_refused and refused_user(exc):
            raise MemoryMisconfiguredError(f"Redis refuses this worker: {exc}") from exc

    async def _heartbeats(self) -> None:
        """Every heartbeat: say this worker is alive, and keep the events it runs."""
        beats = Failures("beat_failed", consumer=self.name)
        held = Failures("heartbeat_failed", consumer=self.name)
        while True:
            try:
                await self._bus.beat(self.name)
                beats.over()
            except Exception as exc:  # readiness falls back on the worker's reads
                beats.note(exc)
            await asyncio.sleep(self._heartbeat)
            try:
                await self._keep_held()
                held.over()
            except Exception as exc:
                held.note(exc)

    async def _stop_heartbeats(self) -> None:
        if self._beating is not None:
            await cancel_and_wait(self._beating)
            self._beating = None

    async def _housekeeping(self) -> None:
        failures = Failures("housekeeping_failed", consumer=self.name)
        while True:
            await asyncio.sleep(self._heartbeat)
            try:
                stale = await self._bus.claim_stale(
                    self.name, self._claim_idle_ms, 50, running=self._inflight.keys()
                )
                for delivery in stale:
                    log.warning(
                        "event_claimed",
                        stream_id=delivery.stream_id,
                        deliveries=delivery.deliveries,
                        consumer=self.name,
                    )
                    self._start(delivery)
                await self._bus.log.trim_by_age()
                failures.over()
            except Exception as exc:
                failures.note(exc)
            # another after Redis restarted empty, made by whichever worker rejoined first;
            # one not read now (Redis away) is read at the next beat
            with contextlib.suppress(RedisError, OSError):
                self._digest_key = await self._bus.log.digest_key()

    async def _checking_commits(self) -> None:
        failures = Failures("due_commit_checks_failed", consumer=self.name)
        while True:
            await asyncio.sleep(self._heartbeat)
            try:
                await self._rt.check_due_commits()
                failures.over()
            except Exception as exc:
                failures.note(exc)

    async def _keep_held(self) -> None:
        """Refresh the events in flight; drop the runs of any another worker took over."""
        running = dict(self._inflight)
        asked = time.monotonic()
        still_mine = await self._bus.refresh(self.name, list(running))
        for stream_id in still_mine:
            if self._inflight.get(stream_id) is running.get(stream_id):
                self._held_since[stream_id] = asked
        for stream_id, task in running.items():
            if stream_id not in still_mine and not task.done():
                # Acknowledged a moment ago, or claimed by another worker while this one
                # stalled: in both cases this run has nothing left to do.
                log.warning("event_taken_over", stream_id=stream_id, consumer=self.name)
                task.cancel()

    async def _process(self, delivery: Delivery) -> None:
        started = time.perf_counter()
        try:
            event = decode(delivery.raw)
        except InvalidEvent as invalid:
            await self._invalid(delivery, invalid)
            return
        except Exception as exc:  # whatever else decoding trips on: parked, never redelivered
            await self._invalid(delivery, InvalidEvent(f"cannot decode: {exc!r}", delivery.raw))
            return
        # every line this event's run logs names it (each delivery runs in its own task)
        structlog.contextvars.bind_contextvars(
            event_id=event.id,
            event_type=event.type,
            user_id=event.user_id,
            agent_id=event.agent_id,
            thread_id=event.thread_id,
        )
        base = {"worker": self.name, "deliveries": delivery.deliveries}
        if delivery.deliveries > 1 and _expired(event):
            record = self._record(event, "expired", base)
            finished = await self._finish(delivery, record, reply_to=None, reply=None)
            telemetry.current().event_done(event.type, "expired" if finished else "taken_over", 0)
            return
        try:
            # one thread's events run in the order they arrived: turn N+1 never overtakes N
            async with self._threads.turn(f"{event.user_id}/{event.agent_id}/{event.thread_id}"):
                # an event that waited out a stall for its turn may be another worker's by now
                if not await self._still_held(delivery):
                    telemetry.current().event_done(event.type, "taken_over", 0.0)
                    return
                async with asyncio.timeout(self._event_timeout):
                    handled = await self._handlers.handle(event)
        except Exception as exc:
            outcome = await self._failed(delivery, event, exc, base)
            telemetry.current().event_done(event.type, outcome, time.perf_counter() - started)
            return
        if not await self._still_held(delivery):  # another worker took it over: it answers
            telemetry.current().event_done(event.type, "taken_over", time.perf_counter() - started)
            return
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        # a request answered with a refusal (its reply says why) is not counted as done
        answered = "refused" if "refused" in handled.detail else "ok"
        record = self._record(event, answered, {**base, "ms": elapsed, **handled.detail})
        reply_to = self._inbox(event.reply_to)
        wants_reply = reply_to is not None and handled.reply is not None
        reply = {"id": event.id, "ok": True, **(handled.reply or {})} if wants_reply else None
        if handled.after_reply:
            if reply_to is not None and reply is not None:
                await self._bus.reply(reply_to, reply)  # the caller does not wait for these
                reply = None
            for action in handled.after_reply:  # before the ack: a crash here is redelivered
                await action()
        finished = await self._finish(delivery, record, reply_to=reply_to, reply=reply)
        outcome = answered if finished else "taken_over"
        telemetry.current().event_done(event.type, outcome, time.perf_counter() - started)

    async def _still_held(self, delivery: Delivery) -> bool:
        """Whether this worker still holds ``delivery``, asking Redis only when it may not.

        Another worker claims an event only after ``claim_idle`` without a refresh, so one
        this worker read, claimed or refreshed within half of that is still its own: the
        question costs a round trip only after a stall that kept the heartbeat away. A
        positive answer refreshes the event, so it stays this worker's for another
        ``claim_idle``: both runs of one event finish only if a worker stalls that long
        between this check and its finish.
        """
        stream_id = delivery.stream_id
        since = self._held_since.get(stream_id)
        if since is not None and time.monotonic() - since < self._claim_idle_ms / 2000:
            return True
        asked = time.monotonic()
        if stream_id in await self._bus.refresh(self.name, [stream_id]):
            self._held_since[stream_id] = asked
            return True
        log.warning("event_taken_over", stream_id=stream_id, consumer=self.name)
        return False

    async def _finish(
        self,
        delivery: Delivery,
        record: LogRecord,
        *,
        reply_to: str | None,
        reply: dict[str, Any] | None,
        dead: dict[str, Any] | None = None,
    ) -> bool:
        """Reply, log and acknowledge (see :meth:`EventBus.finish`) if this worker still holds
        the event; ``False`` when another worker took it over, which answers and logs it."""
        if not await self._still_held(delivery):
            return False
        await self._bus.finish(delivery, record, reply_to=reply_to, reply=reply, dead=dead)
        return True

    async def _failed(
        self, delivery: Delivery, event: Event, exc: Exception, base: dict[str, Any]
    ) -> str:
        """Record the failure; the outcome: ``error`` (delivered again later), ``dead``, or
        ``taken_over`` (another worker claimed the event while this run stalled)."""
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        # a failure a retry cannot fix is answered at once instead of redelivered
        final = not is_retryable(exc) or delivery.deliveries >= self._max_deliveries
        log.error("event_failed", event_id=event.id, type=event.type, error=error, final=final)
        if not await self._still_held(delivery):
            return "taken_over"  # the worker that took it over records what becomes of it
        if not final:
            await self._bus.log.append(self._record(event, "error", {**base, "error": error}))
            return "error"  # left pending: claimed and retried after claim_idle
        reply_to = self._inbox(event.reply_to)
        told, parked = error, False
        if isinstance(event, MemoryWriteEvent | EntryEditEvent):  # its outcome may be looked up
            told, parked = replies.parked(error), True  # a re-drive may apply it: never "retry"
            target = (
                event.payload.target
                if isinstance(event, EntryEditEvent)
                else _target_of(event.payload.args)
            )
            receipt = Receipt({"success": False, "error": told, "parked": True}, target, [])
            await self._rt.receipts.for_event(event.user_id, event.id).record(receipt)
        reply = None
        if reply_to:
            reply = {"id": event.id, "ok": False, "error": told}
            if parked:
                reply["parked"] = True  # not a failure to retry: its outcome is not final
        if not await self._finish(
            delivery,
            self._record(event, "dead", {**base, "error": error}),
            reply_to=reply_to,
            reply=reply,
            dead={"error": error, "event_id": event.id},
        ):
            return "taken_over"
        return "dead"

    async def _invalid(self, delivery: Delivery, invalid: InvalidEvent) -> None:
        log.warning("event_invalid", stream_id=delivery.stream_id, reason=invalid.reason)
        reply_to = self._inbox(invalid.field("reply_to"))
        event_id = invalid.field("id") or delivery.stream_id
        record = LogRecord(
            outcome="invalid",
            type=invalid.field("type") or "?",
            event_id=event_id,
            user_id=invalid.field("user_id") or "",
            agent_id=invalid.field("agent_id") or "",
            thread_id=invalid.field("thread_id") or "",
            detail={
                "error": invalid.reason,
                "raw": self._raw_logged(delivery.raw),
                "worker": self.name,
            },
        )
        reply = {"id": event_id, "ok": False, "error": f"invalid event: {invalid.reason}"}
        finished = await self._finish(
            delivery,
            record,
            reply_to=reply_to,
            reply=reply if reply_to else None,
            dead={"error": invalid.reason, "event_id": event_id},
        )
        # its type names nothing known
        telemetry.current().event_done("?", "invalid" if finished else "taken_over", 0.0)

    def _raw_logged(self, raw: bytes) -> str | dict[str, Any]:
        """What the log keeps of an event it cannot read: its text (the first 4 KiB) only when
        ``log_turn_text`` asks for turn text, since a turn a client shaped otherwise (another
        version) is still the conversation; else its length and digest. The dead-event list
        keeps the bytes, for a re-drive."""
        text = raw.decode("utf-8", "replace")
        if self._rt.settings.log_turn_text:
            return text[:4096]
        return text_summary(text, self._digest_key)

    def _inbox(self, reply_to: str | None) -> str | None:
        """Replies go to client inboxes only, never to a key an event happens to name."""
        if reply_to is not None and reply_to.startswith(self._rt.keys.inbox("")):
            return reply_to
        return None

    def _record(self, event: Event, outcome: str, detail: dict[str, Any]) -> LogRecord:
        logged = event.model_dump(mode="json")
        texts = CONVERSATION_TEXT.get(type(event), ())
        if texts and not self._rt.settings.log_turn_text:
            payload = event.payload
            logged["payload"] = {
                **logged["payload"],
                **{name: text_summary(getattr(payload, name), self._digest_key) for name in texts},
            }
        return LogRecord(
            outcome=outcome,
            type=event.type,
            event_id=event.id,
            user_id=event.user_id,
            agent_id=event.agent_id,
            thread_id=event.thread_id,
            event=logged,
            detail=detail,
        )


def _expired(event: Event) -> bool:
    """A request only its caller wanted, whose caller stopped waiting (its deadline passed)."""
    return event.type in ANSWER_ONLY and event.deadline is not None and event.deadline < time.time()


def _target_of(args: Any) -> Target:
    """The file a ``memory`` call's arguments name (the tool's default when none or another)."""
    return target_named(args.get("target") if isinstance(args, dict) else None)


def _redis_trouble(exc: Exception) -> bool:
    """Redis away, or an answer of its: what a finish met may have been run in part."""
    return isinstance(exc, (*REDIS_DOWN, RedisError))
